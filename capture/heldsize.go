package capture

import "go.opentelemetry.io/otel/attribute"

// Fixed costs of [HeldSize], in bytes: what a held copy keeps besides its text and values (the
// structs, slice headers and the list entry), rounded up.
const (
	heldSpanCost  = 256
	heldEventCost = 64
	heldLinkCost  = 64
	heldAttrCost  = 48
)

// HeldSize estimates the memory, in bytes, that a copy of s held by a trace window keeps
// ([TraceWindow.MaxHeldBytes], SPEC §0 D18): a fixed cost per span, event, link and attribute,
// plus the bytes of the name, the attribute keys and the values (strings, byte slices and the
// elements of slices and maps, recursively). Attribute sets that are not an [Attributes] value
// count nothing beyond the span's fixed cost: a [TraceRouting.Detach] copy keeps its attributes as
// [Attributes] so that the bound sees them. It never fails and reads s only.
func HeldSize(s *Span) int64 {
	n := int64(heldSpanCost + len(s.Name) + len(s.CheckedRequest) + len(s.CheckedResponse))
	n += attrsSize(s.Attributes) + attrsSize(s.Resource)
	for _, e := range s.Events {
		n += heldEventCost + int64(len(e.Name)) + attrsSize(e.Attributes)
	}
	for _, l := range s.Links {
		n += heldLinkCost + attrsSize(l.Attributes)
	}
	return n
}

// attrsSize is the part of [HeldSize] of one attribute set.
func attrsSize(a AttributeLookup) int64 {
	kvs, ok := a.(Attributes)
	if !ok {
		return 0
	}
	return kvsSize(kvs)
}

func kvsSize(kvs []attribute.KeyValue) int64 {
	var n int64
	for _, kv := range kvs {
		n += heldAttrCost + int64(len(kv.Key)) + valueSize(kv.Value)
	}
	return n
}

// valueSize is the bytes a value holds beyond its fixed cost.
func valueSize(v attribute.Value) int64 {
	switch v.Type() {
	case attribute.STRING:
		return int64(len(v.AsString()))
	case attribute.BYTESLICE:
		return int64(len(v.AsByteSlice()))
	case attribute.BOOLSLICE:
		return int64(len(v.AsBoolSlice()))
	case attribute.INT64SLICE:
		return 8 * int64(len(v.AsInt64Slice()))
	case attribute.FLOAT64SLICE:
		return 8 * int64(len(v.AsFloat64Slice()))
	case attribute.STRINGSLICE:
		var n int64
		for _, s := range v.AsStringSlice() {
			n += 16 + int64(len(s))
		}
		return n
	case attribute.SLICE:
		var n int64
		for _, e := range v.AsSlice() {
			n += heldAttrCost + valueSize(e)
		}
		return n
	case attribute.MAP:
		return kvsSize(v.AsMap())
	}
	return 0
}
