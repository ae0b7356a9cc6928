package agentobs

import (
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/ojson"
)

// AppendJSON appends the line's JSON text (the format of [ObservationLine]) and a final "\n" to
// dst. The text holds no other newline. Safe for concurrent use.
func (l ObservationLine) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"rollout_id":`...)
	dst = ojson.AppendString(dst, l.RolloutID)
	dst = append(dst, `,"trace_id":"`...)
	dst = hex.AppendEncode(dst, l.TraceID[:])
	dst = append(dst, `","span_id":"`...)
	dst = hex.AppendEncode(dst, l.SpanID[:])
	dst = append(dst, `","parent_span_id":`...)
	if l.ParentSpanID.IsValid() {
		dst = append(dst, '"')
		dst = hex.AppendEncode(dst, l.ParentSpanID[:])
		dst = append(dst, '"')
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"name":`...)
	dst = ojson.AppendString(dst, l.Name)
	dst = append(dst, `,"kind":`...)
	dst = ojson.AppendString(dst, nameOf(spanKindNames, l.Kind, "unspecified"))
	dst = append(dst, `,"start_time_unix_nano":`...)
	dst = appendTime(dst, l.StartTime, false)
	dst = append(dst, `,"end_time_unix_nano":`...)
	dst = appendTime(dst, l.EndTime, true)
	dst = append(dst, `,"status_code":`...)
	dst = ojson.AppendString(dst, nameOf(statusNames, l.StatusCode, "unset"))
	dst = append(dst, `,"attributes":`...)
	dst = appendAttributes(dst, l.Attributes)
	dst = append(dst, `,"events":[`...)
	for i, e := range l.Events {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"name":`...)
		dst = ojson.AppendString(dst, e.Name)
		dst = append(dst, `,"time_unix_nano":`...)
		dst = appendTime(dst, e.Time, false)
		dst = append(dst, `,"attributes":`...)
		dst = appendAttributes(dst, e.Attributes)
		dst = append(dst, '}')
	}
	dst = append(dst, `],"links":[`...)
	for i, k := range l.Links {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"trace_id":"`...)
		dst = hex.AppendEncode(dst, k.TraceID[:])
		dst = append(dst, `","span_id":"`...)
		dst = hex.AppendEncode(dst, k.SpanID[:])
		dst = append(dst, `","attributes":`...)
		dst = appendAttributes(dst, k.Attributes)
		dst = append(dst, '}')
	}
	dst = append(dst, `],"dropped_events":`...)
	dst = strconv.AppendInt(dst, int64(l.DroppedEvents), 10)
	dst = append(dst, `,"dropped_links":`...)
	dst = strconv.AppendInt(dst, int64(l.DroppedLinks), 10)
	return append(dst, "}\n"...)
}

// appendTime writes t as exact integer nanoseconds since the Unix epoch (an [ObservationLine] time:
// past the int64 range too, timeInLine). The zero time (unset) is null when nullable (an end: the
// span has not ended), else 0, OTLP's unset timestamp.
func appendTime(dst []byte, t time.Time, nullable bool) []byte {
	switch {
	case t.IsZero() && nullable:
		return append(dst, "null"...)
	case t.IsZero():
		return append(dst, '0')
	}
	return capture.AppendUnixNano(dst, t)
}

// Bounds of an [ObservationLine] time: int64 nanoseconds before the epoch, uint64 after it.
var (
	minLineTime = time.Unix(0, math.MinInt64)
	maxLineTime = time.Unix(int64(uint64(math.MaxUint64)/1e9), int64(uint64(math.MaxUint64)%1e9))
)

// timeInLine reports whether t (not the zero time) is a time an [ObservationLine] holds.
func timeInLine(t time.Time) bool { return !t.Before(minLineTime) && !t.After(maxLineTime) }

// appendAttributes writes attributes as one JSON object in their order (callers keep them sorted
// and unique).
func appendAttributes(dst []byte, attrs []attribute.KeyValue) []byte {
	dst = append(dst, '{')
	n := 0
	for _, kv := range attrs {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = ojson.AppendString(dst, string(kv.Key))
		dst = append(dst, ':')
		if !lineValueType(kv.Value.Type()) {
			// A value the line format cannot hold (an OTLP map, bytes or a mixed array) keeps
			// its type only, so that the mapping reports the key's wrong type from the file
			// as it does from the span, and the rest of the line stays readable.
			dst = append(dst, `{"`+unsupportedTypeKey+`":`...)
			dst = ojson.AppendString(dst, kv.Value.Type().String())
			dst = append(dst, '}')
			continue
		}
		dst = appendValue(dst, kv.Value)
	}
	return append(dst, '}')
}

