package capturetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
)

// lookup implements capture.AttributeLookup over a span's attributes.
type lookup []attribute.KeyValue

func (l lookup) Lookup(key string) (attribute.Value, bool) {
	for _, kv := range l {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// TestCases: every canonical span rebuilds, through the shared mapping, to exactly its Line, and
// every Line is the golden line plus the span's ids.
func TestCases(t *testing.T) {
	cases := Cases(t)
	require.Len(t, cases, len(testvectors.Load(t, goldenFile))+1, "every golden line and the capture bound case")
	seen := map[trace.SpanID]bool{}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			assert.True(t, strings.HasPrefix(c.Span.Name, "chat"), c.Span.Name)
			assert.Equal(t, trace.SpanKindClient, c.Span.Kind)
			assert.False(t, seen[c.Span.SpanID], "span ids are unique")
			seen[c.Span.SpanID] = true

			ex, problems, err := capture.ExchangeFromAttributes(lookup(c.Span.Attributes), c.Span.Start, c.Span.End)
			require.NoError(t, err)
			assert.Empty(t, problems)
			ex.TraceID, ex.SpanID = c.Span.TraceID.String(), c.Span.SpanID.String()
			assert.Equal(t, c.Line, string(ex.AppendJSON(nil)))

			golden := c.Want(trace.TraceID{}, trace.SpanID{})
			wantTail := `,"trace_id":"` + c.Span.TraceID.String() + `","span_id":"` + c.Span.SpanID.String() + `"}` + "\n"
			if c.ex.CaptureBound != nil { // SPEC §0 D15: the key follows trace_id/span_id
				bound := `,"capture_bound":{"kind":"decode_ratio","limit":1000,"seen":6650}`
				golden = strings.Replace(golden, bound, "", 1)
				wantTail = strings.TrimSuffix(wantTail, "}\n") + bound + "}\n"
			}
			assert.Equal(t, strings.TrimSuffix(golden, "}\n")+wantTail, c.Line)

			dec, err := decodeLine([]byte(c.Line))
			require.NoError(t, err)
			assert.Equal(t, c.Line, string(dec.AppendJSON(nil)))
		})
	}
}

func TestDecodeLineErrors(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{name: "not JSON", line: `{"model_call_id":`, want: "decode line"},
		{name: "not an object", line: `[1]`, want: "not an object"},
		{name: "model_call_id missing", line: `{"dialect":"chat","started_at":1.0,"completed_at":1.0,"latency_ms":1.0}`, want: "model_call_id"},
		{name: "latency_ms a string", line: `{"model_call_id":"a","dialect":"chat","started_at":1.0,"completed_at":1.0,"latency_ms":"1"}`, want: "latency_ms"},
		{name: "request not an object", line: `{"model_call_id":"a","dialect":"chat","started_at":1.0,"completed_at":1.0,"latency_ms":1.0,"request":[1]}`, want: "request"},
		{name: "model_ref name missing", line: `{"model_call_id":"a","dialect":"chat","model_ref":{"type":"t"},"started_at":1.0,"completed_at":1.0,"latency_ms":1.0}`, want: "model_ref"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeLine([]byte(tt.line))
			require.Error(t, err)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

// FuzzDecodeLine: decoding never panics, and a decoded line re-encodes to a line that decodes to
// the same record.
func FuzzDecodeLine(f *testing.F) {
	for _, c := range Cases(f) {
		f.Add(c.Line)
	}
	f.Add(`{"model_call_id":"a","dialect":"chat","model_ref":null,"started_at":1,"completed_at":2,"latency_ms":3,"latency_ttft_ms":null,"status_code":200,"error_category":null,"request":null,"response":null}`)
	f.Fuzz(func(t *testing.T, line string) {
		e, err := decodeLine([]byte(line))
		if err != nil {
			return
		}
		again, err := decodeLine(e.AppendJSON(nil))
		require.NoError(t, err)
		assert.Equal(t, string(e.AppendJSON(nil)), string(again.AppendJSON(nil)))
	})
}

func TestDirContents(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.capture.jsonl"), []byte("{}\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.capture.incomplete"), nil, 0o600))
	assert.Equal(t, map[string]string{"a.capture.jsonl": "{}\n", "a.capture.incomplete": ""}, DirContents(t, dir))
	assert.Empty(t, DirContents(t, t.TempDir()))
}
