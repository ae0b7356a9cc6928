package capture

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/ojson"
)

// TestRecordsVectors runs every records.json case (SPEC §3.2, §8 #6–16) and compares the full
// dump byte for byte, which checks key order, nulls and number text.
func TestRecordsVectors(t *testing.T) {
	cases := testvectors.Load(t, "records.json")
	require.Len(t, cases, 41)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			in := testvectors.Value(t, c.Input)
			line := get(in, "exchange").AppendJSON(nil)
			idx, ok := get(in, "call_index").Int64()
			require.True(t, ok)
			rec, err := BuildModelCallRecord(line, int(idx))
			if vecWantsError(t, c.Expected) {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, testvectors.Canonical(t, c.Expected), string(rec.AppendJSON(nil, true)))
		})
	}
}

func TestToolCallsVectors(t *testing.T) {
	cases := testvectors.Load(t, "tool_calls.json")
	require.Len(t, cases, 53)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			in := testvectors.Value(t, c.Input)
			switch fn := mustString(t, get(in, "fn")); fn {
			case "args":
				assert.Equal(t, testvectors.Canonical(t, c.Expected), string(argumentsText(get(in, "value"))))
			case "tool_calls_and_reasoning":
				calls, reasoning, err := toolCallsAndReasoning(get(in, "response"))
				if vecWantsError(t, c.Expected) {
					require.Error(t, err)
					assert.Contains(t, err.Error(), "TypeError")
					return
				}
				require.NoError(t, err)
				got := []byte(`{"tool_calls":[`)
				for i := range calls {
					if i > 0 {
						got = append(got, ',')
					}
					got = calls[i].appendJSON(got)
				}
				got = append(got, `],"reasoning_content":`...)
				got = appendStrPtr(got, reasoning)
				got = append(got, '}')
				assert.Equal(t, testvectors.Canonical(t, c.Expected), string(got))
			default:
				t.Fatalf("unknown fn %q", fn)
			}
		})
	}
}

func TestTokensVectors(t *testing.T) {
	cases := testvectors.Load(t, "tokens.json")
	require.Len(t, cases, 46)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			s := extractTokenStats(testvectors.Value(t, c.Input))
			got := []byte(`{"tokens_in":`)
			got = appendIntPtr(got, s.TokensIn)
			got = append(got, `,"tokens_out":`...)
			got = appendIntPtr(got, s.TokensOut)
			got = append(got, `,"tokens_reasoning":`...)
			got = appendIntPtr(got, s.TokensReasoning)
			got = append(got, `,"tokens_total":`...)
			got = appendIntPtr(got, s.TokensTotal)
			got = append(got, `,"cached_tokens":`...)
			got = appendIntPtr(got, s.CachedTokens)
			got = append(got, `,"cache_hit":`...)
			if s.CacheHit == nil {
				got = append(got, "null"...)
			} else {
				got = ojson.Bool(*s.CacheHit).AppendJSON(got)
			}
			got = append(got, `,"cache_creation_tokens":`...)
			got = appendIntPtr(got, s.CacheCreationTokens)
			got = append(got, '}')
			assert.Equal(t, testvectors.Canonical(t, c.Expected), string(got))
		})
	}
}

func TestTokenCountOverflow(t *testing.T) {
	usage, err := ojson.Parse([]byte(`{"input_tokens":9223372036854775807,"output_tokens":1,"cache_read_input_tokens":5}`))
	require.NoError(t, err)
	s := extractTokenStats(usage)
	assert.Nil(t, s.TokensIn, "fold overflow is treated as invalid")
	assert.Nil(t, s.TokensTotal)
	require.NotNil(t, s.CachedTokens)
	assert.Equal(t, int64(5), *s.CachedTokens)

	usage, err = ojson.Parse([]byte(`{"input_tokens":18446744073709551615,"prompt_tokens":3}`))
	require.NoError(t, err)
	s = extractTokenStats(usage)
	require.NotNil(t, s.TokensIn)
	assert.Equal(t, int64(3), *s.TokensIn, "a count beyond int64 is invalid, so the fallback applies")
}

