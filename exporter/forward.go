package exporter

import (
	"context"
	"errors"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/capture"
)

// NewForwardingProcessor returns a [DurableProcessor] whose records are made durable by a capture
// Collector instead of the local store: OnEnd exports each model-call span synchronously, alone, to
// next (typically an OTLP exporter pointed at a gymtrace-otelcol whose gymcapture exporter runs
// without a queue and behind no batch processor, so the request is acknowledged only after the
// Collector's fsync; DESIGN.md "Durability before completion").
//
// A span whose export fails or exceeds the forward timeout ([WithForwardTimeout], default
// [DefaultForwardTimeout]) is counted as failed, logged, and its rollout marked incomplete in store
// (SPEC §2.6), so the loss is visible to readers of the shared directory. The record is read locally
// first (capture.Writer.Forward), so a span that gives no whole record fails or is partial here too.
//
// Shutdown waits for OnEnd calls in progress, then shuts next down. It returns an error when store
// or next is nil. Safe for concurrent use; concurrent calls export concurrently.
func NewForwardingProcessor(store *capture.Store, next sdktrace.SpanExporter, opts ...Option) (*DurableProcessor, error) {
	if next == nil {
		return nil, errors.New("exporter: forwarding processor: span exporter is nil")
	}
	cfg := newConfig(opts)
	w, err := newRecordWriter(store, cfg)
	if err != nil {
		return nil, err
	}
	w.forward = func(ctx context.Context, s sdktrace.ReadOnlySpan) error {
		ctx, cancel := context.WithTimeout(ctx, cfg.forwardTimeout)
		defer cancel()
		if err := next.ExportSpans(ctx, []sdktrace.ReadOnlySpan{s}); err != nil {
			return fmt.Errorf("forward to capture collector: %w", err)
		}
		return nil
	}
	return &DurableProcessor{w: w, next: next}, nil
}
