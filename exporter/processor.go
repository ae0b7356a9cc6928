package exporter

import (
	"context"
	"errors"
	"fmt"
	"sync"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/drain"
)

// DurableProcessor is an sdktrace.SpanProcessor that writes the capture record of every model-call
// span synchronously in OnEnd (DESIGN.md "Durability before completion"): when span.End returns, the
// record is on stable storage, or its write failed and the rollout was marked incomplete. Register it
// first on a TracerProvider whose sampler records every model-call span; it ignores the sampled flag
// (capture never depends on sampling) and ignores spans that are not model calls.
//
// It is safe for concurrent use; concurrent OnEnd calls for the same rollout share one fsync.
// After Shutdown, OnEnd writes nothing: a model-call span is counted as failed, logged, and its
// rollout marked incomplete (SPEC §5.3 model_call_capture_incomplete).
type DurableProcessor struct {
	w    *recordWriter
	next sdktrace.SpanExporter // NewForwardingProcessor's exporter, shut down after the last OnEnd

	gate drain.Gate // OnEnd calls in flight; closed by Shutdown

	shutdownOnce sync.Once
	shutdownErr  error
}

var _ sdktrace.SpanProcessor = (*DurableProcessor)(nil)

// NewDurableProcessor returns a processor writing to store. Options: [WithLogger],
// [WithMeterProvider] and [WithCheckedBodies] ([WithForwardTimeout] applies only to
// [NewForwardingProcessor]). It returns an error when store is nil.
func NewDurableProcessor(store *capture.Store, opts ...Option) (*DurableProcessor, error) {
	w, err := newRecordWriter(store, newConfig(opts))
	if err != nil {
		return nil, err
	}
	return &DurableProcessor{w: w}, nil
}

// OnStart does nothing.
func (p *DurableProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd writes the span's capture record when it is a model-call span (see [DurableProcessor]).
func (p *DurableProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	if !p.gate.Enter() {
		p.w.drop(s)
		return
	}
	defer p.gate.Leave()
	_ = p.w.write(context.Background(), s) // failures are counted, logged and marked by write
}

// Abandon accounts for model-call span s whose record will never be written because its producer
// stopped waiting for it (the capture handler's Shutdown whose ctx ended while the call was still
// in flight): s is counted as gymtrace.capture.writer.spans{outcome="failed"}, logged with cause, and
// its rollout marked incomplete (SPEC §2.6; Store.MarkIncomplete fsyncs the directory, so the marker
// is durable when Abandon returns). s need not have ended, and must then never end on this
// processor (its record would be written after all and the span counted twice). A span that is not
// a model call is ignored. It returns the error of writing the marker (also logged), nil when the
// rollout was marked or there was nothing to mark. Safe for concurrent use, before and after Shutdown.
func (p *DurableProcessor) Abandon(s sdktrace.ReadOnlySpan, cause error) error {
	return p.w.abandon(s, cause)
}

// ForceFlush returns ctx's error, or nil: records are written synchronously in OnEnd, so nothing is
// ever pending.
func (p *DurableProcessor) ForceFlush(ctx context.Context) error {
	return ctx.Err()
}

// Shutdown stops writing (see [DurableProcessor]) and waits for OnEnd calls in progress to finish,
// or for ctx to be done (then it returns ctx's error; those writes still complete), then shuts down
// the exporter of [NewForwardingProcessor], if any. It runs once; later calls return the first result.
func (p *DurableProcessor) Shutdown(ctx context.Context) error {
	p.shutdownOnce.Do(func() {
		if err := p.gate.Drain(ctx); err != nil {
			p.shutdownErr = fmt.Errorf("exporter: durable processor shutdown: %w", err)
		}
		if p.next != nil {
			if err := p.next.Shutdown(ctx); err != nil {
				p.shutdownErr = errors.Join(p.shutdownErr, fmt.Errorf("exporter: forwarding processor shutdown: %w", err))
			}
		}
	})
	return p.shutdownErr
}
