package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/proxy"
	"github.com/gymtrace/gymtrace/semconv"
)

// serviceName is the service.name of the agent's spans.
const serviceName = "gymtrace-example-agent"

// telemetry is the agent's tracer provider and the reader of its observations processor's counters.
type telemetry struct {
	tp      *sdktrace.TracerProvider
	metrics *sdkmetric.ManualReader // nil without a capture directory
}

// newTelemetry builds the tracer provider of one agent run:
//
//   - proxy.RolloutIDGenerator, so proxy.StartRollout gives the rollout root span the rollout's
//     deterministic trace and span ids (the proxy's model-call spans land in the same trace);
//   - with captureDir, an agentobs.ObservationProcessor appending every observation span durably to
//     <captureDir>/<rollout_id>.observations.jsonl, beside the proxy's capture file, where
//     `gymtrace attach` finds it, counting on a meter provider with a manual reader (shutdown reads
//     it);
//   - with otlpEndpoint (an OTLP/HTTP base URL such as http://127.0.0.1:4318), a batch exporter
//     sending every span to <otlpEndpoint>/v1/traces;
//   - the extra span processors (tests add an in-memory exporter).
func newTelemetry(ctx context.Context, captureDir, otlpEndpoint string, extra ...sdktrace.SpanProcessor) (*telemetry, error) {
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", serviceName)))
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithIDGenerator(proxy.RolloutIDGenerator(nil)),
		sdktrace.WithResource(res),
	}
	t := &telemetry{}
	if captureDir != "" {
		store, err := capture.NewStore(captureDir)
		if err != nil {
			return nil, fmt.Errorf("telemetry: %w", err)
		}
		t.metrics = sdkmetric.NewManualReader()
		proc, err := agentobs.NewObservationProcessor(store,
			agentobs.WithProcessorMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(t.metrics))))
		if err != nil {
			return nil, fmt.Errorf("telemetry: %w", err)
		}
		opts = append(opts, sdktrace.WithSpanProcessor(proc))
	}
	if otlpEndpoint != "" {
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(strings.TrimRight(otlpEndpoint, "/")+"/v1/traces"))
		if err != nil {
			return nil, fmt.Errorf("telemetry: otlp exporter %s: %w", otlpEndpoint, err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	for _, sp := range extra {
		opts = append(opts, sdktrace.WithSpanProcessor(sp))
	}
	t.tp = sdktrace.NewTracerProvider(opts...)
	return t, nil
}

// shutdown flushes and stops the provider (the OTLP export of every span ended so far), then checks
// that every observation span reached the observations file.
func (t *telemetry) shutdown(ctx context.Context) error {
	err := t.tp.Shutdown(ctx)
	if err != nil {
		err = fmt.Errorf("telemetry: shutdown: %w", err)
	}
	if t.metrics != nil {
		var rm metricdata.ResourceMetrics
		if cerr := t.metrics.Collect(ctx, &rm); cerr != nil {
			err = errors.Join(err, fmt.Errorf("telemetry: observation counters: %w", cerr))
		} else if n := lostObservations(&rm); n > 0 {
			err = errors.Join(err, fmt.Errorf("telemetry: observations file: %d observation span(s) not written", n))
		}
	}
	return err
}

// lostObservations sums, from the observations processor's counters, the observation spans whose
// line is not in a file: gymtrace.capture.writer.spans with outcome failed or rejected, and
// gymtrace.capture.writer.unattributed (no rollout id on the span, its resource or its trace: the
// line is in _unattributed.observations.jsonl, SPEC §0 D18).
func lostObservations(rm *metricdata.ResourceMetrics) int64 {
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, _ := m.Data.(metricdata.Sum[int64])
			for _, dp := range sum.DataPoints {
				o, _ := dp.Attributes.Value(semconv.GymtraceCaptureOutcomeKey)
				switch {
				case m.Name == semconv.GymtraceCaptureWriterUnattributedName,
					m.Name == semconv.GymtraceCaptureWriterSpansName &&
						(o.AsString() == capture.OutcomeFailed.String() || o.AsString() == capture.OutcomeRejected.String()):
					n += dp.Value
				}
			}
		}
	}
	return n
}
