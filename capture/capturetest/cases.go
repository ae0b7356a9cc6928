package capturetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/capture"
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
	return append(out, boundCase(t, out))
}

// boundCase is the first golden call cut short by a capture bound (SPEC §0 D15): its line ends in
// "capture_bound" after trace_id/span_id. It has a model_call_id of its own.
func boundCase(t testing.TB, golden []Case) Case {
	t.Helper()
	if len(golden) == 0 {
		t.Fatalf("capturetest: %s holds no golden line", goldenFile)
	}
	ex := golden[0].ex
	ex.ModelCallID = "d15d15d15d15d15d15d15d15d15d15d1"
	ex.CaptureBound = &capture.CaptureBound{Kind: semconv.CaptureBoundKindDecodeRatio, Limit: 1000, Seen: 6650}
	sp, err := exchangeSpan(&ex, "golden", trace.SpanID{0, 0, 0, 0, 0, 0, 0x1d, 0x15})
	if err != nil {
		t.Fatalf("capturetest: capture bound case: %v", err)
	}
	c := Case{Name: "capture bound (SPEC §0 D15)", Span: sp, ex: ex}
	c.Line = c.Want(sp.TraceID, sp.SpanID)
	return c
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
	return edit(s, sid, replace(semconv.GymtraceRolloutIDKey, attribute.StringValue(rid)))
}

// withAttr returns a copy of s with span id sid whose attribute kv.Key is kv.Value, added when s
// has no such attribute.
func withAttr(s Span, sid trace.SpanID, kv attribute.KeyValue) Span {
	out := edit(s, sid, without(kv.Key))
	out.Attributes = append(out.Attributes, kv)
	return out
}

// without is the edit that drops attribute k.
func without(k attribute.Key) func(attribute.KeyValue) (attribute.KeyValue, bool) {
	return func(kv attribute.KeyValue) (attribute.KeyValue, bool) { return kv, kv.Key != k }
}

// replace is the edit that sets attribute k to v (where the span has k).
func replace(k attribute.Key, v attribute.Value) func(attribute.KeyValue) (attribute.KeyValue, bool) {
	return func(kv attribute.KeyValue) (attribute.KeyValue, bool) {
		if kv.Key == k {
			return attribute.KeyValue{Key: k, Value: v}, true
		}
		return kv, true
	}
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
// lines; the product never needs one: readers derive ModelCallRecords instead). Cases checks that
// the Exchange encodes back to the very line.
func decodeLine(line []byte) (capture.Exchange, error) {
	var l struct {
		ModelCallID   string            `json:"model_call_id"`
		Dialect       string            `json:"dialect"`
		ModelRef      *capture.ModelRef `json:"model_ref"`
		StartedAt     float64           `json:"started_at"`
		CompletedAt   float64           `json:"completed_at"`
		LatencyMS     float64           `json:"latency_ms"`
		LatencyTTFTMS *float64          `json:"latency_ttft_ms"`
		StatusCode    *int              `json:"status_code"`
		ErrorCategory *string           `json:"error_category"`
		Request       json.RawMessage   `json:"request"`
		Response      json.RawMessage   `json:"response"`
		RequestRaw    *string           `json:"request_raw"`
		ResponseRaw   *string           `json:"response_raw"`
		TraceID       string            `json:"trace_id"`
		SpanID        string            `json:"span_id"`
		CaptureBound  *struct {
			Kind  string `json:"kind"`
			Limit int64  `json:"limit"`
			Seen  int64  `json:"seen"`
		} `json:"capture_bound"`
	}
	if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("{")) {
		return capture.Exchange{}, errors.New("decode line: not an object")
	}
	if err := json.Unmarshal(line, &l); err != nil {
		return capture.Exchange{}, fmt.Errorf("decode line: %w", err)
	}
	orNull := func(raw json.RawMessage) json.RawMessage {
		if string(raw) == "null" {
			return nil
		}
		return raw
	}
	e := capture.Exchange{
		ModelCallID:   l.ModelCallID,
		Dialect:       l.Dialect,
		ModelRef:      l.ModelRef,
		StartedAt:     l.StartedAt,
		CompletedAt:   l.CompletedAt,
		LatencyMS:     l.LatencyMS,
		LatencyTTFTMS: l.LatencyTTFTMS,
		StatusCode:    l.StatusCode,
		Request:       orNull(l.Request),
		Response:      orNull(l.Response),
		RequestRaw:    l.RequestRaw,
		ResponseRaw:   l.ResponseRaw,
		TraceID:       l.TraceID,
		SpanID:        l.SpanID,
	}
	if l.ErrorCategory != nil {
		e.ErrorCategory = *l.ErrorCategory
	}
	if b := l.CaptureBound; b != nil {
		e.CaptureBound = &capture.CaptureBound{Kind: b.Kind, Limit: b.Limit, Seen: b.Seen}
	}
	if err := e.Validate(); err != nil {
		return capture.Exchange{}, fmt.Errorf("decode line: %w", err)
	}
	return e, nil
}

// spanTime is a fixed time for spans the suite builds by hand.
var spanTime = time.Unix(1786032154, 123456641).UTC()
