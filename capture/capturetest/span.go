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
	// Name is the span name, "chat {gen_ai.request.model}" for model calls.
	Name string
	// Kind is the span kind, trace.SpanKindClient for model calls.
	Kind trace.SpanKind
	// Start and End are the span's start and end times (nanosecond resolution); the record's
	// started_at and completed_at are taken from them.
	Start, End time.Time
	// Attributes are the span attributes in order. Each key appears once.
	Attributes []attribute.KeyValue
	// DroppedAttributes is the number of attributes the producer dropped to a count limit
	// (sdktrace.ReadOnlySpan.DroppedAttributes, ptrace.Span.DroppedAttributesCount); 0 for none.
	DroppedAttributes int
	// TraceID and SpanID are the span's ids; a zero id means the span has none.
	TraceID trace.TraceID
	SpanID  trace.SpanID
	// ParentSpanID is the span's parent in the same trace; zero for a root span. Model-call cases
	// have none; observation cases use it.
	ParentSpanID trace.SpanID
	// StatusCode is the span's status code (codes.Unset for model-call cases).
	StatusCode codes.Code
	// Events and Links are the span's events and links, in order (none for model-call cases).
	Events []Event
	Links  []Link
	// DroppedEvents and DroppedLinks count what the producer dropped to its limits; 0 for none.
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

// TargetFunc adapts a function to [Target].
type TargetFunc func(ctx context.Context, spans []Span) error

// ConsumeSpans calls f(ctx, spans).
func (f TargetFunc) ConsumeSpans(ctx context.Context, spans []Span) error { return f(ctx, spans) }
