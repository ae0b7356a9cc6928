// Package sdkspan reads finished spans of the otel-go SDK (sdktrace.ReadOnlySpan) as the neutral
// span view of the capture span writer, [capture.Span]. It is the one such adapter: the SDK
// exporter and durable processor (package exporter) and the agent-observations processor
// (package agentobs) both use it, while package capture itself stays free of the SDK (it imports
// the OTel API only). The Collector exporter reads pdata spans with its own adapter.
package sdkspan

import (
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/capture"
)

// FromReadOnly returns the [capture.Span] view of an otel-go SDK span (from a SpanProcessor's
// OnEnd, a SpanExporter's batch or a tracetest stub): ids, the parent (only when it is in the
// span's own trace; a remote parent of another trace is none), name, kind, times, status code,
// attributes, the resource's attributes, events, links and the dropped counts. It copies nothing but slice headers: the view
// reads the span's own attribute, event and link slices, which the SDK never changes after the
// span ended. Safe for concurrent use.
func FromReadOnly(s sdktrace.ReadOnlySpan) capture.Span {
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
	if r := s.Resource(); r != nil {
		v.Resource = resourceAttributes{r.Set()}
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

// resourceAttributes is a resource's attribute set as a [capture.AttributeLookup].
type resourceAttributes struct{ set *attribute.Set }

// Lookup returns the value of key and whether the resource has it.
func (r resourceAttributes) Lookup(key string) (attribute.Value, bool) {
	return r.set.Value(attribute.Key(key))
}
