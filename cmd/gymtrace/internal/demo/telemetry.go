package demo

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/sdk"
)

// telemetry is the agent's tracer provider: sdk.RolloutIDGenerator (each rollout root span gets
// the rollout's deterministic ids, so the agent's spans share the trace of the proxy's model-call
// spans) and an agentobs.ObservationProcessor appending every observation span to
// <rollout_id>.observations.jsonl beside the capture file, where the attach step reads it. The demo
// exports no spans.
type telemetry struct {
	tp   *sdktrace.TracerProvider
	proc *agentobs.ObservationProcessor
}

// newTelemetry builds the agent's provider over store (the proxy's capture directory).
func newTelemetry(store *capture.Store) (*telemetry, error) {
	proc, err := agentobs.NewObservationProcessor(store)
	if err != nil {
		return nil, fmt.Errorf("observations: %w", err)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithIDGenerator(sdk.RolloutIDGenerator(nil)),
		sdktrace.WithSpanProcessor(proc),
	)
	return &telemetry{tp: tp, proc: proc}, nil
}

// shutdown stops the provider (bounded by shutdownTimeout, ctx's cancellation ignored) and returns
// the processor's counters; an observation span whose line could not be written, or that had no
// rollout, is an error: the observations file would miss it.
func (t *telemetry) shutdown(ctx context.Context) (agentobs.ProcessorStats, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	err := t.tp.Shutdown(ctx)
	st := t.proc.Stats()
	if err != nil {
		return st, fmt.Errorf("stop the agent's tracer provider: %w", err)
	}
	if st.Failures > 0 || st.Unrouted > 0 || st.Dropped > 0 {
		return st, fmt.Errorf("observations files: %d span(s) not written, %d without a rollout, %d dropped",
			st.Failures, st.Unrouted, st.Dropped)
	}
	return st, nil
}