// unsupportedTypeKey is the one member of the object that stands for an attribute value of a type
// the line format cannot hold: {"unsupported_type":"SLICE"} (MAP, BYTESLICE, ...; the
// attribute.Type name).
const unsupportedTypeKey = "unsupported_type"

// unsupportedValues are the empty values of the types the line format cannot hold, by type name:
// what a reader gives for an {"unsupported_type":...} value.
var unsupportedValues = map[string]attribute.Value{
	attribute.SLICE.String():     attribute.SliceValue(),
	attribute.MAP.String():       attribute.MapValue(),
	attribute.BYTESLICE.String(): attribute.ByteSliceValue(nil),
	attribute.EMPTY.String():     {},
}

// lineValueType reports whether the observations line format holds values of type t.
func lineValueType(t attribute.Type) bool {
	switch t {
	case attribute.BOOL, attribute.INT64, attribute.FLOAT64, attribute.STRING,
		attribute.BOOLSLICE, attribute.INT64SLICE, attribute.FLOAT64SLICE, attribute.STRINGSLICE:
		return true
	}
	return false
}

func appendValue(dst []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		return strconv.AppendBool(dst, v.AsBool())
	case attribute.INT64:
		return strconv.AppendInt(dst, v.AsInt64(), 10)
	case attribute.FLOAT64:
		return appendFloatValue(dst, v.AsFloat64())
	case attribute.STRING:
		return ojson.AppendString(dst, v.AsString())
	case attribute.BOOLSLICE:
		return appendSlice(dst, v.AsBoolSlice(), strconv.AppendBool)
	case attribute.INT64SLICE:
		return appendSlice(dst, v.AsInt64Slice(), func(d []byte, n int64) []byte { return strconv.AppendInt(d, n, 10) })
	case attribute.FLOAT64SLICE:
		return appendSlice(dst, v.AsFloat64Slice(), appendFloatValue)
	case attribute.STRINGSLICE:
		return appendSlice(dst, v.AsStringSlice(), ojson.AppendString)
	}
	return append(dst, "null"...)
}

func appendSlice[T any](dst []byte, vs []T, f func([]byte, T) []byte) []byte {
	dst = append(dst, '[')
	for i, v := range vs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = f(dst, v)
	}
	return append(dst, ']')
}

// appendFloatValue writes a finite float with a fraction or exponent (orjson's text, SPEC §0 D6:
// 1.0, 0.00001), and a non-finite one as a string.
func appendFloatValue(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	return ojson.AppendFloat(dst, f)
}

var spanKindNames = map[trace.SpanKind]string{
	trace.SpanKindUnspecified: "unspecified",
	trace.SpanKindInternal:    "internal",
	trace.SpanKindServer:      "server",
	trace.SpanKindClient:      "client",
	trace.SpanKindProducer:    "producer",
	trace.SpanKindConsumer:    "consumer",
}

var statusNames = map[codes.Code]string{codes.Unset: "unset", codes.Ok: "ok", codes.Error: "error"}

// nameOf is names[k], or def when k has no name.
func nameOf[K comparable](names map[K]string, k K, def string) string {
	if s, ok := names[k]; ok {
		return s
	}
	return def
}

// valueOf is the key whose name is name, and whether there is one.
func valueOf[K comparable](names map[K]string, name string) (K, bool) {
	for k, n := range names {
		if n == name {
			return k, true
		}
	}
	var zero K
	return zero, false
}

