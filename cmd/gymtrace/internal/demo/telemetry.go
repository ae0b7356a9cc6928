package demo

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/proxy"
	"github.com/gymtrace/gymtrace/semconv"
)

// telemetry is the agent's tracer provider: proxy.RolloutIDGenerator (each rollout root span gets
// the rollout's deterministic ids, so the agent's spans share the trace of the proxy's model-call
// spans) and an agentobs.ObservationProcessor appending every observation span to
// <rollout_id>.observations.jsonl beside the capture file, where the attach step reads it. The
// processor counts on a meter provider whose manual reader the demo reads at shutdown. The demo
// exports no spans and no metrics.
type telemetry struct {
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
}

// ObservationCounts is what the agent's observation processor counted (its OTel counters,
// [agentobs.WithProcessorMeterProvider]).
type ObservationCounts struct {
	// Written is the number of observation spans whose line is in its observations file
	// (gymtrace.capture.writer.spans, outcome "written").
	Written int64
	// Lost is the number of observation spans whose line is not: outcome "failed" or "rejected",
	// and gymtrace.capture.writer.unattributed (no rollout id on the span, its resource or its
	// trace: in _unattributed.observations.jsonl, not the rollout's file; SPEC §0 D18).
	Lost int64
}

// newTelemetry builds the agent's provider over store (the proxy's capture directory).
func newTelemetry(store *capture.Store) (*telemetry, error) {
	reader := sdkmetric.NewManualReader()
	proc, err := agentobs.NewObservationProcessor(store,
		agentobs.WithProcessorMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	if err != nil {
		return nil, fmt.Errorf("observations: %w", err)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithIDGenerator(proxy.RolloutIDGenerator(nil)),
		sdktrace.WithSpanProcessor(proc),
	)
	return &telemetry{tp: tp, reader: reader}, nil
}

// shutdown stops the provider (bounded by shutdownTimeout, ctx's cancellation ignored) and returns
// the processor's counts; an observation span whose line could not be written, or that had no
// rollout, is an error: the observations file would miss it.
func (t *telemetry) shutdown(ctx context.Context) (ObservationCounts, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := t.tp.Shutdown(ctx); err != nil {
		return ObservationCounts{}, fmt.Errorf("stop the agent's tracer provider: %w", err)
	}
	var rm metricdata.ResourceMetrics
	if err := t.reader.Collect(ctx, &rm); err != nil {
		return ObservationCounts{}, fmt.Errorf("read the observation counters: %w", err)
	}
	c := observationCounts(&rm)
	if c.Lost > 0 {
		return c, fmt.Errorf("observations files: %d observation span(s) not written", c.Lost)
	}
	return c, nil
}

// observationCounts sums the processor's counters in rm.
func observationCounts(rm *metricdata.ResourceMetrics) ObservationCounts {
	var c ObservationCounts
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				continue
			}
			for _, dp := range sum.DataPoints {
				switch m.Name {
				case semconv.GymtraceCaptureWriterUnattributedName: // counted as written too
					c.Lost += dp.Value
					c.Written -= dp.Value
				case semconv.GymtraceCaptureWriterSpansName:
					switch o, _ := dp.Attributes.Value(semconv.GymtraceCaptureOutcomeKey); o.AsString() {
					case capture.OutcomeWritten.String():
						c.Written += dp.Value
					case capture.OutcomeFailed.String(), capture.OutcomeRejected.String(), capture.OutcomePartial.String():
						c.Lost += dp.Value
					}
				}
			}
		}
	}
	return c
}
