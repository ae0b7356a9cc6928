package capturetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/ojson"
	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/semconv"
)

// goldenFile is the vectors file holding the exact capture lines of SPEC §3.1.
const goldenFile = "raw_record_golden.json"

// suiteTraceID is the trace id of every canonical span.
var suiteTraceID = trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}

// Case is one canonical model call of the suite: a golden capture line of SPEC §3.1 and the
// model-call span a writer must turn back into exactly that line.
type Case struct {
	// Name is the golden vector's name.
	Name string
	// Span is the model-call span: name "chat {model}", kind CLIENT, the golden times, the
	// attributes of [capture.ExchangeAttributes] plus gymtrace.rollout.id = "golden", trace id
	// 4bf92f3577b34da6a3ce929d0e0e4736 and a span id unique among the cases.
	Span Span
	// Line is the line a writer must append for Span: the golden line with Span's trace_id and
	// span_id appended, ending in "\n".
	Line string

	ex capture.Exchange // the golden record without ids
}

// Want returns the line a writer must append for this case's span when it carries trace id tid
// and span id sid instead of Span's (a zero id is left out of the line).
func (c Case) Want(tid trace.TraceID, sid trace.SpanID) string {
	e := c.ex
	if tid.IsValid() {
		e.TraceID = tid.String()
	}
	if sid.IsValid() {
		e.SpanID = sid.String()
	}
	return string(e.AppendJSON(nil))
}

// Cases returns the canonical cases, one per golden line, in the vectors' order. It fails the test
// when the vectors are missing or a golden line does not decode back to its own bytes.
func Cases(t testing.TB) []Case {
	t.Helper()
	vecs := testvectors.Load(t, goldenFile)
	out := make([]Case, 0, len(vecs))
	for i, v := range vecs {
		var line string
		if err := json.Unmarshal(v.Expected, &line); err != nil {
			t.Fatalf("capturetest: %s %q: expected is not a string: %v", goldenFile, v.Name, err)
		}
		ex, err := decodeLine([]byte(line))
		if err != nil {
			t.Fatalf("capturetest: %s %q: %v", goldenFile, v.Name, err)
		}
		if got := string(ex.AppendJSON(nil)); got != line {
			t.Fatalf("capturetest: %s %q: decoded line re-encodes differently:\n got %s\nwant %s", goldenFile, v.Name, got, line)
		}
		sp, err := exchangeSpan(&ex, "golden", trace.SpanID{0, 0, 0, 0, 0, 0, 0x10, byte(i + 1)})
		if err != nil {
			t.Fatalf("capturetest: %s %q: %v", goldenFile, v.Name, err)
		}
		c := Case{Name: v.Name, Span: sp, ex: ex}
		c.Line = c.Want(sp.TraceID, sp.SpanID)
		out = append(out, c)
	}
	return out
}

// exchangeSpan returns the model-call span of e in rollout rid, with span id sid and the attributes
// of capture.ExchangeAttributes(e, opts...).
func exchangeSpan(e *capture.Exchange, rid string, sid trace.SpanID, opts ...capture.AttributeOption) (Span, error) {
	start, err := capture.TimeFromUnixSeconds(e.StartedAt)
	if err != nil {
		return Span{}, fmt.Errorf("started_at: %w", err)
	}
	end, err := capture.TimeFromUnixSeconds(e.CompletedAt)
	if err != nil {
		return Span{}, fmt.Errorf("completed_at: %w", err)
	}
	attrs := append([]attribute.KeyValue{semconv.GymtraceRolloutID(rid)}, capture.ExchangeAttributes(e, opts...)...)
	name := semconv.GenAIOperationNameChat
	for _, kv := range attrs {
		if kv.Key == semconv.GenAIRequestModelKey && kv.Value.AsString() != "" {
			name += " " + kv.Value.AsString()
		}
	}
	return Span{
		Name:       name,
		Kind:       trace.SpanKindClient,
		Start:      start,
		End:        end,
		Attributes: attrs,
		TraceID:    suiteTraceID,
		SpanID:     sid,
	}, nil
}

// withRollout returns a copy of s whose gymtrace.rollout.id is rid and whose span id is sid.
func withRollout(s Span, rid string, sid trace.SpanID) Span {
	return edit(s, sid, func(kv attribute.KeyValue) (attribute.KeyValue, bool) {
		if kv.Key == semconv.GymtraceRolloutIDKey {
			return semconv.GymtraceRolloutID(rid), true
		}
		return kv, true
	})
}

