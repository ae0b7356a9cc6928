package rollouts

import "time"

// Defaults of [Options]: progress every 10000 rows or 5 s.
const (
	DefaultProgressRows     = 10000
	DefaultProgressInterval = 5 * time.Second
)

// Options configures [Attach]. The zero value attaches without payloads and reports no progress.
type Options struct {
	// IncludePayloads keeps request, response, request_raw and response_raw in every attached call
	// (SPEC §5.1), except for a row whose ng_trajectory or ng_agent_observations "gaps" list holds
	// an object with code "multimodal_history_redacted" (SPEC §5.5 step 2). Default false. With
	// Trajectory it has no effect: the payloads are then read as Gym's collector reads them.
	IncludePayloads bool

	// Trajectory runs Gym's projection after the attachment and the join (SPEC §5.5 steps 2–3,
	// §5.6): the calls are attached with payloads (unless the row has the redaction gap), the row
	// gets ng_trajectory, and on success the payloads move there (the attached calls drop
	// request, response, request_raw and response_raw); on failure the row carries the
	// trajectory_projection_failed gap instead (see [agentobs.AttachTrajectory]). Default false
	// (the CLI turns it on unless --no-trajectory).
	Trajectory bool
	// Inputs, with Trajectory, are the run's dispatched input rows: a row's trajectory task_id is
	// read from its input row (joined by _ng_task_index and _ng_rollout_index) rather than from
	// the result line, which may not echo task_id, problem_id or instance_id (SPEC §5.6
	// "Identity"). nil: the line's own keys.
	Inputs *InputRows

	// Tokens, when not nil, finalizes the rows' token captures after the projection (docs/TOKENS.md
	// §0 T6, [TokenOptions]). Default nil: token captures are not touched.
	Tokens *TokenOptions

	// OnProgress, when not nil, is called from Attach's goroutine after a row has been written once
	// ProgressRows rows (0 or less: DefaultProgressRows) were read since the last call or
	// ProgressInterval (0 or less: DefaultProgressInterval) has passed since the last call (or the
	// start), whichever comes first. It must not block for long: Attach waits for it.
	OnProgress       func(Progress)
	ProgressRows     int
	ProgressInterval time.Duration

	// ClaudeCodeDirKey, when not empty, names a row key whose string value is the path of the
	// rollout's CLAUDE_CONFIG_DIR: a row without ng_agent_observations of its own gets the bundle
	// Gym's Claude Code agent would produce from that directory ([claudecode.Observe], SPEC §6.3,
	// §6.4), joined with the calls like any other (§5.4, with the compaction resolver of §6.6).
	// Such a directory wins over the rollout's observations file. Default "" (off).
	ClaudeCodeDirKey string
	// ClaudeCodeModelServerName is the model server the Claude Code transcripts' calls went to (their
	// refs' model_ref.name, SPEC §6.4); "" adds the gap model_call_ownership_unavailable (§6.3).
	ClaudeCodeModelServerName string
	// ClaudeCodeMaxTranscriptBytes bounds one transcript of those directories (claudecode.Options
	// MaxTranscriptBytes, SPEC §0 D16); 0 means claudecode.DefaultMaxTranscriptBytes (256 MiB).
	ClaudeCodeMaxTranscriptBytes int64
}

// Progress is what [Options].OnProgress receives: the counts so far (see [Summary]), the bytes of
// the rollouts input read so far (line terminators included), the bytes of the capture files read
// for the attached rows so far (Summary.CaptureBytes) and the time since Attach started.
type Progress struct {
	Rows         int
	Attached     int
	Unchanged    int
	Malformed    int
	Bytes        int64
	CaptureBytes int64
	Elapsed      time.Duration
}
