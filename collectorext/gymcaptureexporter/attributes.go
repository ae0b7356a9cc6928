package gymcaptureexporter

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/attribute"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
)

// spanAttributes adapts a ptrace.Span's attribute map to capture.AttributeLookup, the only view of a
// span the shared record mapping (capture.ExchangeFromAttributes) needs. Values convert the way
// the OTLP exporters encode attribute.Values, in reverse: Str -> STRING, Int -> INT64, Double ->
// FLOAT64, Bool -> BOOL, Bytes -> BYTESLICE, a Slice of one scalar type -> the typed slice, any
// other Slice -> SLICE, Map -> MAP, Empty -> EMPTY.
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

// withoutPayloads hides the payload attributes and their size attributes (include_payloads: false).
type withoutPayloads struct{ capture.AttributeLookup }

// Lookup returns the value of key, or reports it absent when it is a payload or payload-size key.
func (w withoutPayloads) Lookup(key string) (attribute.Value, bool) {
	if isPayloadKey(key) {
		return attribute.Value{}, false
	}
	return w.AttributeLookup.Lookup(key)
}

// isPayloadKey reports whether key is one of semconv.PayloadKeys or its size attribute.
func isPayloadKey(key string) bool {
	for _, k := range semconv.PayloadKeys {
		sk, _ := semconv.PayloadSizeKey(k)
		if key == string(k) || key == string(sk) {
			return true
		}
	}
	return false
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
		out := make([]string, n)
		for i := range n {
			out[i] = s.At(i).Str()
		}
		return attribute.StringSliceValue(out)
	case pcommon.ValueTypeInt:
		out := make([]int64, n)
		for i := range n {
			out[i] = s.At(i).Int()
		}
		return attribute.Int64SliceValue(out)
	case pcommon.ValueTypeDouble:
		out := make([]float64, n)
		for i := range n {
			out[i] = s.At(i).Double()
		}
		return attribute.Float64SliceValue(out)
	case pcommon.ValueTypeBool:
		out := make([]bool, n)
		for i := range n {
			out[i] = s.At(i).Bool()
		}
		return attribute.BoolSliceValue(out)
	}
	vs := make([]attribute.Value, n)
	for i := range n {
		vs[i] = attributeValue(s.At(i))
	}
	return attribute.SliceValue(vs...)
}
