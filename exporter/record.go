package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/sdkspan"
)

// recordWriter is the part shared by DurableProcessor and Exporter: the SDK span's view handed to
// the capture span writer, and the outcome logged.
type recordWriter struct {
	w      *capture.Writer
	logger *slog.Logger
	// forward, when set, makes the record of s durable by a synchronous export to a capture
	// Collector (forward.go) instead of the local store's append. The store always receives the
	// markers.
	forward func(ctx context.Context, s sdktrace.ReadOnlySpan) error
	checked *capture.CheckedBodies // WithCheckedBodies; nil checks every payload
}

func newRecordWriter(store *capture.Store, cfg config) (*recordWriter, error) {
	if store == nil {
		return nil, errors.New("exporter: capture store is nil")
	}
	w, err := capture.NewWriter(store, capture.ModelCallLines{}, capture.WithMeterProvider(cfg.meterProvider))
	if err != nil {
		return nil, fmt.Errorf("exporter: %w", err)
	}
	return &recordWriter{w: w, logger: cfg.logger, checked: cfg.checked}, nil
}

// write writes the record of s when it is a model-call span. It returns the error of a record not
// written (its rollout marked incomplete).
func (w *recordWriter) write(ctx context.Context, s sdktrace.ReadOnlySpan) error {
	v := sdkspan.FromReadOnly(s)
	w.checked.SetChecked(&v)
	var r capture.Result
	if w.forward == nil {
		r = w.w.Write(ctx, &v)
	} else {
		r = w.w.Forward(ctx, &v, func(ctx context.Context) error { return w.forward(ctx, s) })
	}
	return w.report(r, &v)
}

// fail accounts for model-call span s that is not written because of cause; it returns the error.
func (w *recordWriter) fail(ctx context.Context, s sdktrace.ReadOnlySpan, cause error) error {
	v := sdkspan.FromReadOnly(s)
	return w.report(w.w.Discard(ctx, &v, cause), &v)
}

// abandon accounts for model-call span s whose record its producer gave up on (see
// [DurableProcessor.Abandon]); it returns the marker's error.
func (w *recordWriter) abandon(s sdktrace.ReadOnlySpan, cause error) error {
	v := sdkspan.FromReadOnly(s)
	r := w.w.Discard(context.Background(), &v, cause)
	_ = w.report(r, &v) // a failed outcome: logged as a record not written
	return r.MarkErr
}

// drop handles a span that arrives after Shutdown; it reports whether it was a model-call span.
func (w *recordWriter) drop(s sdktrace.ReadOnlySpan) bool {
	v := sdkspan.FromReadOnly(s)
	r := w.w.Discard(context.Background(), &v, errShutdown)
	if r.Outcome == capture.OutcomeIgnored {
		return false
	}
	w.logMarkErr(r)
	w.logger.Error("gymtrace capture: model-call span ended after shutdown; record not written"+capture.MarkedSuffix(r),
		"rollout_id", r.RolloutID, "span_id", v.SpanID.String())
	return true
}

// report logs r (the writer counted it); it returns the error of a record not written.
func (w *recordWriter) report(r capture.Result, v *capture.Span) error {
	w.logMarkErr(r)
	switch r.Outcome {
	case capture.OutcomePartial:
		w.logger.Warn("gymtrace capture: record written with a cut payload set to null; marking the rollout incomplete",
			"rollout_id", r.RolloutID, "span_id", v.SpanID.String(), "problems", r.Err.Error())
	case capture.OutcomeWrittenDirUnsynced:
		w.logger.Warn("gymtrace capture: record written and fsynced, but its new capture file's directory entry may not survive a power loss (directory fsync failed)",
			"rollout_id", r.RolloutID, "span_id", v.SpanID.String(), "error", r.Err.Error())
	case capture.OutcomeRejected, capture.OutcomeFailed:
		err := fmt.Errorf("exporter: %w", r.Err)
		w.logger.Error("gymtrace capture: record not written"+capture.MarkedSuffix(r),
			"rollout_id", r.RolloutID, "span_id", v.SpanID.String(), "error", err)
		return err
	}
	return nil
}

// logMarkErr logs a failed incomplete marker (SPEC §2.6): the loss is then invisible to readers.
func (w *recordWriter) logMarkErr(r capture.Result) {
	if r.MarkErr != nil {
		w.logger.Error("gymtrace capture: mark incomplete failed", "rollout_id", r.RolloutID, "error", r.MarkErr)
	}
}
