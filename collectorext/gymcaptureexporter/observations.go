package gymcaptureexporter

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
)

// observationOutcome logs the writer's result for an observation span (agentobs.ObservationLines:
// the same line the SDK's agentobs.ObservationProcessor writes for the same span, appended to
// <capture_dir>/<rollout_id>.observations.jsonl) and returns its outcome and error.
//
// Outcomes: written (or already in the file: a retry appends nothing); rejected, with a permanent
// error, when the rollout id is not a safe file name (SPEC §2.2); written_dir_unsynced (logged, no
// error: the line is there, only the directory fsync failed); partial (logged, no error: the line
// is written, but the span arrived without events, links or attributes its sender's span limits
// dropped, agentobs.ObservationLines); failed, retryable, when the line
// was not written because of an I/O error or because ctx ended before it was started. Observation
// failures mark nothing: the incomplete marker speaks for the capture file only.
func (e *captureExporter) observationOutcome(r capture.Result, v *capture.Span) (capture.Outcome, error) {
	sid := zap.String("span_id", v.SpanID.String())
	switch {
	case r.Outcome != capture.OutcomeWritten || r.Unattributed == "":
	case r.Unattributed == semconv.GymtraceUnattributedNoTraceID:
		e.logger.Warn("gymcapture: observation span without a valid trace id; written to "+capture.UnattributedObservationsFile,
			sid, zap.String("reason", r.Unattributed))
	default:
		e.logger.Warn("gymcapture: observation span names no rollout (no gymtrace.rollout.id on the span, its resource or its trace); written to "+capture.UnattributedObservationsFile,
			zap.String("trace_id", v.TraceID.String()), sid, zap.String("reason", r.Unattributed))
	}
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
	case capture.OutcomePartial:
		e.logger.Warn("gymcapture: observation line written without what the sender's span limits dropped (its dropped counts are in the line)",
			zap.String("rollout_id", r.RolloutID), sid, zap.Error(r.Err))
	}
	return r.Outcome, nil
}

// logDeferred logs what the observations writer did with the held spans of one trace (SPEC §0
// D18): once for the trace when they went to the unattributed file, and each span not written
// (their push was acknowledged already; one that failed on its way to its rollout's file stays
// held for the next span of the trace that names the rollout, capture.Writer).
// unattributedWhy says why held spans left the trace window for the unattributed file.
func unattributedWhy(reason string) string {
	switch reason {
	case semconv.GymtraceUnattributedWindowFull:
		return "the trace window's bounds (max_traces, max_held_spans, max_held_bytes) pushed them out"
	case semconv.GymtraceUnattributedFlushed:
		return "flushed at shutdown before any span of their trace named a rollout"
	}
	return "no span of the trace named a rollout (gymtrace.rollout.id on a span or its resource) within the trace window"
}

func (e *captureExporter) logDeferred(_ context.Context, d capture.Deferred) {
	tid := zap.String("trace_id", d.TraceID.String())
	if d.Reason != "" {
		e.logger.Warn("gymcapture: held observation spans written to "+capture.UnattributedObservationsFile+": "+unattributedWhy(d.Reason),
			tid, zap.Int("spans", len(d.Spans)), zap.String("reason", d.Reason))
	}
	for i, r := range d.Results {
		fields := []zap.Field{zap.String("rollout_id", r.RolloutID), tid, zap.String("span_id", d.Spans[i].SpanID.String()), zap.Error(r.Err)}
		switch {
		case r.Outcome == capture.OutcomeWritten:
		case r.Outcome == capture.OutcomeWrittenDirUnsynced:
			e.logger.Warn("gymcapture: held observation line written and fsynced, but its new file's directory entry may not survive a power loss (directory fsync failed)", fields...)
		case r.Outcome == capture.OutcomeFailed && d.Reason == "":
			e.logger.Error("gymcapture: held observation line not written; kept held for the next span of its trace that names the rollout", fields...)
		default:
			e.logger.Error("gymcapture: held observation line not written", fields...)
		}
	}
}

// observationError marks the error of a rejected observation span, so that a push's error can
// count rejected model-call and observation spans apart.
type observationError struct{ err error }

func (o observationError) Error() string { return o.err.Error() }
func (o observationError) Unwrap() error { return o.err }
