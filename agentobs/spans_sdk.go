package agentobs

import (
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// SpanFromReadOnly returns the [ObservationSpan] view of an otel-go SDK span (for example from an
// sdktrace.SpanProcessor's OnEnd or a tracetest exporter). It copies nothing but slice headers: the
// view reads the span's own attribute, event and link slices, which the SDK never changes after
// the span ended. Safe for concurrent use.
func SpanFromReadOnly(s sdktrace.ReadOnlySpan) ObservationSpan {
	sc := s.SpanContext()
	v := ObservationSpan{
		TraceID:           sc.TraceID(),
		SpanID:            sc.SpanID(),
		Name:              s.Name(),
		Kind:              s.SpanKind(),
		StartTime:         s.StartTime(),
		EndTime:           s.EndTime(),
		StatusCode:        s.Status().Code,
		Attributes:        attrList(s.Attributes()),
		DroppedAttributes: s.DroppedAttributes(),
		DroppedEvents:     s.DroppedEvents(),
		DroppedLinks:      s.DroppedLinks(),
	}
	if p := s.Parent(); p.IsValid() && p.TraceID() == sc.TraceID() {
		v.ParentSpanID = p.SpanID()
	}
	if evs := s.Events(); len(evs) > 0 {
		v.Events = make([]SpanEvent, len(evs))
		for i, e := range evs {
			v.Events[i] = SpanEvent{Name: e.Name, Time: e.Time, Attributes: attrList(e.Attributes)}
		}
	}
	if links := s.Links(); len(links) > 0 {
		v.Links = make([]SpanLink, len(links))
		for i, l := range links {
			v.Links[i] = SpanLink{TraceID: l.SpanContext.TraceID(), SpanID: l.SpanContext.SpanID(), Attributes: attrList(l.Attributes)}
		}
	}
	return v
}
