package rollouts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/agentobs/claudecode"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rolloutline"
)

// ObservationsReadError is the error of a row whose observations could not be read at all (an I/O
// error reading <id>.observations.jsonl, e.g. a permission error, or a Claude Code directory that
// cannot be walked): the bundle is not invalid, it is unknown. Err names the file and the cause.
type ObservationsReadError struct {
	Err error
}

// Error returns Err's message.
func (e *ObservationsReadError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *ObservationsReadError) Unwrap() error { return e.Err }

// joinObservations joins the row's ng_agent_observations with its captured calls (SPEC §5.4): the
// bundle is validated strictly ([agentobs.DecodeBundle]), joined and written back in place, dumped
// with all fields. A row without the key, or with null, takes the bundle of the Claude Code
// directory it names ([Options].ClaudeCodeDirKey), else of the rollout's observations file in the
// first store holding one ([agentobs.ReadBundle]); without either the row is left as it is and
// joined is false. Observations that cannot be read (an I/O error) are an [*ObservationsReadError]
// and leave the row as it is. An invalid bundle is an error naming the problem; the row then keeps its
// ng_agent_observations text unchanged. A Claude Code directory whose transcripts are refused
// (SPEC §0 D16) gives the row the bundle with the gap claude_code_transcript_unreadable, and the
// refusal is returned as refused.
func joinObservations(l *rolloutline.Line, id string, stores []*capture.Store, calls []capture.ModelCallRecord, opts Options) (joined bool, refused, err error) {
	raw, ok := l.Get(agentobs.AttachmentKey)
	var bundle agentobs.AgentObservationBundle
	found := true
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		bundle, found, refused, err = claudeCodeBundle(l, id, opts)
		if err == nil && !found {
			bundle, found, err = observationsFile(stores, id)
		}
		if err != nil {
			return false, nil, &ObservationsReadError{Err: err}
		}
		if !found {
			return false, nil, nil
		}
	} else if bundle, err = agentobs.DecodeBundle(raw); err != nil {
		return false, nil, fmt.Errorf("%s left unchanged: %w", agentobs.AttachmentKey, err)
	}
	var out agentobs.AgentObservationBundle
	if bundle.Source == claudecode.Source { // the compaction resolver of SPEC §6.6, then §6.5
		out, err = claudecode.JoinCalls(bundle, calls)
	} else {
		out = agentobs.Join(bundle, calls) // SPEC §6.5
	}
	var text []byte
	if err == nil {
		text, err = out.AppendJSON(nil)
	}
	if err == nil {
		err = l.Set(agentobs.AttachmentKey, text)
	}
	if err != nil {
		return false, refused, fmt.Errorf("%s left unchanged: %w", agentobs.AttachmentKey, err)
	}
	return true, refused, nil
}

// observationsFile returns the bundle of id's observations file in the first store that has one.
func observationsFile(stores []*capture.Store, id string) (agentobs.AgentObservationBundle, bool, error) {
	for _, s := range stores {
		b, found, err := agentobs.ReadBundle(s, id)
		if err != nil {
			return b, false, fmt.Errorf("observations file of %s: %w", id, err)
		}
		if found {
			return b, true, nil
		}
	}
	return agentobs.AgentObservationBundle{}, false, nil
}

// claudeCodeBundle extracts the bundle of the Claude Code config directory the row names under
// opts.ClaudeCodeDirKey; found is false when the option is off or the row has no string there. A
// refused transcript (SPEC §0 D16) is not an error: the bundle holds its gap and refused says why.
func claudeCodeBundle(l *rolloutline.Line, id string, opts Options) (b agentobs.AgentObservationBundle, found bool, refused, err error) {
	if opts.ClaudeCodeDirKey == "" {
		return b, false, nil, nil
	}
	raw, ok := l.Get(opts.ClaudeCodeDirKey)
	if !ok {
		return b, false, nil, nil
	}
	var dir string
	if err := json.Unmarshal(raw, &dir); err != nil || dir == "" {
		return b, false, nil, nil
	}
	b, err = claudecode.Observe(dir, claudecode.Options{RolloutID: id, ModelServerName: opts.ClaudeCodeModelServerName,
		MaxTranscriptBytes: opts.ClaudeCodeMaxTranscriptBytes})
	if _, ok := errors.AsType[*claudecode.TranscriptError](err); ok {
		return b, true, err, nil
	}
	if err != nil {
		return b, false, nil, fmt.Errorf("claude code directory %q of key %s: %w", dir, opts.ClaudeCodeDirKey, err)
	}
	return b, true, nil, nil
}
