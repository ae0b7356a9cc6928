package exporter

import (
	"context"
	"errors"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/capture"
)

// WithoutPayloads returns a span exporter that forwards spans to next without the payload
// attributes ([capture.IsPayload]: gymtrace.request.body, gymtrace.request.raw,
// gymtrace.response.body, gymtrace.response.raw), for lean OTLP export (DESIGN.md "Payloads travel
// on the span"). The size attributes are kept, so a reader can still tell a payload existed. The
// opt-in GenAI content attributes (gen_ai.input.messages, gen_ai.output.messages,
// gen_ai.system_instructions) are not payloads and are kept: whoever turned them on wants them in the
// trace backend. Spans without payloads are passed as they are. Shutdown is next's. It is safe for concurrent use when
// next is. A nil next gives an exporter whose ExportSpans returns [ErrNilExporter] and whose
// Shutdown does nothing.
func WithoutPayloads(next sdktrace.SpanExporter) sdktrace.SpanExporter {
	return payloadStripper{next: next}
}

// ErrNilExporter is the error of [WithoutPayloads]'s ExportSpans when its next exporter is nil.
var ErrNilExporter = errors.New("exporter.WithoutPayloads: the next span exporter is nil")

type payloadStripper struct{ next sdktrace.SpanExporter }

func (p payloadStripper) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if p.next == nil {
		return ErrNilExporter
	}
	out := spans
	copied := false
	for i, s := range spans {
		attrs := s.Attributes()
		if !slices.ContainsFunc(attrs, capture.IsPayload) {
			continue
		}
		if !copied {
			out = append([]sdktrace.ReadOnlySpan(nil), spans...)
			copied = true
		}
		kept := slices.DeleteFunc(slices.Clone(attrs), capture.IsPayload)
		out[i] = strippedSpan{ReadOnlySpan: s, attrs: kept}
	}
	return p.next.ExportSpans(ctx, out)
}

func (p payloadStripper) Shutdown(ctx context.Context) error {
	if p.next == nil {
		return nil
	}
	return p.next.Shutdown(ctx)
}

// strippedSpan is a ReadOnlySpan whose attributes lack the payloads.
type strippedSpan struct {
	sdktrace.ReadOnlySpan
	attrs []attribute.KeyValue
}

func (s strippedSpan) Attributes() []attribute.KeyValue { return s.attrs }
