package agentobs_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
)

// TestReadUnattributed: the summary counts spans, traces and reasons of the unattributed file
// (SPEC §0 D18); a line of a span that had no trace id (written with the all-zero id, which the
// observation decoder refuses) is one span of reason no_trace_id and of no trace, not a damaged
// line; a line that is not an observation line is damaged.
func TestReadUnattributed(t *testing.T) {
	dir := t.TempDir()
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	u, err := agentobs.ReadUnattributed(store)
	require.NoError(t, err)
	assert.Equal(t, agentobs.UnattributedSummary{}, u, "no file")

	proc, err := agentobs.NewObservationProcessor(store, agentobs.WithProcessorLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(proc)).Tracer("test")
	_, span := tracer.Start(context.Background(), "execute_tool a")
	span.SetAttributes(attribute.String("gen_ai.operation.name", "execute_tool"))
	span.End()
	require.NoError(t, proc.Shutdown(context.Background()))

	path := filepath.Join(dir, capture.UnattributedObservationsFile)
	line, err := os.ReadFile(path)
	require.NoError(t, err)
	noTrace := regexp.MustCompile(`"trace_id":"[0-9a-f]{32}"`).ReplaceAll(line, []byte(`"trace_id":"00000000000000000000000000000000"`))
	noTrace = bytes.Replace(noTrace, []byte(`"unattributed_reason":"flushed"`), []byte(`"unattributed_reason":"no_trace_id"`), 1)
	require.NotEqual(t, line, noTrace)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write(append(noTrace, "{\"not\":\"an observation\"}\n"...))
	require.NoError(t, err)
	require.NoError(t, f.Close())

	u, err = agentobs.ReadUnattributed(store)
	require.NoError(t, err)
	assert.True(t, u.Exists)
	assert.Equal(t, 2, u.Spans)
	assert.Equal(t, 1, u.Traces, "the span without a trace id belongs to no trace")
	assert.Equal(t, map[string]int{"flushed": 1, "no_trace_id": 1}, u.Reasons)
	assert.Equal(t, 1, u.Damaged)
}
