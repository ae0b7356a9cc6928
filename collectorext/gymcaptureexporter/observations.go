package gymcaptureexporter

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/gymtrace/gymtrace/capture"
)

// observationOutcome logs the writer's result for an observation span (agentobs.ObservationLines:
// the same line the SDK's agentobs.ObservationProcessor writes for the same span, appended to
// <capture_dir>/<rollout_id>.observations.jsonl) and returns its outcome and error.
//
// Outcomes: written (or already in the file: a retry appends nothing); rejected, with a permanent
// error, when the rollout id is not a safe file name (SPEC §2.2); written_dir_unsynced (logged, no
// error: the line is there, only the directory fsync failed); failed, retryable, when the line
// was not written because of an I/O error or because ctx ended before it was started. Observation
// failures mark nothing: the incomplete marker speaks for the capture file only.
func (e *captureExporter) observationOutcome(r capture.Result, v *capture.Span) (capture.Outcome, error) {
	sid := zap.String("span_id", v.SpanID.String())
	switch r.Outcome {
	case capture.OutcomeRejected:
		err := observationError{fmt.Errorf("gymcapture: observation span: %w", r.Err)}
		e.logger.Error("gymcapture: observation span rejected; observation not written", sid, zap.Error(err))
		return r.Outcome, err
	case capture.OutcomeFailed:
		err := fmt.Errorf("gymcapture: %w", r.Err)
		e.logger.Error("gymcapture: observation line not written (will be retried if retries are enabled)",
			zap.String("rollout_id", r.RolloutID), sid, zap.Error(err))
		return r.Outcome, err
	case capture.OutcomeWrittenDirUnsynced:
		e.logger.Warn("gymcapture: observation line written and fsynced, but its new file's directory entry may not survive a power loss (directory fsync failed)",
			zap.String("rollout_id", r.RolloutID), sid, zap.Error(r.Err))
	}
	return r.Outcome, nil
}

// observationError marks the error of a rejected observation span, so that a push's error can
// count rejected model-call and observation spans apart.
type observationError struct{ err error }

func (o observationError) Error() string { return o.err.Error() }
func (o observationError) Unwrap() error { return o.err }
