package jaegertest

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// traceJSON wraps one span's tags in a /api/traces answer.
func traceJSON(tags string) string {
	return `{"data":[{"traceID":"0102030405060708090a0b0c0d0e0f10","spans":[{"traceID":"0102030405060708090a0b0c0d0e0f10",` +
		`"spanID":"0102030405060708","operationName":"op","references":[],"startTime":1,"duration":2,` +
		`"tags":` + tags + `,"logs":[],"processID":"p1"}],"processes":{"p1":{"serviceName":"svc","tags":[]}}}],` +
		`"total":0,"limit":0,"offset":0,"errors":null}`
}

func TestDecodeTraces(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    []KeyValue
		wantErr string
	}{
		{name: "int64 as string", body: traceJSON(`[{"key":"n","type":"int64","value":"9223372036854775807"}]`),
			want: []KeyValue{{Key: "n", Type: "int64", Value: json.Number("9223372036854775807")}}},
		{name: "int64 as number", body: traceJSON(`[{"key":"n","type":"int64","value":-3}]`),
			want: []KeyValue{{Key: "n", Type: "int64", Value: json.Number("-3")}}},
		{name: "float64", body: traceJSON(`[{"key":"f","type":"float64","value":0.1}]`),
			want: []KeyValue{{Key: "f", Type: "float64", Value: json.Number("0.1")}}},
		{name: "string bool binary", body: traceJSON(`[{"key":"s","type":"string","value":"7"},{"key":"b","type":"bool","value":false},{"key":"x","type":"binary","value":"AAE="}]`),
			want: []KeyValue{{Key: "s", Type: "string", Value: "7"}, {Key: "b", Type: "bool", Value: false}, {Key: "x", Type: "binary", Value: "AAE="}}},
		{name: "int64 overflow", body: traceJSON(`[{"key":"n","type":"int64","value":"9223372036854775808"}]`), wantErr: `tag "n": int64 value "9223372036854775808"`},
		{name: "int64 not numeric", body: traceJSON(`[{"key":"n","type":"int64","value":"x"}]`), wantErr: `tag "n": int64 value "x"`},
		{name: "int64 bool", body: traceJSON(`[{"key":"n","type":"int64","value":true}]`), wantErr: "want a number or numeric string"},
		{name: "jaeger error", body: `{"data":null,"errors":[{"code":500,"msg":"boom"}]}`, wantErr: "jaeger error 500: boom"},
		{name: "no data", body: `{"data":[]}`, wantErr: "no trace in data"},
		{name: "two traces", body: `{"data":[{},{}]}`, wantErr: "2 traces in data, want 1"},
		{name: "not json", body: `<html>`, wantErr: "decode: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := decodeTraces([]byte(tt.body))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Len(t, tr.Spans, 1)
			assert.Equal(t, tt.want, tr.Spans[0].Tags)
			p, ok := tr.ProcessOf(tr.Spans[0])
			require.True(t, ok)
			assert.Equal(t, "svc", p.ServiceName)
		})
	}
}

// FuzzDecodeTraces checks that any answer decodes or errors without a panic, and that every
// decoded int64/float64 tag is a json.Number.
func FuzzDecodeTraces(f *testing.F) {
	f.Add([]byte(traceJSON(`[{"key":"n","type":"int64","value":"12"}]`)))
	f.Add([]byte(traceJSON(`[{"key":"f","type":"float64","value":1e300}]`)))
	f.Add([]byte(`{"data":null,"errors":[{"code":404,"msg":"trace not found"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		tr, err := decodeTraces(body)
		if err != nil {
			return
		}
		for _, s := range tr.Spans {
			for _, kv := range s.Tags {
				if kv.Type == "int64" || kv.Type == "float64" {
					if _, ok := kv.Value.(json.Number); !ok {
						t.Fatalf("tag %q of type %s decoded as %T", kv.Key, kv.Type, kv.Value)
					}
				}
			}
		}
	})
}
