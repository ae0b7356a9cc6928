package capturetest

import (
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// ReadOnlySpans returns spans as the otel-go SDK hands them to span exporters and processors
// (sdktrace.ReadOnlySpan, through tracetest.SpanStub), field by field: every span sampled, its
// parent (when it has one) in its own trace, its resource when it has attributes.
func ReadOnlySpans(spans []Span) []sdktrace.ReadOnlySpan {
	stubs := make(tracetest.SpanStubs, len(spans))
	for i, s := range spans {
		st := tracetest.SpanStub{
			Name:              s.Name,
			SpanContext:       spanContext(s.TraceID, s.SpanID),
			SpanKind:          s.Kind,
			StartTime:         s.Start,
			EndTime:           s.End,
			Attributes:        s.Attributes,
			DroppedAttributes: s.DroppedAttributes,
			Status:            sdktrace.Status{Code: s.StatusCode},
			DroppedEvents:     s.DroppedEvents,
			DroppedLinks:      s.DroppedLinks,
		}
		if len(s.Resource) > 0 {
			st.Resource = resource.NewSchemaless(s.Resource...)
		}
		if s.ParentSpanID.IsValid() {
			st.Parent = spanContext(s.TraceID, s.ParentSpanID)
		}
		for _, e := range s.Events {
			st.Events = append(st.Events, sdktrace.Event{Name: e.Name, Time: e.Time, Attributes: e.Attributes})
		}
		for _, l := range s.Links {
			st.Links = append(st.Links, sdktrace.Link{SpanContext: spanContext(l.TraceID, l.SpanID), Attributes: l.Attributes})
		}
		stubs[i] = st
	}
	return stubs.Snapshots()
}

func spanContext(tid trace.TraceID, sid trace.SpanID) trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
}
