package capture

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Span is the neutral view of one finished span: what the span writer ([Writer]) and every line
// mapping ([LineMapping]) read, whatever produced the span. Each span source fills it through a small
// adapter (the otel-go SDK's sdktrace.ReadOnlySpan in package exporter and in agentobs, pdata's
// ptrace.Span in collectorext, the observations file and the recorder in agentobs), so that all of
// them share one writer and one mapping per kind of line.
//
// A Span reads its producer's memory (attribute, event and link values are not copied); it is valid
// as long as the producer leaves that memory alone, which the SDK and pdata do for a finished span.
// A zero id means the span has none.
type Span struct {
	TraceID      trace.TraceID
	SpanID       trace.SpanID
	ParentSpanID trace.SpanID // zero when the span has no parent in its trace
	Name         string
	Kind         trace.SpanKind
	StartTime    time.Time
	EndTime      time.Time // zero: the span has not ended (only a recorder's own view)
	StatusCode   codes.Code
	Attributes   AttributeLookup // nil means no attributes
	// Resource holds the attributes of the resource that produced the span (the process's
	// OTEL_RESOURCE_ATTRIBUTES, service.name, ...); nil means none. A span names its rollout as
	// gymtrace.rollout.id here or in Attributes (the span's wins, SPEC §0 D18).
	Resource AttributeLookup
	Events   []SpanEvent
	Links    []SpanLink
	// DroppedAttributes, DroppedEvents and DroppedLinks count what the span lost to its producer's
	// count limits (0 for none).
	DroppedAttributes int
	DroppedEvents     int
	DroppedLinks      int
	// CheckedRequest and CheckedResponse are the body payload texts the span's producer, in this
	// process, has already checked to be compact strict JSON objects (see [CheckedBodies]): a
	// gymtrace.request.body / gymtrace.response.body attribute with exactly this text goes into
	// the record line unchecked. "" (the default) checks every payload.
	CheckedRequest, CheckedResponse string
}

// SpanEvent is one span event of a [Span].
type SpanEvent struct {
	Name       string
	Time       time.Time
	Attributes AttributeLookup // nil means no attributes
}

// SpanLink is one span link of a [Span].
type SpanLink struct {
	TraceID    trace.TraceID
	SpanID     trace.SpanID
	Attributes AttributeLookup // nil means no attributes
}

// Attributes is an [AttributeLookup] over an attribute slice as the otel-go SDK keeps it (a
// ReadOnlySpan's Attributes, an event's or a link's): Lookup returns the last value of a key that
// repeats, and allocates nothing. Safe for concurrent use when the slice is not modified.
type Attributes []attribute.KeyValue

// Lookup returns the value of the attribute named key (the last one when the key repeats) and
// whether it is present.
func (a Attributes) Lookup(key string) (attribute.Value, bool) {
	for i := len(a) - 1; i >= 0; i-- {
		if string(a[i].Key) == key {
			return a[i].Value, true
		}
	}
	return attribute.Value{}, false
}