// TestRecordSchema is SPEC §8 #9: the dump has exactly the 27 fields, in order, and the payload
// keys only with payloads.
func TestRecordSchema(t *testing.T) {
	rec, err := BuildModelCallRecord([]byte(`{}`), 0)
	require.NoError(t, err)
	for _, payloads := range []bool{true, false} {
		v, err := ojson.Parse(rec.AppendJSON(nil, payloads))
		require.NoError(t, err)
		var keys []string
		for _, m := range v.Members() {
			keys = append(keys, m.Key)
		}
		want := RecordFieldNames
		if !payloads {
			want = nil
			for _, k := range RecordFieldNames {
				if !slices.Contains(PayloadFieldNames, k) {
					want = append(want, k)
				}
			}
			assert.Len(t, want, 23)
		}
		assert.Equal(t, want, keys)
	}
	assert.Len(t, RecordFieldNames, 27)
}

func TestBuildModelCallRecordErrors(t *testing.T) {
	tests := []struct{ name, line, errHas string }{
		{"not JSON", `{not-json}`, "not strict JSON"},
		{"NaN", `{"latency_ms":NaN}`, "not strict JSON"},
		{"array", `[1]`, "not an object"},
		{"dialect int", `{"dialect":5}`, "dialect"},
		{"error_category int", `{"error_category":1}`, "error_category"},
		{"model_ref string", `{"model_ref":"srv"}`, "model_ref"},
		{"model_ref missing name", `{"model_ref":{"type":"responses_api_models"}}`, "model_ref.name"},
		{"status fractional", `{"status_code":200.5}`, "status_code"},
		{"status word", `{"status_code":"ok"}`, "status_code"},
		{"status list", `{"status_code":[200]}`, "status_code"},
		{"status beyond int64", `{"status_code":18446744073709551615}`, "status_code"},
		{"started_at object", `{"started_at":{}}`, "started_at"},
		{"latency string", `{"latency_ms":"fast"}`, "latency_ms"},
		{"chat tool_calls number", `{"response":{"choices":[{"message":{"tool_calls":5}}]}}`, "TypeError"},
		{"summary true", `{"response":{"output":[{"type":"reasoning","summary":true}]}}`, "'bool'"},
		{"summary float", `{"response":{"output":[{"type":"reasoning","summary":1.5}]}}`, "'float'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := BuildModelCallRecord([]byte(tc.line), 0)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.errHas)
		})
	}
}

func TestBuildModelCallRecordLax(t *testing.T) {
	tests := []struct {
		line   string
		status *int
		start  *float64
	}{
		{`{"status_code":" 200 "}`, intPtr(200), nil},
		{`{"status_code":"200.00"}`, intPtr(200), nil},
		{`{"status_code":"2_00"}`, intPtr(200), nil},
		{`{"status_code":"+201"}`, intPtr(201), nil},
		{`{"status_code":2e2}`, intPtr(200), nil},
		{`{"status_code":false}`, intPtr(0), nil},
		{`{"status_code":null,"started_at":"100.5"}`, nil, floatPtr(100.5)},
		{`{"started_at":true}`, nil, floatPtr(1)},
		{`{"started_at":1e2}`, nil, floatPtr(100)},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			rec, err := BuildModelCallRecord([]byte(tc.line), 0)
			require.NoError(t, err)
			assert.Equal(t, tc.status, rec.StatusCode)
			assert.Equal(t, tc.start, rec.StartedAt)
		})
	}
}

func floatPtr(f float64) *float64 { return &f }

// TestBuildModelCallRecordDuplicates: duplicate keys read as Gym's reader reads them (last value,
// first position), in derivations and in the dumped payloads.
func TestBuildModelCallRecordDuplicates(t *testing.T) {
	line := `{"model_call_id":"a","response":{"id":"r1","usage":{"input_tokens":1},"id":"r2","usage":{"input_tokens":7,"output_tokens":1}},"model_call_id":"b"}`
	rec, err := BuildModelCallRecord([]byte(line), 4)
	require.NoError(t, err)
	assert.Equal(t, "b", *rec.ModelCallID)
	assert.Equal(t, "r2", *rec.ResponseID)
	assert.Equal(t, int64(8), *rec.TokensTotal)
	assert.Equal(t, `{"id":"r2","usage":{"input_tokens":7,"output_tokens":1}}`, string(rec.Response))
	assert.Equal(t, 4, rec.CallIndex)
}

