package exporter

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/gymtrace/gymtrace/capture"
)

// A span its producer gave up on is counted failed, logged and marks its rollout, whether the
// processor is still running or shut down; nothing is written.
func TestDurableProcessorAbandon(t *testing.T) {
	cause := errors.New("shutdown stopped waiting")
	tests := []struct {
		name         string
		span         tracetest.SpanStub
		shutDown     bool
		blockMarker  bool // the marker's path is a directory: MarkIncomplete fails
		wantOutcomes outcomes
		wantMarked   bool
		wantErr      bool
		wantLog      string
	}{
		{name: "running", span: modelCallStub("r1", testExchange("aa"), 1),
			wantOutcomes: outcomes{"failed": 1}, wantMarked: true, wantLog: "shutdown stopped waiting"},
		{name: "after shutdown", span: modelCallStub("r1", testExchange("aa"), 1), shutDown: true,
			wantOutcomes: outcomes{"failed": 1}, wantMarked: true, wantLog: "record not written; marking the rollout incomplete"},
		{name: "not a model call", span: tracetest.SpanStub{Name: "other"}, wantOutcomes: outcomes{}},
		{name: "marker not writable", span: modelCallStub("r1", testExchange("aa"), 1), blockMarker: true,
			wantOutcomes: outcomes{"failed": 1}, wantErr: true, wantLog: "mark incomplete failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := newStore(t)
			if tt.blockMarker {
				require.NoError(t, os.Mkdir(filepath.Join(store.Dir(), "r1"+capture.MarkerFileSuffix), 0o700))
			}
			logger, logs := newLogger()
			mopt, stats := meter(t)
			p, err := NewDurableProcessor(store, WithLogger(logger), mopt)
			require.NoError(t, err)
			if tt.shutDown {
				require.NoError(t, p.Shutdown(t.Context()))
			}
			err = p.Abandon(tt.span.Snapshot(), cause)
			if tt.wantErr {
				require.ErrorIs(t, err, capture.ErrNotRegularFile)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.wantOutcomes, stats())
			assert.Equal(t, "", readFile(t, store, "r1"), "nothing is written")
			if !tt.blockMarker {
				assert.Equal(t, tt.wantMarked, incomplete(t, store, "r1"))
			}
			assert.Contains(t, logs.String(), tt.wantLog)
			require.NoError(t, p.Shutdown(t.Context()))
		})
	}
}
