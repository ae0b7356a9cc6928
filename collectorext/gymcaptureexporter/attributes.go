package gymcaptureexporter

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/capture"
)

// spanAttributes adapts a ptrace.Span's (or an event's or a link's) attribute map to
// capture.AttributeLookup. Values convert the way the OTLP exporters encode attribute.Values, in
// reverse: Str -> STRING, Int -> INT64, Double -> FLOAT64, Bool -> BOOL, Bytes -> BYTESLICE, a
// Slice of one scalar type -> the typed slice, an empty Slice -> an empty STRINGSLICE (OTLP cannot
// tell an empty string slice from any other empty array, and the observations file writes an empty
// array as an empty string slice, so an otel-go span's empty gymtrace.model_call.ids reaches the
// file as the same [] whether it came through the SDK's processor or over OTLP), any other Slice ->
// SLICE, Map -> MAP, Empty -> EMPTY.
type spanAttributes pcommon.Map

var _ capture.AttributeLookup = spanAttributes{}

// Lookup returns the value of key and whether it is present.
func (a spanAttributes) Lookup(key string) (attribute.Value, bool) {
	v, ok := pcommon.Map(a).Get(key)
	if !ok {
		return attribute.Value{}, false
	}
	return attributeValue(v), true
}

func attributeValue(v pcommon.Value) attribute.Value {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return attribute.StringValue(v.Str())
	case pcommon.ValueTypeInt:
		return attribute.Int64Value(v.Int())
	case pcommon.ValueTypeDouble:
		return attribute.Float64Value(v.Double())
	case pcommon.ValueTypeBool:
		return attribute.BoolValue(v.Bool())
	case pcommon.ValueTypeBytes:
		return attribute.ByteSliceValue(v.Bytes().AsRaw())
	case pcommon.ValueTypeSlice:
		return sliceValue(v.Slice())
	case pcommon.ValueTypeMap:
		m := v.Map()
		kvs := make([]attribute.KeyValue, 0, m.Len())
		for k, e := range m.All() {
			kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(k), Value: attributeValue(e)})
		}
		return attribute.MapValue(kvs...)
	}
	return attribute.Value{}
}

// sliceValue converts a slice whose elements share one scalar type to that typed slice (how the
// OTLP exporters send StringSlice, Int64Slice, Float64Slice and BoolSlice attributes), any other
// to a SLICE value.
func sliceValue(s pcommon.Slice) attribute.Value {
	n := s.Len()
	if n == 0 {
		return attribute.StringSliceValue(nil)
	}
	typ := pcommon.ValueTypeEmpty
	for i := range n {
		t := s.At(i).Type()
		if i > 0 && t != typ {
			typ = pcommon.ValueTypeEmpty
			break
		}
		typ = t
	}
	switch typ {
	case pcommon.ValueTypeStr:
		return attribute.StringSliceValue(elems(s, pcommon.Value.Str))
	case pcommon.ValueTypeInt:
		return attribute.Int64SliceValue(elems(s, pcommon.Value.Int))
	case pcommon.ValueTypeDouble:
		return attribute.Float64SliceValue(elems(s, pcommon.Value.Double))
	case pcommon.ValueTypeBool:
		return attribute.BoolSliceValue(elems(s, pcommon.Value.Bool))
	}
	return attribute.SliceValue(elems(s, attributeValue)...)
}

// elems returns f of each element of s.
func elems[T any](s pcommon.Slice, f func(pcommon.Value) T) []T {
	out := make([]T, s.Len())
	for i := range out {
		out[i] = f(s.At(i))
	}
	return out
}

// spanView is the capture.Span view of pdata span sp: the Collector's adapter to the one span
// writer (capture.Writer), as sdkspan.FromReadOnly is the otel-go SDK's. Timestamps are read as
// the unsigned counts OTLP sends (timeOf); unset ones (0) are zero times (an end of 0 is a span
// that has not ended); the status and kind enums are
// translated (pdata numbers them differently from otel-go); a parent span id is kept as it is
// (OTLP carries it only for a parent in the span's trace). Attribute values convert as
// spanAttributes documents; nothing is copied but the event and link lists.
func spanView(sp ptrace.Span) capture.Span {
	v := capture.Span{
		TraceID:           trace.TraceID(sp.TraceID()),
		SpanID:            trace.SpanID(sp.SpanID()),
		ParentSpanID:      trace.SpanID(sp.ParentSpanID()),
		Name:              sp.Name(),
		Kind:              otelSpanKinds[sp.Kind()],
		StartTime:         timeOf(sp.StartTimestamp()),
		EndTime:           timeOf(sp.EndTimestamp()),
		StatusCode:        otelStatusCodes[sp.Status().Code()],
		Attributes:        spanAttributes(sp.Attributes()),
		DroppedAttributes: int(sp.DroppedAttributesCount()),
		DroppedEvents:     int(sp.DroppedEventsCount()),
		DroppedLinks:      int(sp.DroppedLinksCount()),
	}
	if evs := sp.Events(); evs.Len() > 0 {
		v.Events = make([]capture.SpanEvent, evs.Len())
		for i := range evs.Len() {
			e := evs.At(i)
			v.Events[i] = capture.SpanEvent{Name: e.Name(), Time: timeOf(e.Timestamp()), Attributes: spanAttributes(e.Attributes())}
		}
	}
	if links := sp.Links(); links.Len() > 0 {
		v.Links = make([]capture.SpanLink, links.Len())
		for i := range links.Len() {
			l := links.At(i)
			v.Links[i] = capture.SpanLink{TraceID: trace.TraceID(l.TraceID()), SpanID: trace.SpanID(l.SpanID()), Attributes: spanAttributes(l.Attributes())}
		}
	}
	return v
}

// timeOf returns ts, nanoseconds since the Unix epoch as OTLP counts them (unsigned), as the exact
// time, and the zero time for an unset timestamp (0; capture.UnixSeconds gives it 0.0). Every value
// holds, up to 2^64−1 ns (year 2554): pcommon.Timestamp.AsTime reads the count as an int64, so a
// count past MaxInt64 would wrap to a time before 1970 (SPEC §0 "Durability contract": seconds =
// UnixNano / 1e9).
func timeOf(ts pcommon.Timestamp) time.Time {
	if ts == 0 {
		return time.Time{}
	}
	return time.Unix(int64(ts/1e9), int64(ts%1e9)).UTC()
}

// otelSpanKinds and otelStatusCodes translate pdata's enums (numbered apart from otel-go's); any
// other value is unspecified / unset.
var (
	otelSpanKinds = map[ptrace.SpanKind]trace.SpanKind{
		ptrace.SpanKindInternal: trace.SpanKindInternal,
		ptrace.SpanKindServer:   trace.SpanKindServer,
		ptrace.SpanKindClient:   trace.SpanKindClient,
		ptrace.SpanKindProducer: trace.SpanKindProducer,
		ptrace.SpanKindConsumer: trace.SpanKindConsumer,
	}
	otelStatusCodes = map[ptrace.StatusCode]codes.Code{
		ptrace.StatusCodeOk:    codes.Ok,
		ptrace.StatusCodeError: codes.Error,
	}
)
