package rollouts

import "time"

// Defaults of [Options].
const (
	// DefaultProgressRows is the default of Options.ProgressRows.
	DefaultProgressRows = 10000
	// DefaultProgressInterval is the default of Options.ProgressInterval.
	DefaultProgressInterval = 5 * time.Second
)

// Options configures [Attach]. The zero value attaches without payloads and reports no progress.
type Options struct {
	// IncludePayloads keeps request, response, request_raw and response_raw in every attached call
	// (SPEC §5.1). Even when true, a row whose ng_trajectory or ng_agent_observations "gaps" list holds
	// an object with code "multimodal_history_redacted" gets no payloads (SPEC §5.5 step 2).
	// Default false.
	IncludePayloads bool

	// OnProgress, when not nil, is called from Attach's goroutine after a row has been written once
	// ProgressRows rows were read since the last call or ProgressInterval has passed since the last
	// call (or the start), whichever comes first. It must not block for long: Attach waits for it.
	OnProgress func(Progress)

	// ProgressRows is the number of rows between two OnProgress calls; 0 or less means
	// DefaultProgressRows (10000).
	ProgressRows int

	// ClaudeCodeDirKey, when not empty, names a row key whose string value is the path of the
	// rollout's CLAUDE_CONFIG_DIR: a row without ng_agent_observations of its own gets the bundle
	// Gym's Claude Code agent would produce from that directory ([claudecode.Observe], SPEC §6.3,
	// §6.4), joined with the calls like any other (§5.4, with the compaction resolver of §6.6).
	// Such a directory wins over the rollout's observations file. Default "" (off).
	ClaudeCodeDirKey string
	// ClaudeCodeModelServerName is the model server the Claude Code transcripts' calls went to (their
	// refs' model_ref.name, SPEC §6.4); "" adds the gap model_call_ownership_unavailable (§6.3).
	ClaudeCodeModelServerName string

	// ProgressInterval is the longest time between two OnProgress calls while rows are being read;
	// 0 or less means DefaultProgressInterval (5s).
	ProgressInterval time.Duration
}

// Progress is what [Options].OnProgress receives: the counts so far (see [Summary] for their meaning),
// the input bytes read so far and the time since Attach started.
type Progress struct {
	Rows      int
	Attached  int
	Unchanged int
	Malformed int
	Bytes     int64         // input bytes read so far, line terminators included
	Elapsed   time.Duration // since Attach started
}
