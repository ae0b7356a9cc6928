package exporter

import (
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/capture"
)

// SpanFromReadOnly returns the [capture.Span] view of an otel-go SDK span: ids, the parent (when it
// is in the span's own trace), name, kind, times, status code, attributes, events, links and the
// dropped counts. It copies nothing but slice headers (the SDK never changes a finished span's
// slices). Safe for concurrent use.
func SpanFromReadOnly(s sdktrace.ReadOnlySpan) capture.Span {
	sc := s.SpanContext()
	v := capture.Span{
		TraceID:           sc.TraceID(),
		SpanID:            sc.SpanID(),
		Name:              s.Name(),
		Kind:              s.SpanKind(),
		StartTime:         s.StartTime(),
		EndTime:           s.EndTime(),
		StatusCode:        s.Status().Code,
		Attributes:        capture.Attributes(s.Attributes()),
		DroppedAttributes: s.DroppedAttributes(),
		DroppedEvents:     s.DroppedEvents(),
		DroppedLinks:      s.DroppedLinks(),
	}
	if p := s.Parent(); p.IsValid() && p.TraceID() == sc.TraceID() {
		v.ParentSpanID = p.SpanID()
	}
	if evs := s.Events(); len(evs) > 0 {
		v.Events = make([]capture.SpanEvent, len(evs))
		for i, e := range evs {
			v.Events[i] = capture.SpanEvent{Name: e.Name, Time: e.Time, Attributes: capture.Attributes(e.Attributes)}
		}
	}
	if links := s.Links(); len(links) > 0 {
		v.Links = make([]capture.SpanLink, len(links))
		for i, l := range links {
			v.Links[i] = capture.SpanLink{TraceID: l.SpanContext.TraceID(), SpanID: l.SpanContext.SpanID(), Attributes: capture.Attributes(l.Attributes)}
		}
	}
	return v
}
