package agentobs

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
)

// ObservationLine is one line of <rollout_id>.observations.jsonl: one observation span, reduced to
// what [BundleFromSpans] reads (DESIGN.md "Observations are spans first"). The file sits beside
// the capture file ([capture.ObservationsFileSuffix]) and is written like it: appended whole lines,
// flock, fsync, by the span writer ([capture.Writer] with [ObservationLines]).
//
// # Line format
//
// One compact JSON object per line, UTF-8, newline-terminated, keys in this order:
//
//	{"rollout_id":"r-1",                        the rollout (SPEC §2.2 file-name id)
//	 "trace_id":"<32 hex>","span_id":"<16 hex>", the span's identity (lowercase hex, non-zero)
//	 "parent_span_id":"<16 hex>"|null,           its parent in the same trace; null for none
//	 "name":"execute_tool search",               span name (informative)
//	 "kind":"internal",                          span kind: internal|server|client|producer|consumer|unspecified
//	 "start_time_unix_nano":1700000000123456789, start, integer ns since the Unix epoch (UTC)
//	 "end_time_unix_nano":1700000001000000000,   end, same unit; null for a span that has not ended
//	 "status_code":"unset"|"ok"|"error",         span status code (the description is not kept)
//	 "attributes":{...},                         the span attributes the mapping reads, sorted by key
//	 "events":[{"name":"gymtrace.model_call","time_unix_nano":N,"attributes":{...}}],
//	 "links":[{"trace_id":"..","span_id":"..","attributes":{...}}],
//	 "dropped_events":0,"dropped_links":0}       counts lost to the span's limits
//
// Only the span attributes the mapping reads are kept (the gen_ai.* and gymtrace.* keys listed in
// [BundleFromSpans]'s documentation, and gymtrace.rollout.id), only gymtrace.model_call events, and
// only links that carry model-call reference attributes; events and links keep only
// gymtrace.model_call.id, gen_ai.response.id and gymtrace.model_ref.type/name. Attribute values
// are typed by their JSON form: a string, true/false, an integer (int64), a number with a
// fraction or exponent (float64, always written with one: 1.0), or an array of one of those
// (an empty array is an empty string slice). A float that JSON cannot hold (NaN, ±Inf) is written
// as the string "NaN", "Infinity" or "-Infinity". A value of a type the format cannot hold (an
// OTLP map, bytes, an array of mixed types) is written as its type only, {"unsupported_type":
// "SLICE"} ("MAP", "BYTESLICE", "EMPTY"), and read back as an empty value of that type, so the
// mapping reports the key's wrong type from the file as from the span. Strings are written like
// orjson (SPEC §0 D6).
//
// Times (start, end, an event's) are exact integer nanoseconds since the Unix epoch, as OTLP counts
// them: from -2^63 (year 1677) to 2^64−1 (year 2554), past the int64 range included; an unset start
// or event time (the zero time, OTLP's 0) is 0, an unset end null. A span with a time outside that
// range cannot be written (see [ObservationLines]).
//
// Readers ignore keys they do not know, so later versions may add keys; every key above is
// required.
type ObservationLine struct {
	RolloutID     string
	TraceID       trace.TraceID
	SpanID        trace.SpanID
	ParentSpanID  trace.SpanID // zero: null
	Name          string
	Kind          trace.SpanKind
	StartTime     time.Time
	EndTime       time.Time // zero: null (not ended)
	StatusCode    codes.Code
	Attributes    []attribute.KeyValue // one per key, sorted by key
	Events        []LineEvent
	Links         []LineLink
	DroppedEvents int
	DroppedLinks  int
}

// LineEvent is one gymtrace.model_call event of an [ObservationLine].
type LineEvent struct {
	Name       string
	Time       time.Time
	Attributes []attribute.KeyValue // one per key, sorted by key
}

// LineLink is one link of an [ObservationLine] that carries a model-call reference.
type LineLink struct {
	TraceID    trace.TraceID
	SpanID     trace.SpanID
	Attributes []attribute.KeyValue // one per key, sorted by key
}

// NewObservationLine reduces an observation span of rollout rolloutID to its line (see
// [ObservationLine] for what is kept). Times lose their monotonic clock reading and location. It
// does not check that s is an observation span ([ObservationKind]). Safe for concurrent use.
func NewObservationLine(rolloutID string, s ObservationSpan) ObservationLine {
	l := ObservationLine{
		RolloutID: rolloutID, TraceID: s.TraceID, SpanID: s.SpanID, ParentSpanID: s.ParentSpanID,
		Name: s.Name, Kind: s.Kind, StartTime: canonicalTime(s.StartTime), EndTime: canonicalTime(s.EndTime),
		StatusCode: s.StatusCode, DroppedEvents: s.DroppedEvents, DroppedLinks: s.DroppedLinks,
		Attributes: keep(s.Attributes, spanAttributeKeys),
	}
	for _, e := range s.Events {
		if e.Name == semconv.GymtraceModelCallEventName {
			l.Events = append(l.Events, LineEvent{Name: e.Name, Time: canonicalTime(e.Time), Attributes: keep(e.Attributes, refAttributeKeys)})
		}
	}
	for _, k := range s.Links {
		if attrs := keep(k.Attributes, refAttributeKeys); len(attrs) > 0 {
			l.Links = append(l.Links, LineLink{TraceID: k.TraceID, SpanID: k.SpanID, Attributes: attrs})
		}
	}
	return l
}

