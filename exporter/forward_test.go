package exporter

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// fakeCollector is a SpanExporter that fails with err, or blocks until ctx is done when block is set.
type fakeCollector struct {
	*tracetest.InMemoryExporter
	err   error
	block bool
}

func (f fakeCollector) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if f.block {
		<-ctx.Done()
		return ctx.Err()
	}
	if f.err != nil {
		return f.err
	}
	return f.InMemoryExporter.ExportSpans(ctx, spans)
}

func TestForwardingProcessor(t *testing.T) {
	ex := testExchange("863410a8d52e4be6a31efc5c6e9d4629")
	tests := []struct {
		name           string
		next           fakeCollector
		span           tracetest.SpanStub
		wantForwarded  int
		wantIncomplete bool
		wantStats      outcomes
		wantLog        string
	}{
		{name: "acknowledged", span: modelCallStub("r1", ex, 1), wantForwarded: 1, wantStats: outcomes{"written": 1}},
		{name: "other span not forwarded", span: tracetest.SpanStub{Name: "other"}, wantStats: outcomes{}},
		{name: "collector refuses: rollout incomplete", next: fakeCollector{err: errors.New("503 from collector")},
			span: modelCallStub("r1", ex, 1), wantIncomplete: true, wantStats: outcomes{"failed": 1}, wantLog: "503 from collector"},
		{name: "collector stalls: timeout, rollout incomplete", next: fakeCollector{block: true},
			span: modelCallStub("r1", ex, 1), wantIncomplete: true, wantStats: outcomes{"failed": 1}, wantLog: "deadline exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := newStore(t)
			logger, logs := newLogger()
			tt.next.InMemoryExporter = tracetest.NewInMemoryExporter()
			mopt, stats := meter(t)
			p, err := NewForwardingProcessor(store, tt.next, WithLogger(logger), WithForwardTimeout(50*time.Millisecond), mopt)
			require.NoError(t, err)
			p.OnEnd(tt.span.Snapshot())
			assert.Len(t, tt.next.GetSpans(), tt.wantForwarded)
			assert.Empty(t, readFile(t, store, "r1"), "records go to the collector, never the local store")
			assert.Equal(t, tt.wantIncomplete, incomplete(t, store, "r1"))
			assert.Equal(t, tt.wantStats, stats())
			if tt.wantLog != "" {
				assert.Contains(t, logs.String(), tt.wantLog)
			}
			require.NoError(t, p.Shutdown(t.Context()))
		})
	}
	t.Run("nil exporter refused", func(t *testing.T) {
		_, err := NewForwardingProcessor(newStore(t), nil)
		require.ErrorContains(t, err, "span exporter is nil")
	})
	t.Run("shutdown shuts the exporter down", func(t *testing.T) {
		mem := tracetest.NewInMemoryExporter()
		p, err := NewForwardingProcessor(newStore(t), mem)
		require.NoError(t, err)
		p.OnEnd(modelCallStub("r1", ex, 1).Snapshot())
		require.Len(t, mem.GetSpans(), 1)
		require.NoError(t, p.Shutdown(t.Context()))
		assert.Empty(t, mem.GetSpans(), "InMemoryExporter.Shutdown resets it")
	})
}
