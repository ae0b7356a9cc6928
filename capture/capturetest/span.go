package capturetest

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Span is one finished span as the suite hands it to a [Target], in no particular SDK's
// representation. A Target converts it field by field: an SDK target to an
// sdktrace.ReadOnlySpan (tracetest.SpanStub), a Collector target to a ptrace.Span.
type Span struct {
	Name string         // "chat {gen_ai.request.model}" for model calls
	Kind trace.SpanKind // trace.SpanKindClient for model calls
	// Start and End are the span's times (nanosecond resolution): the record's started_at and
	// completed_at.
	Start, End time.Time
	Attributes []attribute.KeyValue // in order, each key once
	// Resource holds the attributes of the span's resource (none: an empty resource); a Collector
	// target puts consecutive spans with equal resources under one ResourceSpans.
	Resource []attribute.KeyValue
	// DroppedAttributes, DroppedEvents and DroppedLinks count what the producer dropped to its
	// limits (sdktrace.ReadOnlySpan.DroppedAttributes, ptrace.Span.DroppedAttributesCount, ...).
	DroppedAttributes int
	// TraceID and SpanID are the span's ids, ParentSpanID its parent in the same trace (observation
	// cases only); a zero id means none.
	TraceID      trace.TraceID
	SpanID       trace.SpanID
	ParentSpanID trace.SpanID
	StatusCode   codes.Code // codes.Unset for model-call cases
	// Events and Links are the span's events and links, in order (none for model-call cases).
	Events        []Event
	Links         []Link
	DroppedEvents int
	DroppedLinks  int
}

// Event is one span event of a [Span].
type Event struct {
	Name       string
	Time       time.Time
	Attributes []attribute.KeyValue
}

// Link is one span link of a [Span].
type Link struct {
	TraceID    trace.TraceID
	SpanID     trace.SpanID
	Attributes []attribute.KeyValue
}

// Target is a capture writer under test, writing into the directory [Run] or [RunObservations]
// gave its constructor.
type Target interface {
	// ConsumeSpans hands spans to the writer as one batch, in order, and returns when the writer has
	// finished with them: every line it wrote is durable and every marker it set exists. It
	// returns an error when a model-call span could not be written (the other spans of the batch
	// are still processed); [RunObservations] does not read the error of a batch with an
	// observation span that could not be written (an SDK span processor has none to give). It may
	// be called concurrently.
	ConsumeSpans(ctx context.Context, spans []Span) error
}

// Flusher is implemented by a [Target] that can be told to write what it holds (SPEC §0 D18: the
// observation spans waiting for their trace to name a rollout go to the unattributed file): an SDK
// processor's ForceFlush, a Collector exporter's Shutdown. Every Target of [RunObservations] must
// implement it; the suite calls Flush last.
type Flusher interface {
	Flush(ctx context.Context) error
}

// TargetFunc adapts a function to [Target].
type TargetFunc func(ctx context.Context, spans []Span) error

// ConsumeSpans calls f(ctx, spans).
func (f TargetFunc) ConsumeSpans(ctx context.Context, spans []Span) error { return f(ctx, spans) }