// edit returns a copy of s with span id sid whose attributes are passed through fn (which returns
// the attribute to keep and whether to keep one). s is not modified.
func edit(s Span, sid trace.SpanID, fn func(attribute.KeyValue) (attribute.KeyValue, bool)) Span {
	out := s
	out.SpanID = sid
	out.Attributes = make([]attribute.KeyValue, 0, len(s.Attributes))
	for _, kv := range s.Attributes {
		if kv, ok := fn(kv); ok {
			out.Attributes = append(out.Attributes, kv)
		}
	}
	return out
}

// decodeLine decodes one capture line into its Exchange (the suite's own reader of the golden
// lines; the product never needs one: readers derive ModelCallRecords instead).
func decodeLine(line []byte) (capture.Exchange, error) {
	v, err := ojson.Parse(line)
	if err != nil {
		return capture.Exchange{}, fmt.Errorf("decode line: %w", err)
	}
	if v.Kind() != ojson.KindObject {
		return capture.Exchange{}, fmt.Errorf("decode line: a JSON %s, not an object", v.Kind())
	}
	d := lineDecoder{v: v}
	var e capture.Exchange
	e.ModelCallID = d.str("model_call_id")
	e.Dialect = d.str("dialect")
	if ref, ok := v.Get("model_ref"); ok && !ref.IsNull() {
		rd := lineDecoder{v: ref}
		e.ModelRef = &capture.ModelRef{Type: rd.str("type"), Name: rd.str("name")}
		if rd.err != nil {
			return capture.Exchange{}, fmt.Errorf("decode line: model_ref: %w", rd.err)
		}
	}
	e.StartedAt = d.num("started_at")
	e.CompletedAt = d.num("completed_at")
	e.LatencyMS = d.num("latency_ms")
	e.LatencyTTFTMS = d.optNum("latency_ttft_ms")
	if s := d.optNum("status_code"); s != nil {
		n := int(*s)
		e.StatusCode = &n
	}
	if c := d.optStr("error_category"); c != nil {
		e.ErrorCategory = *c
	}
	e.Request = d.obj("request")
	e.Response = d.obj("response")
	e.RequestRaw = d.optStr("request_raw")
	e.ResponseRaw = d.optStr("response_raw")
	if s := d.optStr("trace_id"); s != nil {
		e.TraceID = *s
	}
	if s := d.optStr("span_id"); s != nil {
		e.SpanID = *s
	}
	if d.err != nil {
		return capture.Exchange{}, fmt.Errorf("decode line: %w", d.err)
	}
	return e, nil
}

// lineDecoder reads typed members of an object, keeping the first error.
type lineDecoder struct {
	v   ojson.Value
	err error
}

func (d *lineDecoder) fail(key, want string) {
	if d.err == nil {
		d.err = fmt.Errorf("%s: want %s", key, want)
	}
}

func (d *lineDecoder) str(key string) string {
	x, ok := d.v.Get(key)
	s, isStr := x.AsString()
	if !ok || !isStr {
		d.fail(key, "a string")
	}
	return s
}

func (d *lineDecoder) optStr(key string) *string {
	x, ok := d.v.Get(key)
	if !ok || x.IsNull() {
		return nil
	}
	s, isStr := x.AsString()
	if !isStr {
		d.fail(key, "a string or null")
		return nil
	}
	return &s
}

func (d *lineDecoder) num(key string) float64 {
	f := d.optNum(key)
	if f == nil {
		d.fail(key, "a number")
		return 0
	}
	return *f
}

func (d *lineDecoder) optNum(key string) *float64 {
	x, ok := d.v.Get(key)
	if !ok || x.IsNull() {
		return nil
	}
	f, isNum := x.Float64()
	if !isNum {
		d.fail(key, "a number or null")
		return nil
	}
	return &f
}

func (d *lineDecoder) obj(key string) json.RawMessage {
	x, ok := d.v.Get(key)
	if !ok || x.IsNull() {
		return nil
	}
	if x.Kind() != ojson.KindObject {
		d.fail(key, "an object or null")
		return nil
	}
	return x.AppendJSON(nil)
}

// spanTime is a fixed time for spans the suite builds by hand.
var spanTime = time.Unix(1786032154, 123456641).UTC()
