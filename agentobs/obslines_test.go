package agentobs_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
)

// TestObservationLinesInvalidIDs: an observation span is identified by its trace and span ids
// (SPEC §0 D18), so a span without a valid span id is rejected (never written, so never written
// twice nor left for the readers to refuse), and a span without a valid trace id goes to the
// unattributed file (reason no_trace_id) even when it names a rollout, once however often it is
// sent.
func TestObservationLinesInvalidIDs(t *testing.T) {
	tid := trace.TraceID{1, 2, 3}
	sid := trace.SpanID{4, 5, 6}
	named := []attribute.KeyValue{semconv.GenAIOperationNameKey.String("execute_tool"), semconv.GymtraceRolloutID("r1")}
	span := func(tid trace.TraceID, sid trace.SpanID) *capture.Span {
		at := time.Unix(1_700_000_000, 0)
		return &capture.Span{Name: "execute_tool grep", TraceID: tid, SpanID: sid, StartTime: at, EndTime: at, Attributes: capture.Attributes(named)}
	}
	tests := []struct {
		name        string
		span        *capture.Span
		wantOutcome capture.Outcome
		wantErr     string
		wantFile    string // the file holding the one line, "" for none
		wantReason  string
	}{
		{name: "valid ids", span: span(tid, sid), wantOutcome: capture.OutcomeWritten, wantFile: "r1" + capture.ObservationsFileSuffix},
		{name: "zero span id", span: span(tid, trace.SpanID{}), wantOutcome: capture.OutcomeRejected, wantErr: "has no valid span id"},
		{name: "zero trace id", span: span(trace.TraceID{}, sid), wantOutcome: capture.OutcomeWritten,
			wantFile: capture.UnattributedObservationsFile, wantReason: semconv.GymtraceUnattributedNoTraceID},
		{name: "zero ids", span: span(trace.TraceID{}, trace.SpanID{}), wantOutcome: capture.OutcomeRejected, wantErr: "has no valid span id",
			wantReason: semconv.GymtraceUnattributedNoTraceID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			store, err := capture.NewStore(dir)
			require.NoError(t, err)
			w, err := capture.NewWriter(store, agentobs.ObservationLines{}, capture.WithTraceWindow(capture.TraceWindow{}))
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, w.Shutdown(context.Background())) })
			for range 3 { // a sender's retries
				r := w.Write(t.Context(), tt.span)
				require.Equal(t, tt.wantOutcome, r.Outcome, "%v", r.Err)
				assert.Equal(t, tt.wantReason, r.Unattributed)
				if tt.wantErr != "" {
					assert.ErrorContains(t, r.Err, tt.wantErr)
				}
			}
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			var files []string
			for _, e := range entries {
				if !e.IsDir() {
					files = append(files, e.Name())
				}
			}
			if tt.wantFile == "" {
				assert.Empty(t, files, "nothing written")
				return
			}
			require.Equal(t, []string{tt.wantFile}, files)
			data, err := os.ReadFile(filepath.Join(dir, tt.wantFile))
			require.NoError(t, err)
			assert.Equal(t, 1, strings.Count(string(data), "\n"), "one line however often the span is sent: %s", data)
			if tt.wantReason != "" {
				u, err := agentobs.ReadUnattributed(store)
				require.NoError(t, err)
				assert.Equal(t, map[string]int{tt.wantReason: 1}, u.Reasons)
				assert.Zero(t, u.Damaged)
			}
		})
	}
}
