package capture_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
)

// TestWriterStreamsLargeRecords checks that the writer appends the bytes of
// AppendLineFromAttributes on either side of StreamedLineBytes: whole below it, in pieces from it
// on, as the write hook's size shows (the exact length vs the size hint).
func TestWriterStreamsLargeRecords(t *testing.T) {
	start, end := time.Unix(1760000000, 0), time.Unix(1760000001, 500_000_000)
	for _, tt := range []struct {
		name     string
		rawBytes int
	}{
		{name: "small", rawBytes: 1 << 10},
		{name: "just below the threshold", rawBytes: capture.StreamedLineBytes - 1},
		{name: "at the threshold", rawBytes: capture.StreamedLineBytes},
		{name: "1 MiB", rawBytes: 1 << 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw := strings.Repeat("data: \"x\"\n", tt.rawBytes/10+1)[:tt.rawBytes]
			kvs := capture.Attributes(append(spanKVs(payloadKV(semconv.GymtraceResponseRawKey, raw, -1)), semconv.GymtraceRolloutID("r1")))
			want, problems, err := capture.AppendLineFromAttributes(nil, kvs, start, end, "", "")
			require.NoError(t, err)
			require.Empty(t, problems)
			line, err := capture.NewSpanLine(kvs, start, end, "", "")
			require.NoError(t, err)

			var hookSize int
			dir := t.TempDir()
			s, err := capture.NewStore(dir, capture.WithWriteHook(func(_ string, size int) (int, error) {
				hookSize = size
				return 0, nil
			}))
			require.NoError(t, err)
			w, err := capture.NewWriter(s, capture.ModelCallLines{})
			require.NoError(t, err)
			r := w.Write(t.Context(), &capture.Span{StartTime: start, EndTime: end, Attributes: kvs})
			require.Equal(t, capture.Result{Outcome: capture.OutcomeWritten, RolloutID: "r1"}, r)
			got, err := os.ReadFile(filepath.Join(dir, "r1"+capture.CaptureFileSuffix))
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
			if tt.rawBytes < capture.StreamedLineBytes {
				assert.Equal(t, len(want), hookSize, "whole line: the hook sees its exact length")
			} else {
				assert.Equal(t, line.SizeHint(), hookSize, "line in pieces: the hook sees its size hint")
			}
		})
	}
}
