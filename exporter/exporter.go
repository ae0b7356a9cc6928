package exporter

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/capture"
)

// errShutdown is returned by ExportSpans after Shutdown.
var errShutdown = errors.New("exporter: shut down")

// Exporter is an sdktrace.SpanExporter that writes the capture record of every model-call span it is
// given (see the package doc); other spans are ignored. Use it where spans arrive in batches, for
// example behind a SimpleSpanProcessor; the capture middleware uses [DurableProcessor] instead.
//
// It is safe for concurrent use.
type Exporter struct {
	w      *recordWriter
	closed atomic.Bool
}

var _ sdktrace.SpanExporter = (*Exporter)(nil)

// New returns an Exporter writing to store. Options: [WithLogger], [WithMeterProvider] and
// [WithCheckedBodies] ([WithForwardTimeout] applies only to [NewForwardingProcessor]). It returns
// an error when store is nil.
func New(store *capture.Store, opts ...Option) (*Exporter, error) {
	w, err := newRecordWriter(store, newConfig(opts))
	if err != nil {
		return nil, err
	}
	return &Exporter{w: w}, nil
}

// ExportSpans writes the records of the model-call spans among spans, in order. A failed record
// marks its rollout incomplete and the batch continues; the errors are joined. When ctx is done
// before a record is started, that record and the rest are not written: their rollouts are marked
// incomplete and ctx's error is returned with the others. A record already started is always
// finished (the write is detached from ctx). After Shutdown, nothing is written: the model-call
// spans' rollouts are marked incomplete and an error is returned.
func (e *Exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.closed.Load() {
		n := 0
		for _, s := range spans {
			if e.w.drop(s) {
				n++
			}
		}
		if n == 0 {
			return nil
		}
		return fmt.Errorf("%w: %d model-call records not written", errShutdown, n)
	}
	var errs []error
	for i, s := range spans {
		if err := ctx.Err(); err != nil {
			for _, rest := range spans[i:] {
				if ferr := e.w.fail(ctx, rest, err); ferr != nil {
					errs = append(errs, ferr)
				}
			}
			break
		}
		if err := e.w.write(ctx, s); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Shutdown stops the exporter; later ExportSpans calls write nothing (see ExportSpans). It is
// idempotent and returns ctx's error when ctx is already done.
func (e *Exporter) Shutdown(ctx context.Context) error {
	e.closed.Store(true)
	return ctx.Err()
}