// DecodeObservationLine decodes one line of the observations file (the format of
// [ObservationLine]; surrounding whitespace allowed). It is strict about what it reads — strict
// JSON (SPEC §0 D6), every key present with its type, ids of the right length in lowercase hex
// and non-zero, a valid rollout id ([capture.ValidateRolloutID]), known kind and status names,
// integers within int64 — and ignores unknown keys. The error names the key and the rule, never
// the line's content. Safe for concurrent use.
func DecodeObservationLine(b []byte) (ObservationLine, error) {
	v, err := ojson.Parse(b)
	if err != nil {
		return ObservationLine{}, errors.New("agentobs: observation line: not strict JSON")
	}
	if v.Kind() != ojson.KindObject {
		return ObservationLine{}, errors.New("agentobs: observation line: not a JSON object")
	}
	d := lineDecoder{obj: v}
	var l ObservationLine
	l.RolloutID = d.str("rollout_id")
	if d.err == nil {
		if err := capture.ValidateRolloutID(l.RolloutID); err != nil {
			d.fail("rollout_id", "is not a valid rollout id")
		}
	}
	l.TraceID = trace.TraceID(d.hexID("trace_id", 16, false))
	l.SpanID = trace.SpanID(d.hexID("span_id", 8, false))
	l.ParentSpanID = trace.SpanID(d.hexID("parent_span_id", 8, true))
	l.Name = d.str("name")
	var ok bool
	if l.Kind, ok = valueOf(spanKindNames, d.str("kind")); d.err == nil && !ok {
		d.fail("kind", "is not a span kind")
	}
	l.StartTime = d.time("start_time_unix_nano")
	l.EndTime = d.time("end_time_unix_nano")
	if l.StatusCode, ok = valueOf(statusNames, d.str("status_code")); d.err == nil && !ok {
		d.fail("status_code", "is not unset, ok or error")
	}
	l.Attributes = d.attributes(d.member("attributes"), "attributes")
	for i, ev := range d.array("events") {
		ed := lineDecoder{obj: ev, path: fmt.Sprintf("events[%d].", i)}
		e := LineEvent{Name: ed.str("name"), Time: ed.time("time_unix_nano")}
		e.Attributes = ed.attributes(ed.member("attributes"), "attributes")
		if ed.err == nil && e.Time.IsZero() {
			ed.fail("time_unix_nano", "is required")
		}
		d.adopt(ed.err)
		l.Events = append(l.Events, e)
	}
	for i, lk := range d.array("links") {
		kd := lineDecoder{obj: lk, path: fmt.Sprintf("links[%d].", i)}
		k := LineLink{TraceID: trace.TraceID(kd.hexID("trace_id", 16, false)), SpanID: trace.SpanID(kd.hexID("span_id", 8, false))}
		k.Attributes = kd.attributes(kd.member("attributes"), "attributes")
		d.adopt(kd.err)
		l.Links = append(l.Links, k)
	}
	l.DroppedEvents = d.count("dropped_events")
	l.DroppedLinks = d.count("dropped_links")
	if d.err == nil && l.StartTime.IsZero() {
		d.fail("start_time_unix_nano", "is required")
	}
	if d.err != nil {
		return ObservationLine{}, d.err
	}
	return l, nil
}

// lineDecoder reads the members of one JSON object; the first problem sticks in err.
type lineDecoder struct {
	obj  ojson.Value
	path string
	err  error
}

func (d *lineDecoder) fail(key, rule string) {
	if d.err == nil {
		d.err = fmt.Errorf("agentobs: observation line: %s%s %s", d.path, key, rule)
	}
}

func (d *lineDecoder) adopt(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *lineDecoder) member(key string) ojson.Value {
	if d.err != nil {
		return ojson.Value{}
	}
	if d.obj.Kind() != ojson.KindObject {
		d.fail("", "is not a JSON object")
		return ojson.Value{}
	}
	v, ok := d.obj.Get(key)
	if !ok {
		d.fail(key, "is missing")
	}
	return v
}

func (d *lineDecoder) str(key string) string {
	v := d.member(key)
	if d.err != nil {
		return ""
	}
	s, ok := v.AsString()
	if !ok {
		d.fail(key, "is not a string")
	}
	return s
}

func (d *lineDecoder) hexID(key string, n int, nullable bool) []byte {
	out := make([]byte, n)
	v := d.member(key)
	if d.err != nil || (nullable && v.IsNull()) {
		return out
	}
	s, _ := v.AsString()
	if len(s) != 2*n {
		d.fail(key, fmt.Sprintf("is not %d lowercase hex characters", 2*n))
	} else if _, err := hex.Decode(out, []byte(s)); err != nil || hex.EncodeToString(out) != s {
		d.fail(key, fmt.Sprintf("is not %d lowercase hex characters", 2*n))
	} else if !slices.ContainsFunc(out, func(c byte) bool { return c != 0 }) {
		d.fail(key, "is all zeros")
	}
	return out
}

