package gymcaptureexporter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/capturetest"
	"github.com/gymtrace/gymtrace/semconv"
)

// withResponseRaw returns s with its response_raw payload (and size) set to raw.
func withResponseRaw(s capturetest.Span, raw string) capturetest.Span {
	sizeKey, _ := semconv.PayloadSizeKey(semconv.GymtraceResponseRawKey)
	out := s
	out.Attributes = nil
	for _, kv := range s.Attributes {
		if kv.Key != semconv.GymtraceResponseRawKey && kv.Key != sizeKey {
			out.Attributes = append(out.Attributes, kv)
		}
	}
	out.Attributes = append(out.Attributes, semconv.GymtraceResponseRawKey.String(raw), sizeKey.Int64(int64(len(raw))))
	return out
}

// lookupKVs adapts attributes to capture.AttributeLookup (the last value of a key wins).
type lookupKVs []attribute.KeyValue

func (l lookupKVs) Lookup(key string) (attribute.Value, bool) {
	for i := len(l) - 1; i >= 0; i-- {
		if string(l[i].Key) == key {
			return l[i].Value, true
		}
	}
	return attribute.Value{}, false
}

// TestLargeRecordStreamed checks that a record whose payloads reach capture.StreamedLineBytes (written
// to the file in pieces) is byte for byte the line of the shared record mapping, like a small one.
func TestLargeRecordStreamed(t *testing.T) {
	c := capturetest.Cases(t)[1]
	tests := []struct {
		name string
		raw  string
	}{
		{name: "below the threshold", raw: strings.Repeat("data: {\"x\":\"é\"}\n\n", 64)},
		{name: "300 KiB stream text", raw: strings.Repeat("data: {\"choices\":[{\"delta\":{\"content\":\"ünïcode \\\"q\\\"\"}}]}\n\n", 300<<10/56)},
		{name: "1.5 MiB with control characters", raw: strings.Repeat("line\twith\x01control\r\n", 3<<19/22)},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, dir, m := newStarted(t, nil)
			sp := withResponseRaw(c.Span, tt.raw)
			sp.SpanID[7] = byte(0x40 + i)
			require.NoError(t, e.pushTraces(t.Context(), toTraces([]capturetest.Span{sp})))
			want, problems, err := capture.AppendLineFromAttributes(nil, lookupKVs(sp.Attributes), sp.Start, sp.End, sp.TraceID.String(), sp.SpanID.String())
			require.NoError(t, err)
			require.Empty(t, problems)
			got, err := os.ReadFile(filepath.Join(dir, "golden.capture.jsonl"))
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
			assert.Equal(t, int64(1), capturetest.Counts(t, m)["model_call/written"])
		})
	}
}
