package gymcaptureexporter

import (
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/capture/capturetest"
)

// toTraces converts the conformance suite's spans to pdata, the way the OTLP receiver hands them
// to the exporter: the spans in order, one resource (service.name plus the span's Resource) and
// scope for each run of spans with equal Resource, attribute values in their OTLP form.
func toTraces(spans []capturetest.Span) ptrace.Traces {
	td := ptrace.NewTraces()
	var ss ptrace.ScopeSpans
	for i, s := range spans {
		if i == 0 || !slices.Equal(s.Resource, spans[i-1].Resource) {
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", "model-server")
			putAttributes(rs.Resource().Attributes(), s.Resource)
			ss = rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName("github.com/gymtrace/gymtrace/proxy")
		}
		putSpan(ss.Spans().AppendEmpty(), s)
	}
	if len(spans) == 0 {
		td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	}
	return td
}

func putSpan(sp ptrace.Span, s capturetest.Span) {
	sp.SetName(s.Name)
	sp.SetKind(spanKind(s.Kind))
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(s.Start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(s.End))
	sp.SetTraceID(pcommon.TraceID(s.TraceID))
	sp.SetSpanID(pcommon.SpanID(s.SpanID))
	sp.SetParentSpanID(pcommon.SpanID(s.ParentSpanID))
	sp.SetDroppedAttributesCount(uint32(s.DroppedAttributes))
	sp.SetDroppedEventsCount(uint32(s.DroppedEvents))
	sp.SetDroppedLinksCount(uint32(s.DroppedLinks))
	switch s.StatusCode {
	case codes.Ok:
		sp.Status().SetCode(ptrace.StatusCodeOk)
	case codes.Error:
		sp.Status().SetCode(ptrace.StatusCodeError)
	}
	putAttributes(sp.Attributes(), s.Attributes)
	for _, e := range s.Events {
		pe := sp.Events().AppendEmpty()
		pe.SetName(e.Name)
		pe.SetTimestamp(pcommon.NewTimestampFromTime(e.Time))
		putAttributes(pe.Attributes(), e.Attributes)
	}
	for _, l := range s.Links {
		pl := sp.Links().AppendEmpty()
		pl.SetTraceID(pcommon.TraceID(l.TraceID))
		pl.SetSpanID(pcommon.SpanID(l.SpanID))
		putAttributes(pl.Attributes(), l.Attributes)
	}
}

func putAttributes(m pcommon.Map, attrs []attribute.KeyValue) {
	m.EnsureCapacity(len(attrs))
	for _, kv := range attrs {
		putValue(m.PutEmpty(string(kv.Key)), kv.Value)
	}
}

func spanKind(k trace.SpanKind) ptrace.SpanKind {
	switch k {
	case trace.SpanKindInternal:
		return ptrace.SpanKindInternal
	case trace.SpanKindServer:
		return ptrace.SpanKindServer
	case trace.SpanKindClient:
		return ptrace.SpanKindClient
	case trace.SpanKindProducer:
		return ptrace.SpanKindProducer
	case trace.SpanKindConsumer:
		return ptrace.SpanKindConsumer
	}
	return ptrace.SpanKindUnspecified
}

// putValue sets dst to v as the OTLP exporters encode attribute values.
func putValue(dst pcommon.Value, v attribute.Value) {
	switch v.Type() {
	case attribute.BOOL:
		dst.SetBool(v.AsBool())
	case attribute.INT64:
		dst.SetInt(v.AsInt64())
	case attribute.FLOAT64:
		dst.SetDouble(v.AsFloat64())
	case attribute.STRING:
		dst.SetStr(v.AsString())
	case attribute.BOOLSLICE:
		s := dst.SetEmptySlice()
		for _, b := range v.AsBoolSlice() {
			s.AppendEmpty().SetBool(b)
		}
	case attribute.INT64SLICE:
		s := dst.SetEmptySlice()
		for _, n := range v.AsInt64Slice() {
			s.AppendEmpty().SetInt(n)
		}
	case attribute.FLOAT64SLICE:
		s := dst.SetEmptySlice()
		for _, f := range v.AsFloat64Slice() {
			s.AppendEmpty().SetDouble(f)
		}
	case attribute.STRINGSLICE:
		s := dst.SetEmptySlice()
		for _, str := range v.AsStringSlice() {
			s.AppendEmpty().SetStr(str)
		}
	case attribute.BYTESLICE:
		dst.SetEmptyBytes().FromRaw(v.AsByteSlice())
	case attribute.SLICE:
		s := dst.SetEmptySlice()
		for _, e := range v.AsSlice() {
			putValue(s.AppendEmpty(), e)
		}
	case attribute.MAP:
		m := dst.SetEmptyMap()
		for _, kv := range v.AsMap() {
			putValue(m.PutEmpty(string(kv.Key)), kv.Value)
		}
	}
}
