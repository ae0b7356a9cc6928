package capture

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/semconv"
)

// attrMap implements AttributeLookup over a key/value list (the last value of a key wins).
type attrMap map[string]attribute.Value

func newAttrMap(kvs []attribute.KeyValue) attrMap {
	m := attrMap{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

func (m attrMap) Lookup(key string) (attribute.Value, bool) {
	v, ok := m[key]
	return v, ok
}

// exchangeFromLine decodes one capture line (test helper; the product never needs to).
func exchangeFromLine(t *testing.T, line string) Exchange {
	t.Helper()
	v, err := ojson.Parse([]byte(line))
	require.NoError(t, err)
	var e Exchange
	str := func(k string) string {
		x, ok := v.Get(k)
		require.True(t, ok, k)
		s, ok := x.AsString()
		require.True(t, ok, k)
		return s
	}
	num := func(k string) *float64 {
		x, _ := v.Get(k)
		if x.IsNull() {
			return nil
		}
		f, ok := x.Float64()
		require.True(t, ok, k)
		return &f
	}
	obj := func(k string) json.RawMessage {
		x, _ := v.Get(k)
		if x.IsNull() {
			return nil
		}
		return x.AppendJSON(nil)
	}
	opt := func(k string) *string {
		x, ok := v.Get(k)
		if !ok {
			return nil
		}
		s, ok := x.AsString()
		require.True(t, ok, k)
		return &s
	}
	e.ModelCallID = str("model_call_id")
	e.Dialect = str("dialect")
	if ref, _ := v.Get("model_ref"); !ref.IsNull() {
		tp, _ := ref.Get("type")
		nm, _ := ref.Get("name")
		ts, _ := tp.AsString()
		ns, _ := nm.AsString()
		e.ModelRef = &ModelRef{Type: ts, Name: ns}
	}
	e.StartedAt = *num("started_at")
	e.CompletedAt = *num("completed_at")
	e.LatencyMS = *num("latency_ms")
	e.LatencyTTFTMS = num("latency_ttft_ms")
	if s := num("status_code"); s != nil {
		n := int(*s)
		e.StatusCode = &n
	}
	if c, _ := v.Get("error_category"); !c.IsNull() {
		e.ErrorCategory, _ = c.AsString()
	}
	e.Request = obj("request")
	e.Response = obj("response")
	e.RequestRaw = opt("request_raw")
	e.ResponseRaw = opt("response_raw")
	if s := opt("trace_id"); s != nil {
		e.TraceID = *s
	}
	if s := opt("span_id"); s != nil {
		e.SpanID = *s
	}
	return e
}

func goldenLines(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range testvectors.Load(t, "raw_record_golden.json") {
		var line string
		require.NoError(t, json.Unmarshal(c.Expected, &line))
		out[c.Name] = line
	}
	return out
}

// TestExchangeAttributesRoundTrip: every golden line -> Exchange -> attributes -> Exchange (via the
// span times) -> the identical line (SPEC §0 "Spans": the record is rebuilt from the span).
func TestExchangeAttributesRoundTrip(t *testing.T) {
	for name, line := range goldenLines(t) {
		t.Run(name, func(t *testing.T) {
			e := exchangeFromLine(t, line)
			require.Equal(t, line, string(e.AppendJSON(nil)), "decoder sanity")
			start, err := TimeFromUnixSeconds(e.StartedAt)
			require.NoError(t, err)
			end, err := TimeFromUnixSeconds(e.CompletedAt)
			require.NoError(t, err)

			attrs := ExchangeAttributes(&e)
			got, problems, err := ExchangeFromAttributes(newAttrMap(attrs), start, end)
			require.NoError(t, err)
			assert.Empty(t, problems)
			assert.Equal(t, line, string(got.AppendJSON(nil)))

			got.TraceID, got.SpanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
			want := strings.TrimSuffix(line, "}\n") + `,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7"}` + "\n"
			assert.Equal(t, want, string(got.AppendJSON(nil)), "trace ids come last (SPEC §0 Record keys)")
		})
	}
}

func TestExchangeAttributesValues(t *testing.T) {
	lines := goldenLines(t)
	tests := []struct {
		name   string
		want   map[attribute.Key]attribute.Value
		absent []attribute.Key
	}{
		{
			name: "chat streaming SSE with [DONE]",
			want: map[attribute.Key]attribute.Value{
				semconv.GenAIOperationNameKey:            attribute.StringValue("chat"),
				semconv.GenAIProviderNameKey:             attribute.StringValue("openai"),
				semconv.GenAIRequestModelKey:             attribute.StringValue("policy"),
				semconv.GenAIRequestStreamKey:            attribute.BoolValue(true),
				semconv.GenAIResponseIDKey:               attribute.StringValue("chatcmpl-9"),
				semconv.GenAIResponseModelKey:            attribute.StringValue("policy"),
				semconv.GenAIResponseFinishReasonsKey:    attribute.StringSliceValue([]string{"stop"}),
				semconv.GenAIUsageInputTokensKey:         attribute.Int64Value(8),
				semconv.GenAIUsageOutputTokensKey:        attribute.Int64Value(2),
				semconv.GenAIResponseTimeToFirstChunkKey: attribute.Float64Value(57.1 / 1000),
				semconv.HTTPResponseStatusCodeKey:        attribute.Int64Value(200),
				semconv.GymtraceModelCallIDKey:           attribute.StringValue("0f1e2d3c4b5a69788796a5b4c3d2e1f0"),
				semconv.GymtraceDialectKey:               attribute.StringValue("chat"),
				semconv.GymtraceModelRefTypeKey:          attribute.StringValue("responses_api_models"),
				semconv.GymtraceModelRefNameKey:          attribute.StringValue("policy_model"),
				semconv.GymtraceLatencyMSKey:             attribute.Float64Value(750.0),
				semconv.GymtraceLatencyTTFTMSKey:         attribute.Float64Value(57.1),
			},
			absent: []attribute.Key{
				semconv.ErrorTypeKey, semconv.GymtraceErrorCategoryKey, semconv.GenAIUsageReasoningOutputTokensKey,
				semconv.GenAIUsageCacheReadInputTokensKey, semconv.GenAIUsageCacheCreationInputTokensKey,
				semconv.GymtraceRequestRawKey, semconv.GymtraceRequestRawSizeKey,
			},
		},
		{
			name: "anthropic messages streaming with non-ASCII text",
			want: map[attribute.Key]attribute.Value{
				semconv.GenAIProviderNameKey:                  attribute.StringValue("anthropic"),
				semconv.GenAIResponseIDKey:                    attribute.StringValue("msg_01"),
				semconv.GenAIResponseFinishReasonsKey:         attribute.StringSliceValue([]string{"end_turn"}),
				semconv.GenAIUsageInputTokensKey:              attribute.Int64Value(9),
				semconv.GenAIUsageOutputTokensKey:             attribute.Int64Value(6),
				semconv.GenAIUsageCacheReadInputTokensKey:     attribute.Int64Value(0),
				semconv.GenAIUsageCacheCreationInputTokensKey: attribute.Int64Value(0),
			},
			absent: []attribute.Key{semconv.GenAIUsageReasoningOutputTokensKey},
		},
		{
			name: "responses non-streaming JSON, request numbers normalized",
			want: map[attribute.Key]attribute.Value{
				semconv.GenAIUsageInputTokensKey:           attribute.Int64Value(12),
				semconv.GenAIUsageReasoningOutputTokensKey: attribute.Int64Value(0),
				semconv.GenAIUsageCacheReadInputTokensKey:  attribute.Int64Value(0),
			},
			absent: []attribute.Key{semconv.GenAIRequestStreamKey, semconv.GenAIResponseFinishReasonsKey, semconv.GymtraceResponseRawKey},
		},
		{
			name: "responses JSON 500 error",
			want: map[attribute.Key]attribute.Value{
				semconv.ErrorTypeKey:              attribute.StringValue("upstream_error"),
				semconv.GymtraceErrorCategoryKey:  attribute.StringValue("upstream_error"),
				semconv.HTTPResponseStatusCodeKey: attribute.Int64Value(500),
			},
			absent: []attribute.Key{semconv.GenAIResponseIDKey, semconv.GenAIUsageInputTokensKey},
		},
		{
			name: "request body not an object (422) keeps request_raw",
			want: map[attribute.Key]attribute.Value{
				semconv.GymtraceRequestRawKey:     attribute.StringValue(`[{"role":"user","content":"hi"}]`),
				semconv.GymtraceRequestRawSizeKey: attribute.Int64Value(32),
			},
			absent: []attribute.Key{semconv.GymtraceRequestBodyKey, semconv.GymtraceRequestBodySizeKey, semconv.GenAIRequestModelKey},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, ok := lines[tt.name]
			require.True(t, ok, "golden case %q", tt.name)
			e := exchangeFromLine(t, line)
			m := newAttrMap(ExchangeAttributes(&e))
			for k, want := range tt.want {
				got, ok := m.Lookup(string(k))
				if assert.True(t, ok, "%s present", k) {
					assert.Equal(t, want, got, "%s", k)
				}
			}
			for _, k := range tt.absent {
				_, ok := m.Lookup(string(k))
				assert.False(t, ok, "%s absent", k)
			}
			for _, k := range semconv.PayloadKeys {
				if v, ok := m.Lookup(string(k)); ok {
					sk, _ := semconv.PayloadSizeKey(k)
					size, ok := m.Lookup(string(sk))
					require.True(t, ok)
					assert.Equal(t, int64(len(v.AsString())), size.AsInt64(), "%s.size is its length in bytes", k)
				}
			}
		})
	}
}

func TestExchangeFromAttributesProblems(t *testing.T) {
	base := func() []attribute.KeyValue {
		return []attribute.KeyValue{
			semconv.GymtraceModelCallIDKey.String("id1"),
			semconv.GymtraceDialectKey.String("chat"),
			semconv.GymtraceLatencyMSKey.Float64(1.5),
		}
	}
	start := time.Unix(100, 0)
	end := time.Unix(100, 20_000_000)
	reqBody := string(semconv.GymtraceRequestBodyKey)
	tests := []struct {
		name         string
		extra        []attribute.KeyValue
		wantRequest  string // "" = null
		wantRaw      *string
		wantProblems []string
		wantErr      string
	}{
		{name: "whole body", extra: []attribute.KeyValue{semconv.GymtraceRequestBodyKey.String(`{"a":1}`), semconv.GymtraceRequestBodySizeKey.Int64(7)}, wantRequest: `{"a":1}`},
		{name: "body without size is taken as whole", extra: []attribute.KeyValue{semconv.GymtraceRequestBodyKey.String(`{"a":1}`)}, wantRequest: `{"a":1}`},
		{name: "cut body", extra: []attribute.KeyValue{semconv.GymtraceRequestBodyKey.String(`{"a":`), semconv.GymtraceRequestBodySizeKey.Int64(7)},
			wantProblems: []string{reqBody + ": cut by an attribute limit: 5 of 7 bytes"}},
		{name: "stripped body", extra: []attribute.KeyValue{semconv.GymtraceRequestBodySizeKey.Int64(7)},
			wantProblems: []string{reqBody + ": missing although " + string(semconv.GymtraceRequestBodySizeKey) + " is 7"}},
		{name: "body not an object", extra: []attribute.KeyValue{semconv.GymtraceRequestBodyKey.String(`[1]`)},
			wantProblems: []string{reqBody + ": not a JSON object"}},
		{name: "body with a newline is compacted", extra: []attribute.KeyValue{semconv.GymtraceRequestBodyKey.String("{\n\"a\": 1}")}, wantRequest: `{"a":1}`},
		{name: "cut raw", extra: []attribute.KeyValue{semconv.GymtraceRequestRawKey.String("ab"), semconv.GymtraceRequestRawSizeKey.Int64(3)},
			wantProblems: []string{string(semconv.GymtraceRequestRawKey) + ": cut by an attribute limit: 2 of 3 bytes"}},
		{name: "raw", extra: []attribute.KeyValue{semconv.GymtraceRequestRawKey.String("ab"), semconv.GymtraceRequestRawSizeKey.Int64(2)}, wantRaw: ptr("ab")},
		{name: "mistyped status", extra: []attribute.KeyValue{semconv.HTTPResponseStatusCodeKey.String("200")}, wantErr: string(semconv.HTTPResponseStatusCodeKey) + " must be an integer, got string"},
		{name: "mistyped size", extra: []attribute.KeyValue{semconv.GymtraceResponseRawSizeKey.String("3")}, wantErr: string(semconv.GymtraceResponseRawSizeKey) + " must be an integer"},
		{name: "half a model_ref", extra: []attribute.KeyValue{semconv.GymtraceModelRefNameKey.String("x")}, wantErr: "must be set together"},
		{name: "error category outside its list", extra: []attribute.KeyValue{semconv.GymtraceErrorCategoryKey.String("zzz")},
			wantErr: string(semconv.GymtraceErrorCategoryKey) + ` "zzz" is not an error category: want one of timeout, rate_limit,`},
		{name: "capture bound", extra: captureBound(semconv.CaptureBoundKindInFlightBudget)},
		{name: "capture bound kind outside its list", extra: captureBound("zzz"),
			wantErr: string(semconv.GymtraceCaptureBoundKindKey) + ` "zzz" is not a capture bound kind: want one of response_bytes, decoded_bytes, decode_ratio, in_flight_budget (SPEC §0 D15)`},
		{name: "empty capture bound kind", extra: captureBound(""), wantErr: `"" is not a capture bound kind`},
		{name: "half a capture bound", extra: captureBound(semconv.CaptureBoundKindResponseBytes)[:2], wantErr: "must be set together"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, problems, err := ExchangeFromAttributes(newAttrMap(append(base(), tt.extra...)), start, end)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			if tt.wantRequest == "" {
				assert.Nil(t, e.Request)
			} else {
				assert.Equal(t, tt.wantRequest, string(e.Request))
			}
			assert.Equal(t, tt.wantRaw, e.RequestRaw)
			var got []string
			for _, p := range problems {
				got = append(got, p.Key+": "+p.Reason)
			}
			assert.Equal(t, tt.wantProblems, got)
			assert.Equal(t, 100.0, e.StartedAt)
			assert.Equal(t, 100.02, e.CompletedAt)
			assert.Equal(t, 1.5, e.LatencyMS)
		})
	}
	t.Run("required keys", func(t *testing.T) {
		for _, k := range []attribute.Key{semconv.GymtraceModelCallIDKey, semconv.GymtraceDialectKey, semconv.GymtraceLatencyMSKey} {
			var kvs []attribute.KeyValue
			for _, kv := range base() {
				if kv.Key != k {
					kvs = append(kvs, kv)
				}
			}
			_, _, err := ExchangeFromAttributes(newAttrMap(kvs), start, end)
			assert.ErrorContains(t, err, string(k)+" is required")
		}
	})
}