// canonicalTime strips the monotonic reading and the location (zero stays zero). It keeps every
// instant: a time whose nanoseconds since the epoch an int64 cannot hold (an OTLP timestamp past
// MaxInt64) stays that time, never a wrapped one.
func canonicalTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.Round(0).UTC()
}

// keep returns the attributes of keys that a holds, sorted by key.
func keep(a capture.AttributeLookup, keys []attribute.Key) []attribute.KeyValue {
	if a == nil {
		return nil
	}
	var out []attribute.KeyValue
	for _, k := range keys {
		if v, ok := a.Lookup(string(k)); ok && v.Type() != attribute.INVALID {
			out = append(out, attribute.KeyValue{Key: k, Value: v})
		}
	}
	slices.SortFunc(out, func(x, y attribute.KeyValue) int { return cmp.Compare(x.Key, y.Key) })
	return out
}

// Span returns the line as the mapping's input. The result shares the line's slices.
func (l ObservationLine) Span() ObservationSpan {
	s := ObservationSpan{
		TraceID: l.TraceID, SpanID: l.SpanID, ParentSpanID: l.ParentSpanID, Name: l.Name, Kind: l.Kind,
		StartTime: l.StartTime, EndTime: l.EndTime, StatusCode: l.StatusCode,
		Attributes: capture.Attributes(l.Attributes), DroppedEvents: l.DroppedEvents, DroppedLinks: l.DroppedLinks,
	}
	if len(l.Events) > 0 {
		s.Events = make([]SpanEvent, len(l.Events))
		for i, e := range l.Events {
			s.Events[i] = SpanEvent{Name: e.Name, Time: e.Time, Attributes: capture.Attributes(e.Attributes)}
		}
	}
	if len(l.Links) > 0 {
		s.Links = make([]SpanLink, len(l.Links))
		for i, k := range l.Links {
			s.Links[i] = SpanLink{TraceID: k.TraceID, SpanID: k.SpanID, Attributes: capture.Attributes(k.Attributes)}
		}
	}
	return s
}

// BuildBundle builds the bundle of the lines of one observations file: [BundleFromSpans] over
// their spans. Safe for concurrent use.
func BuildBundle(lines []ObservationLine) AgentObservationBundle {
	spans := make([]ObservationSpan, len(lines))
	for i := range lines {
		spans[i] = lines[i].Span()
	}
	return BundleFromSpans(spans)
}

// ReadObservations is the tolerant reader of rolloutID's observations file in store: the lines that
// decode ([DecodeObservationLine]) and belong to rolloutID, in file order, and the number of
// damaged non-blank lines (not strict JSON, not an object, not a valid line, or another rollout's
// line) — never their content. exists reports whether the file exists (a missing file gives no
// lines and no error). err reports an invalid id or an I/O failure. Safe for concurrent use.
func ReadObservations(store *capture.Store, rolloutID string) (lines []ObservationLine, damaged int, exists bool, err error) {
	if store == nil {
		return nil, 0, false, errors.New("agentobs: read observations: store is nil")
	}
	raw, invalid, exists, err := store.ReadObservations(rolloutID)
	if err != nil {
		return nil, 0, false, fmt.Errorf("agentobs: %w", err)
	}
	lines, damaged = decodeLines(raw)
	damaged += invalid
	kept := lines[:0]
	for _, l := range lines {
		if l.RolloutID == rolloutID {
			kept = append(kept, l)
		} else {
			damaged++
		}
	}
	return kept, damaged, exists, nil
}

// ReadBundle reads rolloutID's observations file ([ReadObservations]) and builds its bundle
// ([BuildBundle]); damaged lines add the gap observation_lines_unreadable with detail
// "count=<n>" at the end. exists is false, with an empty bundle, when there is no file: the
// rollout has no observations of its own (gymtrace attach then leaves ng_agent_observations
// alone). Safe for concurrent use.
func ReadBundle(store *capture.Store, rolloutID string) (b AgentObservationBundle, exists bool, err error) {
	lines, damaged, exists, err := ReadObservations(store, rolloutID)
	if err != nil || !exists {
		return AgentObservationBundle{}, false, err
	}
	b = BuildBundle(lines)
	if damaged > 0 {
		b.Gaps = append(b.Gaps, ObservationGap{Code: semconv.GapObservationLinesUnreadable, Detail: Ptr("count=" + strconv.Itoa(damaged))})
	}
	return b, true, nil
}

// ParseObservations is the content rule of [ReadObservations] for file content data: lines split
// and checked like the capture file's tolerant reader ([capture.ParseAvailable]), then decoded
// ([DecodeObservationLine]); damaged counts the non-blank lines that did not decode. It does not
// check rollout ids. It never fails and is safe for concurrent use.
func ParseObservations(data []byte) (lines []ObservationLine, damaged int) {
	raw, invalid := capture.ParseAvailable(data)
	lines, damaged = decodeLines(raw)
	return lines, damaged + invalid
}

func decodeLines(raw []capture.IndexedLine) ([]ObservationLine, int) {
	lines := make([]ObservationLine, 0, len(raw))
	damaged := 0
	for _, r := range raw {
		l, err := DecodeObservationLine(r.Line)
		if err != nil {
			damaged++
			continue
		}
		lines = append(lines, l)
	}
	return lines, damaged
}