func (d *lineDecoder) time(key string) time.Time {
	v := d.member(key)
	if d.err != nil || v.IsNull() {
		return time.Time{}
	}
	if ns, ok := v.Int64(); ok {
		return time.Unix(0, ns).UTC()
	}
	if text, ok := v.NumberText(); ok {
		if u, err := strconv.ParseUint(text, 10, 64); err == nil { // past MaxInt64 (an OTLP timestamp)
			return time.Unix(int64(u/1e9), int64(u%1e9)).UTC()
		}
	}
	d.fail(key, "is not an integer within int64 or uint64, or null")
	return time.Time{}
}

func (d *lineDecoder) count(key string) int {
	v := d.member(key)
	if d.err != nil {
		return 0
	}
	n, ok := v.Int64()
	if !ok || n < 0 || n > math.MaxInt32 {
		d.fail(key, "is not a count")
		return 0
	}
	return int(n)
}

func (d *lineDecoder) array(key string) []ojson.Value {
	v := d.member(key)
	if d.err != nil {
		return nil
	}
	if v.Kind() != ojson.KindArray {
		d.fail(key, "is not an array")
		return nil
	}
	return v.Elems()
}

// attributes decodes a JSON object of typed attribute values (see [ObservationLine]); the result is
// sorted by key, one per key (a repeated key keeps its last value).
func (d *lineDecoder) attributes(v ojson.Value, key string) []attribute.KeyValue {
	if d.err != nil {
		return nil
	}
	if v.Kind() != ojson.KindObject {
		d.fail(key, "is not a JSON object")
		return nil
	}
	var out []attribute.KeyValue
	for _, m := range v.Members() {
		val, ok := attributeValue(m.Value)
		if !ok {
			d.fail(key+"."+m.Key, "is not a typed attribute value")
			return nil
		}
		out = append(out, attribute.KeyValue{Key: attribute.Key(m.Key), Value: val})
	}
	// Stable sort, then keep the last of each key.
	slices.SortStableFunc(out, func(x, y attribute.KeyValue) int { return cmp.Compare(x.Key, y.Key) })
	uniq := out[:0]
	for i, kv := range out {
		if i+1 < len(out) && out[i+1].Key == kv.Key {
			continue
		}
		uniq = append(uniq, kv)
	}
	return uniq
}

// attributeValue decodes one typed attribute value.
func attributeValue(v ojson.Value) (attribute.Value, bool) {
	switch v.Kind() {
	case ojson.KindBool:
		b, _ := v.AsBool()
		return attribute.BoolValue(b), true
	case ojson.KindString:
		s, _ := v.AsString()
		return attribute.StringValue(s), true
	case ojson.KindNumber:
		if v.IsInteger() {
			n, ok := v.Int64()
			return attribute.Int64Value(n), ok
		}
		f, ok := v.Float64()
		return attribute.Float64Value(f), ok
	case ojson.KindArray:
		return sliceValue(v.Elems())
	case ojson.KindObject:
		if m := v.Members(); len(m) == 1 && m[0].Key == unsupportedTypeKey {
			name, _ := m[0].Value.AsString()
			u, ok := unsupportedValues[name]
			return u, ok
		}
	}
	return attribute.Value{}, false
}

// sliceValue decodes a homogeneous array: strings, booleans, integers, or numbers of which at
// least one has a fraction or exponent (floats).
func sliceValue(elems []ojson.Value) (attribute.Value, bool) {
	if len(elems) == 0 {
		return attribute.StringSliceValue([]string{}), true
	}
	switch elems[0].Kind() {
	case ojson.KindString:
		out, ok := sliceOf(elems, ojson.Value.AsString)
		return attribute.StringSliceValue(out), ok
	case ojson.KindBool:
		out, ok := sliceOf(elems, ojson.Value.AsBool)
		return attribute.BoolSliceValue(out), ok
	case ojson.KindNumber:
		if !slices.ContainsFunc(elems, func(e ojson.Value) bool { return !e.IsInteger() }) {
			out, ok := sliceOf(elems, ojson.Value.Int64)
			return attribute.Int64SliceValue(out), ok
		}
		out, ok := sliceOf(elems, ojson.Value.Float64)
		return attribute.Float64SliceValue(out), ok
	}
	return attribute.Value{}, false
}

// sliceOf reads every element with get; ok is false when one does not read.
func sliceOf[T any](elems []ojson.Value, get func(ojson.Value) (T, bool)) ([]T, bool) {
	out := make([]T, len(elems))
	for i, e := range elems {
		v, ok := get(e)
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}
