package gymcaptureexporter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
)

// observationAttributes is the attribute view the observation mapping reads: spanAttributes, with
// an empty array read as an empty string slice. OTLP cannot tell an empty string slice from any
// other empty array, and the observations file writes an empty array as an empty string slice
// (agentobs.ObservationLine), so an otel-go span's empty gymtrace.model_call.ids reaches the file
// as the same [] whether it came through the SDK's processor or over OTLP.
type observationAttributes struct{ spanAttributes }

var _ capture.AttributeLookup = observationAttributes{}

// Lookup returns the value of key and whether it is present.
func (a observationAttributes) Lookup(key string) (attribute.Value, bool) {
	v, ok := a.spanAttributes.Lookup(key)
	if ok && v.Type() == attribute.SLICE && len(v.AsSlice()) == 0 {
		return attribute.StringSliceValue(nil), true
	}
	return v, ok
}

// observationSpan is the agentobs.ObservationSpan view of pdata span sp whose attribute view is
// attrs: the Collector's adapter to the one span-to-observation mapping, as
// agentobs.SpanFromReadOnly is the otel-go SDK's. Unset timestamps (0) are zero times (an end of
// 0 is a span that has not ended); the status and kind enums are translated (pdata numbers them
// differently from otel-go). Attribute values convert as spanAttributes documents.
func observationSpan(sp ptrace.Span, attrs observationAttributes) agentobs.ObservationSpan {
	v := agentobs.ObservationSpan{
		TraceID:       trace.TraceID(sp.TraceID()),
		SpanID:        trace.SpanID(sp.SpanID()),
		ParentSpanID:  trace.SpanID(sp.ParentSpanID()),
		Name:          sp.Name(),
		Kind:          otelSpanKind(sp.Kind()),
		StartTime:     timeOf(sp.StartTimestamp()),
		EndTime:       timeOf(sp.EndTimestamp()),
		StatusCode:    otelStatusCode(sp.Status().Code()),
		Attributes:    attrs,
		DroppedEvents: int(sp.DroppedEventsCount()),
		DroppedLinks:  int(sp.DroppedLinksCount()),
	}
	if evs := sp.Events(); evs.Len() > 0 {
		v.Events = make([]agentobs.SpanEvent, evs.Len())
		for i := range evs.Len() {
			e := evs.At(i)
			v.Events[i] = agentobs.SpanEvent{Name: e.Name(), Time: timeOf(e.Timestamp()),
				Attributes: observationAttributes{spanAttributes(e.Attributes())}}
		}
	}
	if links := sp.Links(); links.Len() > 0 {
		v.Links = make([]agentobs.SpanLink, links.Len())
		for i := range links.Len() {
			l := links.At(i)
			v.Links[i] = agentobs.SpanLink{TraceID: trace.TraceID(l.TraceID()), SpanID: trace.SpanID(l.SpanID()),
				Attributes: observationAttributes{spanAttributes(l.Attributes())}}
		}
	}
	return v
}

// timeOf returns ts as a time, and the zero time for an unset timestamp (0).
func timeOf(ts pcommon.Timestamp) time.Time {
	if ts == 0 {
		return time.Time{}
	}
	return ts.AsTime()
}

func otelSpanKind(k ptrace.SpanKind) trace.SpanKind {
	switch k {
	case ptrace.SpanKindInternal:
		return trace.SpanKindInternal
	case ptrace.SpanKindServer:
		return trace.SpanKindServer
	case ptrace.SpanKindClient:
		return trace.SpanKindClient
	case ptrace.SpanKindProducer:
		return trace.SpanKindProducer
	case ptrace.SpanKindConsumer:
		return trace.SpanKindConsumer
	}
	return trace.SpanKindUnspecified
}

func otelStatusCode(c ptrace.StatusCode) codes.Code {
	switch c {
	case ptrace.StatusCodeOk:
		return codes.Ok
	case ptrace.StatusCodeError:
		return codes.Error
	}
	return codes.Unset
}

// pushObservation appends the line of observation span sp (agentobs.ObservationKind over attrs)
// to its rollout's observations file, <capture_dir>/<rollout_id>.observations.jsonl, durably
// (capture.Store.AppendObservation: flock, write, fsync) before it returns: the same line the
// SDK's agentobs.ObservationProcessor writes for the same span (agentobs.NewObservationLine).
//
// Outcomes: written; ignored when the span has no non-empty string gymtrace.rollout.id (there is
// no file to write it to; logged); rejected, with a permanent error, when the rollout id is not a
// safe file name (SPEC §2.2) or fails the one id rule of SPEC §0 D12; dropped after shutdown (errShutdown); failed, retryable, when the
// line was not written because of an I/O error or because ctx ended before it was started.
// Observation failures mark nothing: the incomplete marker speaks for the capture file only.
func (e *captureExporter) pushObservation(ctx context.Context, store *capture.Store, attrs observationAttributes, sp ptrace.Span) (outcome, error) {
	rid, ok := agentobs.RolloutIDOf(attrs)
	if !ok {
		e.logger.Warn("gymcapture: observation span without a gymtrace.rollout.id; observation not written",
			zap.String("span_id", sp.SpanID().String()), zap.String("span_name", sp.Name()))
		return outcomeIgnored, nil
	}
	if err := checkRolloutID(rid); err != nil {
		err = observationError{fmt.Errorf("gymcapture: observation span: %w", err)}
		e.logger.Error("gymcapture: observation span rejected; observation not written",
			zap.String("span_id", sp.SpanID().String()), zap.Error(err))
		return outcomeRejected, err
	}
	if e.closed.Load() {
		e.logger.Error("gymcapture: observation span received after shutdown; observation not written",
			zap.String("rollout_id", rid), zap.String("span_id", sp.SpanID().String()))
		return outcomeDropped, errShutdown
	}
	if err := ctx.Err(); err != nil {
		return outcomeFailed, e.failObservation(rid, sp, fmt.Errorf("gymcapture: observation line not started: %w", err))
	}

	bp := e.bufs.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= 1<<20 {
			e.bufs.Put(bp)
		}
	}()
	line := agentobs.NewObservationLine(rid, observationSpan(sp, attrs)).AppendJSON((*bp)[:0])
	*bp = line[:0]
	if err := store.AppendObservation(context.WithoutCancel(ctx), rid, line); err != nil {
		if errors.Is(err, capture.ErrInvalidRolloutID) {
			return outcomeRejected, observationError{fmt.Errorf("gymcapture: observation span: %w", err)}
		}
		return outcomeFailed, e.failObservation(rid, sp, fmt.Errorf("gymcapture: %w", err))
	}
	return outcomeWritten, nil
}

// failObservation logs an observation line that was not written; it returns err.
func (e *captureExporter) failObservation(rid string, sp ptrace.Span, err error) error {
	e.logger.Error("gymcapture: observation line not written (will be retried if retries are enabled)",
		zap.String("rollout_id", rid), zap.String("span_id", sp.SpanID().String()), zap.Error(err))
	return err
}

// observationError marks the error of a rejected observation span, so that a push's error can
// count rejected model-call and observation spans apart.
type observationError struct{ err error }

func (o observationError) Error() string { return o.err.Error() }
func (o observationError) Unwrap() error { return o.err }
