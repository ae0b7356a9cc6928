package sdk

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"go.opentelemetry.io/otel/trace"
)

// ErrInvalidRunID is matched (errors.Is) by every error reporting a run id that breaks the rule of
// [ValidateRunID].
var ErrInvalidRunID = errors.New("invalid run id")

// ValidateRunID checks a run id (issue 3 part 8, "run namespaces"): the same rule as a prefix rollout
// id (SPEC §0 D12, [ValidatePrefixID]): it must fully match RolloutIDPattern
// (^[A-Za-z0-9][A-Za-z0-9._-]*$, so never "", "." or "..", never a "/") and be at most
// MaxRolloutIDBytes bytes long. An id that passes is a safe directory name. The error names the id
// (Go %q) and the rule, and matches ErrInvalidRunID. The empty run id means "no run namespace" to
// every function that takes one, but is refused here: call ValidateRunID only for a run id given.
func ValidateRunID(runID string) error {
	switch {
	case len(runID) > MaxRolloutIDBytes:
		return fmt.Errorf("%w %q: longer than %d bytes (%d)", ErrInvalidRunID, runID, MaxRolloutIDBytes, len(runID))
	case !matchRolloutIDPattern(runID):
		return fmt.Errorf("%w %q: must match %s (a letter or digit, then letters, digits, dots, dashes or underscores)", ErrInvalidRunID, runID, RolloutIDPattern)
	}
	return nil
}

// RunCaptureDir returns the capture directory of a run: dir itself when runID is "" (Gym's layout,
// unchanged), else dir/runID (filepath.Join), so that concurrent runs writing the same rollout ids
// never share a capture file. A non-empty runID must pass [ValidateRunID]; the error wraps its error.
// The directory is not created or examined.
func RunCaptureDir(dir, runID string) (string, error) {
	if runID == "" {
		return dir, nil
	}
	if err := ValidateRunID(runID); err != nil {
		return "", fmt.Errorf("run capture dir: %w", err)
	}
	return filepath.Join(dir, runID), nil
}

// runRolloutKey is the string hashed after "gymtrace/rollout/" for a rollout of a run: the rollout id
// alone without a run (the formula of RolloutTraceID, unchanged), else "<run>/<id>".
func runRolloutKey(runID, rolloutID string) string {
	if runID == "" {
		return rolloutID
	}
	return runID + "/" + rolloutID
}

// RolloutTraceIDInRun is [RolloutTraceID] inside a run namespace: the first 16 bytes of
// SHA-256("gymtrace/rollout/" + runID + "/" + rolloutID), so the same rollout id in two runs gives two
// traces. With runID "" it equals RolloutTraceID(rolloutID). Ids are used as given (no validation);
// validated ids (no "/" in either) never collide across runs.
func RolloutTraceIDInRun(runID, rolloutID string) trace.TraceID {
	return RolloutTraceID(runRolloutKey(runID, rolloutID))
}

// RolloutRootSpanIDInRun is [RolloutRootSpanID] inside a run namespace: bytes 16–23 of
// SHA-256("gymtrace/rollout/" + runID + "/" + rolloutID). With runID "" it equals
// RolloutRootSpanID(rolloutID).
func RolloutRootSpanIDInRun(runID, rolloutID string) trace.SpanID {
	return RolloutRootSpanID(runRolloutKey(runID, rolloutID))
}

// RolloutSpanContextInRun is [RolloutSpanContext] inside a run namespace: RolloutTraceIDInRun,
// RolloutRootSpanIDInRun, sampled, remote, no trace state.
func RolloutSpanContextInRun(runID, rolloutID string) trace.SpanContext {
	return RolloutSpanContext(runRolloutKey(runID, rolloutID))
}

// ParentForModelCallInRun is [ParentForModelCall] inside a run namespace: the rollout's trace is
// RolloutTraceIDInRun(runID, rolloutID) and its root RolloutRootSpanIDInRun. With runID "" it equals
// ParentForModelCall(ctx, rolloutID).
func ParentForModelCallInRun(ctx context.Context, runID, rolloutID string) (parent context.Context, links []trace.Link) {
	return ParentForModelCall(ctx, runRolloutKey(runID, rolloutID))
}
