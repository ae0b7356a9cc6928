package capture

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/ojson"
)

// TestExchangeGolden rebuilds each raw_record_golden.json exchange from its inputs with this
// package's pieces (payload split, RoundMS, Category) and compares the encoded line byte for byte.
// Stream reassembly is sdk/stream's: for SSE cases the expected line's response object is used.
func TestExchangeGolden(t *testing.T) {
	cases := testvectors.Load(t, "raw_record_golden.json")
	require.Len(t, cases, 7)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			in := testvectors.Value(t, c.Input)
			want := mustString(t, testvectors.Value(t, c.Expected))
			resp := get(in, "response")

			e := Exchange{
				ModelCallID: mustString(t, get(in, "model_call_id")),
				Dialect:     dialectOfPath(t, mustString(t, get(in, "path"))),
				ModelRef:    &ModelRef{Type: ModelRefType, Name: mustString(t, get(in, "model_server_name"))},
				StartedAt:   *vecFloat(t, get(in, "started_at")),
				CompletedAt: *vecFloat(t, get(in, "completed_at")),
				LatencyMS:   RoundMS(*vecFloat(t, get(in, "latency_ms_unrounded"))),
			}
			ttft := RoundMS(*vecFloat(t, get(in, "latency_ttft_ms_unrounded")))
			e.LatencyTTFTMS = &ttft
			status, ok := get(resp, "status").Int64()
			require.True(t, ok)
			e.StatusCode = intPtr(int(status))
			e.Request, e.RequestRaw = RequestPayload([]byte(mustString(t, get(in, "request_body"))))

			var body []byte
			for _, ch := range get(resp, "chunks").Elems() {
				body = append(body, mustString(t, ch)...)
			}
			sse := strings.HasPrefix(mustString(t, get(resp, "content_type")), "text/event-stream")
			ci := CategoryInput{Status: e.StatusCode, SSE: sse, BodyNonEmpty: len(body) > 0}
			switch {
			case !get(in, "raises_after_chunks").IsNull():
				e.ResponseRaw = RawText(body)
				ci.Transport = ClassifyException(mustString(t, get(in, "raises_after_chunks")), false)
			case sse:
				wantLine, err := ojson.Parse([]byte(want))
				require.NoError(t, err)
				e.Response = get(wantLine, "response").AppendJSON(nil)
				e.ResponseRaw = RawText(body)
				ci.Terminal = testTerminal(t, e.Dialect, body)
			default:
				e.Response, e.ResponseRaw = ResponsePayload(body)
			}
			ci.ResponseNull = e.Response == nil
			e.ErrorCategory = Category(ci)
			require.NoError(t, e.Validate())

			got := string(e.AppendJSON(nil))
			assert.Equal(t, want, got)

			// The trace pair goes last (SPEC §0 "Record keys").
			e.TraceID, e.SpanID = strings.Repeat("ab", 16), strings.Repeat("cd", 8)
			withIDs := string(e.AppendJSON([]byte("prefix")))
			assert.Equal(t, "prefix"+strings.TrimSuffix(want, "}\n")+`,"trace_id":"`+e.TraceID+`","span_id":"`+e.SpanID+"\"}\n", withIDs)

			// A gymtrace line is a readable record.
			rec, err := BuildModelCallRecord([]byte(strings.TrimSuffix(got, "\n")), 0)
			require.NoError(t, err)
			require.NotNil(t, rec.ModelCallID)
			assert.Equal(t, e.ModelCallID, *rec.ModelCallID)
		})
	}
}

func TestExchangeNullsAndOptionalKeys(t *testing.T) {
	e := Exchange{ModelCallID: "id", Dialect: "chat", StartedAt: 100, CompletedAt: 100.5, LatencyMS: 0}
	assert.Equal(t, `{"model_call_id":"id","dialect":"chat","model_ref":null,"started_at":100.0,"completed_at":100.5,"latency_ms":0.0,"latency_ttft_ms":null,"status_code":null,"error_category":null,"request":null,"response":null}`+"\n",
		string(e.AppendJSON(nil)))
	raw := "a\u2028<b>\x00"
	e.RequestRaw, e.ErrorCategory, e.SpanID = &raw, "timeout", "0123456789abcdef"
	assert.Equal(t, `{"model_call_id":"id","dialect":"chat","model_ref":null,"started_at":100.0,"completed_at":100.5,"latency_ms":0.0,"latency_ttft_ms":null,"status_code":null,"error_category":"timeout","request":null,"response":null,"request_raw":"a`+"\u2028"+`<b>\u0000","span_id":"0123456789abcdef"}`+"\n",
		string(e.AppendJSON(nil)))
}

func TestExchangeValidate(t *testing.T) {
	valid := func() Exchange {
		return Exchange{ModelCallID: "id", Dialect: "chat", Request: []byte(`{"a":1}`), Response: []byte(`{}`),
			ModelRef: &ModelRef{Type: ModelRefType, Name: "m"}, TraceID: strings.Repeat("a", 32), SpanID: strings.Repeat("b", 16)}
	}
	tests := []struct {
		name   string
		mutate func(*Exchange)
		errHas string
	}{
		{"valid", func(*Exchange) {}, ""},
		{"empty id", func(e *Exchange) { e.ModelCallID = "" }, "model_call_id"},
		{"empty dialect", func(e *Exchange) { e.Dialect = "" }, "dialect"},
		{"bad model_ref type", func(e *Exchange) { e.ModelRef.Type = "resources_servers" }, "model_ref.type"},
		{"request not JSON", func(e *Exchange) { e.Request = []byte(`{"a":`) }, "request"},
		{"response not an object", func(e *Exchange) { e.Response = []byte(`[1]`) }, "not an object"},
		{"request NaN", func(e *Exchange) { e.Request = []byte(`{"a":NaN}`) }, "not strict JSON"},
		{"trace id upper", func(e *Exchange) { e.TraceID = strings.Repeat("A", 32) }, "trace_id"},
		{"span id short", func(e *Exchange) { e.SpanID = "abc" }, "span_id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := valid()
			tc.mutate(&e)
			err := e.Validate()
			if tc.errHas == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.errHas)
		})
	}
}

func BenchmarkExchangeAppendJSON(b *testing.B) {
	ttft, status := 213.4, 200
	raw := "data: {\"choices\":[{\"delta\":{\"content\":\"Grüß dich\"}}]}\n\ndata: [DONE]\n\n"
	e := Exchange{
		ModelCallID: "863410a8d52e4be6a31efc5c6e9d4629", Dialect: "chat",
		ModelRef:  &ModelRef{Type: ModelRefType, Name: "policy_model"},
		StartedAt: 1786032154.1234567, CompletedAt: 1786032154.9661233, LatencyMS: 842.7, LatencyTTFTMS: &ttft,
		StatusCode: &status, Request: []byte(`{"model":"policy","messages":[{"role":"user","content":"What is 2+2?"}]}`),
		Response:    []byte(`{"object":"chat.completion","model":"policy","choices":[{"index":0,"message":{"role":"assistant","content":"4"},"finish_reason":"stop"}]}`),
		ResponseRaw: &raw, TraceID: strings.Repeat("ab", 16), SpanID: strings.Repeat("cd", 8),
	}
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = e.AppendJSON(buf[:0])
	}
}
