package claudecode

import (
	"fmt"
	"math"
	"time"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
)

// Options describe the Claude Code run whose CLAUDE_CONFIG_DIR is read (SPEC §6.3, §6.4). The zero
// value is valid for [Extract]: no model server, root status unknown, no duration, no attempts.
type Options struct {
	// RolloutID is the rollout the run belongs to (SPEC §1). [Observe] requires it (Gym emits
	// observations only for correlated runs, SPEC §6.3) and checks it as a capture file name
	// (capture.ValidateRolloutID); [Extract] checks it only when set. It is not written into the
	// bundle, which has no rollout key (SPEC §6.2).
	RolloutID string

	// ModelServerName names the model server the CLI called through the capture proxy (Gym's
	// model_server). When set, each new assistant message id becomes a ModelCallRef
	// {model_call_id: null, model_ref: {type: "responses_api_models", name}, response_id}; when
	// empty, no refs are produced (and [Observe] adds gap model_call_ownership_unavailable).
	ModelServerName string

	// RootStatus is the root invocation's status (SPEC §6.3; see [Run.Apply]). "" means
	// agentobs.InvocationStatusUnknown; any value outside the four statuses is an error.
	RootStatus agentobs.InvocationStatus

	// RootErrorType is the root invocation's error_type (e.g. "timeout", "process_exit_1"); nil
	// is null.
	RootErrorType *string

	// RootDurationMS is the root invocation's duration in milliseconds (the CLI result's
	// duration_ms, else the measured process time); nil is null. It must be finite and >= 0.
	RootDurationMS *float64

	// CompactionAttempts are compactions the CLI reported on its stream (SPEC §6.3; see
	// [Run.Apply]). Each attempt with a non-empty InvocationID and an Outcome of failed, aborted or
	// unknown ("" counts as unknown) becomes a compaction record with only those two fields set;
	// others are ignored, as in the reference.
	CompactionAttempts []CompactionAttempt

	// MaxTranscriptBytes bounds the size of one transcript file (SPEC §0 D16): a larger one, also
	// one that grows past it while it is read, is refused with a [*TranscriptError]. 0 means
	// [DefaultMaxTranscriptBytes]; a negative value is an error.
	MaxTranscriptBytes int64

	// Location is the time zone for transcript timestamps without a UTC offset. Python reads them
	// in the machine's local zone (SPEC §9 #14); nil means time.Local, the same thing. Claude Code
	// writes UTC ("...Z") timestamps, so it rarely matters.
	Location *time.Location
}

// DefaultMaxTranscriptBytes is the bound on one transcript file when Options.MaxTranscriptBytes is 0:
// 256 MiB (SPEC §0 D16).
const DefaultMaxTranscriptBytes = 256 << 20

// CompactionAttempt is one compaction the CLI's stream-json reported (SPEC §6.3): the session
// (invocation) that compacted and how the attempt ended.
type CompactionAttempt struct {
	InvocationID string                     // the session id
	Outcome      agentobs.CompactionOutcome // failed, aborted or unknown (still compacting at the end)
}

// validate checks the options, naming the field and the rule.
func (o Options) validate() error {
	if o.RolloutID != "" {
		if err := capture.ValidateRolloutID(o.RolloutID); err != nil {
			return fmt.Errorf("claudecode: options: RolloutID: %w", err)
		}
	}
	switch o.RootStatus {
	case "", agentobs.InvocationStatusCompleted, agentobs.InvocationStatusFailed,
		agentobs.InvocationStatusIncomplete, agentobs.InvocationStatusUnknown:
	default:
		return fmt.Errorf("claudecode: options: RootStatus %q: want completed, failed, incomplete or unknown (SPEC §6.2)", o.RootStatus)
	}
	if d := o.RootDurationMS; d != nil && (math.IsNaN(*d) || math.IsInf(*d, 0) || *d < 0) {
		return fmt.Errorf("claudecode: options: RootDurationMS %v: want a finite number >= 0 (SPEC §6.2)", *d)
	}
	if o.MaxTranscriptBytes < 0 {
		return fmt.Errorf("claudecode: options: MaxTranscriptBytes %d: want 0 (the default, %d) or more bytes (SPEC §0 D16)", o.MaxTranscriptBytes, DefaultMaxTranscriptBytes)
	}
	return nil
}

// maxTranscriptBytes returns MaxTranscriptBytes with 0 read as the default.
func (o Options) maxTranscriptBytes() int64 {
	if o.MaxTranscriptBytes == 0 {
		return DefaultMaxTranscriptBytes
	}
	return o.MaxTranscriptBytes
}

// rootStatus returns RootStatus with "" read as unknown.
func (o Options) rootStatus() agentobs.InvocationStatus {
	if o.RootStatus == "" {
		return agentobs.InvocationStatusUnknown
	}
	return o.RootStatus
}

// modelRef returns the ModelServerRef for ModelServerName, or nil.
func (o Options) modelRef() *agentobs.ModelServerRef {
	if o.ModelServerName == "" {
		return nil
	}
	return &agentobs.ModelServerRef{Type: agentobs.ModelRefTypeResponsesAPIModels, Name: o.ModelServerName}
}
