package rederive

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A complete chat stream, its reassembly, and a cut-off one.
const (
	chatSSE     = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\ndata: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	chatPartial = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n"
)

func rec(status, category, response, raw string) string {
	return `{"model_call_id":"0123456789abcdef0123456789abcdef","dialect":"chat","model_ref":null,"started_at":1.5,"completed_at":2.5,"latency_ms":1000.0,"latency_ttft_ms":10.0,"status_code":` +
		status + `,"error_category":` + category + `,"request":{"model":"m","stream":true},"response":` + response + raw + `,"trace_id":"0123456789abcdef0123456789abcdef","span_id":"0123456789abcdef"}`
}

func rawKey(s string) string {
	b, _ := json.Marshal(s)
	return `,"response_raw":` + string(b)
}

func TestLine(t *testing.T) {
	got, err := Line([]byte(rec("200", "null", "null", rawKey(chatSSE))))
	require.NoError(t, err)
	// What today's reassembly makes of chatSSE: the reference for the cases below.
	var fixed map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(got.Line, &fixed))
	want := string(fixed["response"])
	require.NotEqual(t, "null", want)

	tests := []struct {
		name        string
		in          string
		changed     bool
		newCategory string
		skipped     bool
		response    string // expected response text when changed ("" = do not check)
	}{
		{"current complete stream", rec("200", "null", want, rawKey(chatSSE)), false, "", false, ""},
		{"stream left unparsed by an older version", rec("200", `"capture_parse_error"`, "null", rawKey(chatSSE)), true, "", false, want},
		{"complete stream called truncated", rec("200", `"stream_truncated"`, "{}", rawKey(chatSSE)), true, "", false, want},
		{"truncated stream without its category", rec("200", "null", "null", rawKey(chatPartial)), true, "stream_truncated", false, ""},
		{"status category kept, response rebuilt", rec("429", `"rate_limit"`, "null", rawKey(chatSSE)), true, "rate_limit", false, want},
		{"status 500 upstream_error kept", rec("500", `"upstream_error"`, want, rawKey(chatSSE)), false, "upstream_error", false, ""},
		{"client cancel kept", rec("200", `"cancelled"`, "null", rawKey(chatPartial)), true, "cancelled", false, ""},
		{"connection kept", rec("200", `"connection"`, "null", rawKey(chatSSE)), true, "connection", false, want},
		{"timeout without status kept", rec("null", `"timeout"`, "null", rawKey(chatPartial)), true, "timeout", false, ""},
		{"exception path untouched", rec("200", `"exception"`, "null", rawKey(chatSSE)), false, "exception", true, ""},
		{"no response_raw", rec("200", "null", `{"id":"x"}`, ""), false, "", true, ""},
		{"status as a string", rec(`"200"`, "null", "null", rawKey(chatSSE)), false, "", true, ""},
		{"category of another type", rec("200", "7", "null", rawKey(chatSSE)), false, "", true, ""},
		{"unknown dialect", `{"dialect":"completions","status_code":200,"error_category":null,"response":null,"response_raw":"data: {}\n\n"}`, false, "", true, ""},
		{"plain text body stays a parse error", rec("200", `"capture_parse_error"`, "null", rawKey("upstream said no")), false, "capture_parse_error", false, ""},
		{"plain text body without category", rec("200", "null", "null", rawKey("upstream said no")), true, "capture_parse_error", false, ""},
		{"JSON body kept as text", rec("200", `"capture_parse_error"`, "null", rawKey(`{"id":"x","model":"m"}`)), true, "", false, `{"id":"x","model":"m"}`},
		// A body of ill-formed UTF-8 is stored with U+FFFD in its place, and was not an object (SPEC
		// D6); the stored text parses, but rederive must not turn the malformed answer into a clean
		// one (from a new-user trial: a record this version wrote lost its capture_parse_error).
		{"replaced ill-formed UTF-8 kept", rec("200", `"capture_parse_error"`, "null", rawKey("{\"id\":\"x\",\"c\":\"\ufffd\ufffd(\"}")), false, "capture_parse_error", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Line([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.changed, res.Changed, "result %+v", res)
			assert.Equal(t, tt.newCategory, res.NewCategory)
			assert.Equal(t, tt.skipped, res.Skipped != "", "skipped %q", res.Skipped)
			if !tt.changed {
				assert.Equal(t, tt.in, string(res.Line), "an unchanged record is returned byte for byte")
				return
			}
			var obj map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(res.Line, &obj), "the output is one JSON object")
			if tt.response != "" {
				assert.JSONEq(t, tt.response, string(obj["response"]))
			}
			assert.Contains(t, obj, "trace_id", "other keys are kept")
			again, err := Line(res.Line)
			require.NoError(t, err)
			assert.False(t, again.Changed, "rederiving the output again changes nothing")
		})
	}
}

func TestLineNotAnObject(t *testing.T) {
	for _, in := range []string{"", "[1]", "{torn", `"s"`} {
		_, err := Line([]byte(in))
		assert.Error(t, err, "%q", in)
	}
}

func TestLineKeepsKeyOrderWhenDroppingRaw(t *testing.T) {
	in := `{"model_call_id":"a","dialect":"responses","status_code":200,"error_category":"capture_parse_error","response":null,"response_raw":"{\"id\": \"r\"}","trace_id":"t"}`
	res, err := Line([]byte(in))
	require.NoError(t, err)
	assert.Equal(t, `{"model_call_id":"a","dialect":"responses","status_code":200,"error_category":null,"response":{"id":"r"},"trace_id":"t"}`, string(res.Line))
	assert.True(t, res.ResponseRawDropped)
}

func FuzzLine(f *testing.F) {
	f.Add([]byte(rec("200", "null", "null", rawKey(chatSSE))))
	f.Add([]byte(rec("200", `"stream_truncated"`, "{}", rawKey(chatPartial))))
	f.Add([]byte(`{"dialect":"messages","response_raw":"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n","status_code":null}`))
	f.Add([]byte(`{"dialect":"responses","response_raw":"{\"a\":1}","response":null,"error_category":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Line(data)
		if err != nil {
			return
		}
		if !res.Changed {
			return
		}
		var obj map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(res.Line, &obj), "output %q", res.Line)
		again, err := Line(res.Line)
		require.NoError(t, err)
		require.False(t, again.Changed, "not idempotent:\n in: %q\nout: %q\nout2: %q", data, res.Line, again.Line)
	})
}

func BenchmarkLine(b *testing.B) {
	for _, bc := range []struct{ name, in string }{
		{"unchanged stream", ""},
		{"rebuilt stream", rec("200", `"capture_parse_error"`, "null", rawKey(chatSSE))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			in := []byte(bc.in)
			if bc.in == "" {
				res, err := Line([]byte(rec("200", "null", "null", rawKey(chatSSE))))
				require.NoError(b, err)
				in = res.Line
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if _, err := Line(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
