package agentobs_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/capturetest"
)

// TestObservationConformance runs the observation-line conformance suite through the SDK's
// ObservationProcessor: every span goes through OnEnd as the otel-go SDK hands it over. The
// Collector exporter gymcapture runs the same suite (collectorext).
func TestObservationConformance(t *testing.T) {
	capturetest.RunObservations(t, func(t *testing.T, dir string) capturetest.Target {
		store, err := capture.NewStore(dir)
		require.NoError(t, err)
		p, err := agentobs.NewObservationProcessor(store, agentobs.WithProcessorLogger(slog.New(slog.DiscardHandler)))
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
		return processorTarget{p}
	})
}

// processorTarget hands spans to an ObservationProcessor's OnEnd as the otel-go SDK does; Flush is
// its ForceFlush (capturetest.Flusher).
type processorTarget struct {
	p *agentobs.ObservationProcessor
}

func (pt processorTarget) ConsumeSpans(_ context.Context, spans []capturetest.Span) error {
	for _, s := range capturetest.ReadOnlySpans(spans) {
		pt.p.OnEnd(s)
	}
	return nil
}

func (pt processorTarget) Flush(ctx context.Context) error { return pt.p.ForceFlush(ctx) }