func TestExchangeModelCallRecord(t *testing.T) {
	status := 200
	e := Exchange{ModelCallID: "c1", Dialect: "responses", ModelRef: &ModelRef{Type: ModelRefType, Name: "srv"},
		StartedAt: 100, CompletedAt: 100.02, LatencyMS: 18.4, StatusCode: &status,
		Request:  []byte(`{"model":"m","input":"hi"}`),
		Response: []byte(`{"id":"resp-1","status":"completed","usage":{"input_tokens":3,"output_tokens":2,"total_tokens":5}}`)}
	rec, err := e.ModelCallRecord(2)
	require.NoError(t, err)
	assert.Equal(t, `{"model_call_id":"c1","response_id":"resp-1","call_index":2,"model_ref":{"type":"responses_api_models","name":"srv"},"model":"m","dialect":"responses","status_code":200,"response_status":"completed","finish_reason":null,"started_at":100.0,"completed_at":100.02,"tokens_in":3,"tokens_out":2,"tokens_reasoning":null,"tokens_total":5,"tool_calls":[],"reasoning_content":null,"cache_hit":null,"cached_tokens":null,"cache_creation_tokens":null,"error_category":null,"latency_total_ms":18.4,"latency_ttft_ms":null}`,
		string(rec.AppendJSON(nil, false)))
}

func FuzzBuildModelCallRecord(f *testing.F) {
	for _, c := range []string{
		`{}`, `{"response":{"output":[{"type":"reasoning","summary":[{"text":"t"}]},{"type":"function_call","call_id":"c","arguments":"{\"a\":[1,2.50]}"}]}}`,
		`{"response":{"choices":[{"message":{"tool_calls":[{"id":1,"function":{"name":"f","arguments":"NaN"}}],"reasoning":"r"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}}`,
		`{"response":{"content":[{"type":"tool_use","id":"t","input":{"x":1}},{"type":"thinking","thinking":""}],"usage":{"cache_read_input_tokens":5}}}`,
		`{"status_code":"200","started_at":1,"model_ref":{"type":"responses_api_models","name":"n"}}`,
	} {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, err := BuildModelCallRecord(line, 0)
		if err != nil {
			return
		}
		for _, payloads := range []bool{true, false} {
			out := rec.AppendJSON(nil, payloads)
			v, err := ojson.Parse(out)
			if err != nil {
				t.Fatalf("dump is not strict JSON: %v: %s", err, out)
			}
			want := 27
			if !payloads {
				want = 23
			}
			if v.Len() != want {
				t.Fatalf("dump has %d keys, want %d", v.Len(), want)
			}
		}
	})
}

func BenchmarkBuildModelCallRecord(b *testing.B) {
	line := []byte(`{"model_call_id":"863410a8d52e4be6a31efc5c6e9d4629","dialect":"responses","model_ref":{"type":"responses_api_models","name":"policy_model"},"started_at":1786032154.1234567,"completed_at":1786032154.9661233,"latency_ms":842.7,"latency_ttft_ms":213.4,"status_code":200,"error_category":null,"request":{"model":"policy","input":"What is 2+2?","temperature":1.50},"response":{"id":"resp_01","object":"response","status":"completed","model":"policy","output":[{"type":"reasoning","summary":[{"text":"adding"}]},{"type":"function_call","call_id":"c1","name":"calc","arguments":"{\"x\": 1}"},{"type":"message","id":"msg_01","role":"assistant","status":"completed","content":[{"type":"output_text","text":"4","annotations":[]}]}],"usage":{"input_tokens":12,"output_tokens":2,"total_tokens":14,"input_tokens_details":{"cached_tokens":0},"output_tokens_details":{"reasoning_tokens":0}}}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	var buf []byte
	for b.Loop() {
		rec, err := BuildModelCallRecord(line, 0)
		if err != nil {
			b.Fatal(err)
		}
		buf = rec.AppendJSON(buf[:0], false)
	}
}
