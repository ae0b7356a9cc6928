package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/capture"
)

// Stats counts what a [DurableProcessor] or an [Exporter] did with model-call spans.
type Stats struct {
	// Records is the number of records appended durably.
	Records int64
	// Failures is the number of model-call spans whose record could not be written (the rollout
	// was marked incomplete).
	Failures int64
	// Partial is the number of records written with a payload set to null because its attribute
	// was cut or missing (its size attribute disagrees), or from a span that lost attributes to a
	// count limit (ReadOnlySpan.DroppedAttributes > 0); the rollout was marked incomplete.
	Partial int64
	// Dropped is the number of model-call spans received after Shutdown (not written; the rollout
	// was marked incomplete).
	Dropped int64
}

// droppedAttributesKey names the span's dropped attributes in a [capture.Problem].
const droppedAttributesKey = "(dropped attributes)"

// spanAttrs adapts a span's attribute slice to [capture.AttributeLookup] without allocating.
type spanAttrs []attribute.KeyValue

// Lookup returns the value of key (the last one when a key repeats).
func (a spanAttrs) Lookup(key string) (attribute.Value, bool) {
	for i := len(a) - 1; i >= 0; i-- {
		if string(a[i].Key) == key {
			return a[i].Value, true
		}
	}
	return attribute.Value{}, false
}

// maxPooledLine is the largest line buffer kept for reuse.
const maxPooledLine = 1 << 20

// spanLine reads the capture line of a model-call span (see capture.NewSpanLine).
func spanLine(attrs spanAttrs, s sdktrace.ReadOnlySpan) (*capture.SpanLine, error) {
	var traceID, spanID string
	sc := s.SpanContext()
	if sc.HasTraceID() {
		traceID = sc.TraceID().String()
	}
	if sc.HasSpanID() {
		spanID = sc.SpanID().String()
	}
	return capture.NewSpanLine(attrs, s.StartTime(), s.EndTime(), traceID, spanID)
}

// recordWriter is the part shared by DurableProcessor and Exporter: span -> line -> store.
type recordWriter struct {
	store  *capture.Store
	logger *slog.Logger
	bufs   sync.Pool
	// forward, when set, makes the record of s durable by a synchronous export to a capture
	// Collector (forward.go) instead of the local store's append. The store always receives the
	// markers.
	forward func(ctx context.Context, s sdktrace.ReadOnlySpan) error

	records, failures, partial, dropped atomic.Int64
}

func newRecordWriter(store *capture.Store, cfg config) (*recordWriter, error) {
	if store == nil {
		return nil, errors.New("exporter: capture store is nil")
	}
	w := &recordWriter{store: store, logger: cfg.logger}
	w.bufs.New = func() any { b := make([]byte, 0, 4096); return &b }
	return w, nil
}

func (w *recordWriter) stats() Stats {
	return Stats{Records: w.records.Load(), Failures: w.failures.Load(), Partial: w.partial.Load(), Dropped: w.dropped.Load()}
}

// write writes the record of s when it is a model-call span. It returns whether s was one, and the
// error of a failed write (after marking the rollout incomplete).
func (w *recordWriter) write(ctx context.Context, s sdktrace.ReadOnlySpan) (bool, error) {
	attrs := spanAttrs(s.Attributes())
	rid, ok := capture.ModelCallRollout(attrs)
	if !ok {
		return false, nil
	}
	line, err := spanLine(attrs, s)
	if err != nil {
		return true, w.fail(rid, s, fmt.Errorf("exporter: build record: %w", err))
	}
	bp := w.bufs.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= maxPooledLine {
			*bp = (*bp)[:0]
			w.bufs.Put(bp)
		}
	}()
	ctx = context.WithoutCancel(ctx)
	if w.forward == nil {
		*bp, err = w.store.AppendSpanLine(ctx, rid, line, *bp)
	} else {
		*bp = line.AppendTo((*bp)[:0]) // the payloads are checked (line.Problems) as the Collector will
		err = w.forward(ctx, s)
	}
	if err != nil {
		return true, w.fail(rid, s, fmt.Errorf("exporter: %w", err))
	}
	problems := line.Problems()
	if n := s.DroppedAttributes(); n > 0 {
		// A count limit dropped attributes: a payload and its size may be among them, so the
		// record cannot be trusted whole (DESIGN.md "Payloads travel on the span").
		problems = append(problems, capture.Problem{Key: droppedAttributesKey, Reason: fmt.Sprintf("%d attributes dropped by a span attribute count limit", n)})
	}
	w.records.Add(1)
	if len(problems) > 0 {
		w.partial.Add(1)
		w.logger.Warn("gymtrace capture: record written with a cut payload set to null; marking the rollout incomplete",
			"rollout_id", rid, "span_id", s.SpanContext().SpanID().String(), "problems", problems.Error())
		w.markIncomplete(rid)
	}
	return true, nil
}

// fail counts a failed record, marks its rollout incomplete and logs; it returns err.
func (w *recordWriter) fail(rid string, s sdktrace.ReadOnlySpan, err error) error {
	w.failures.Add(1)
	w.logger.Error("gymtrace capture: record not written; marking the rollout incomplete",
		"rollout_id", rid, "span_id", s.SpanContext().SpanID().String(), "error", err)
	w.markIncomplete(rid)
	return err
}

// drop handles a model-call span that arrives after Shutdown.
func (w *recordWriter) drop(s sdktrace.ReadOnlySpan) bool {
	rid, ok := capture.ModelCallRollout(spanAttrs(s.Attributes()))
	if !ok {
		return false
	}
	w.dropped.Add(1)
	w.logger.Error("gymtrace capture: model-call span ended after shutdown; record not written, marking the rollout incomplete",
		"rollout_id", rid, "span_id", s.SpanContext().SpanID().String())
	w.markIncomplete(rid)
	return true
}

func (w *recordWriter) markIncomplete(rid string) {
	if err := w.store.MarkIncomplete(rid); err != nil {
		w.logger.Error("gymtrace capture: mark incomplete failed", "rollout_id", rid, "error", err)
	}
}