func ptr(s string) *string { return &s }

// captureBound returns the gymtrace.capture_bound.* attributes of a bound of kind (limit 5, seen 5).
func captureBound(kind string) []attribute.KeyValue {
	return []attribute.KeyValue{
		semconv.GymtraceCaptureBoundKindKey.String(kind),
		semconv.GymtraceCaptureBoundLimitKey.Int64(5),
		semconv.GymtraceCaptureBoundSeenKey.Int64(5),
	}
}

func TestUnixSeconds(t *testing.T) {
	tests := []struct {
		name string
		t    time.Time
		want float64
	}{
		{"whole second", time.Unix(1786032300, 0), 1786032300.0},
		{"quarter (not reachable by float64(ns)/1e9)", time.Unix(1786032201, 250_000_000), 1786032201.25},
		{"milliseconds", time.Unix(100, 20_000_000), 100.02},
		{"before 1970", time.Unix(-2, 500_000_000), -1.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, UnixSeconds(tt.t))
		})
	}
	t.Run("inverse", func(t *testing.T) {
		for _, sec := range []float64{1786032154.1234567, 1786032154.9661233, 1786032400.25, 1786032500.003, 0, -1.5, 1.000000001} {
			tm, err := TimeFromUnixSeconds(sec)
			require.NoError(t, err)
			assert.Equal(t, sec, UnixSeconds(tm), "%v", sec)
		}
		_, err := TimeFromUnixSeconds(math.NaN())
		assert.Error(t, err)
		_, err = TimeFromUnixSeconds(1e300)
		assert.Error(t, err)
	})
}

func BenchmarkExchangeAttributes(b *testing.B) {
	status := 200
	e := Exchange{
		ModelCallID: "863410a8d52e4be6a31efc5c6e9d4629", Dialect: "chat", LatencyMS: 12.5, StatusCode: &status,
		Request:  []byte(`{"model":"policy","stream":true,"messages":[` + strings.Repeat(`{"role":"user","content":"hello"},`, 100) + `{"role":"user","content":"x"}]}`),
		Response: []byte(`{"id":"c","model":"policy","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":8,"completion_tokens":2,"total_tokens":10}}`),
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = ExchangeAttributes(&e)
	}
}
