package proxy

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
)

// WithMeterProvider makes the handler record metrics with mp (libraries never use OpenTelemetry
// globals). Default: none. The instruments of the meter "github.com/gymtrace/gymtrace/proxy" (schema
// URL semconv.SchemaURL; names, units and attributes in package semconv):
//
//   - gen_ai.client.token.usage (histogram, {token}): the input and output tokens a response
//     reported, with gen_ai.token.type "input" or "output";
//   - gen_ai.client.operation.duration (histogram, s): every captured call's latency_ms;
//   - gen_ai.client.operation.time_to_first_chunk (histogram, s): streamed calls' latency_ttft_ms;
//
// these three with the conventions' bucket boundaries and gen_ai.operation.name,
// gen_ai.provider.name, gen_ai.request.model, gen_ai.response.model, server.address, server.port
// (each when known) and error.type (SPEC §3.3, on failure); and the counters gymtrace.capture.calls
// (by gymtrace.dialect, and gymtrace.error_category on a call that has one), gymtrace.capture.bytes
// (by gymtrace.capture.direction), gymtrace.capture.uncorrelated_calls (by gymtrace.dialect),
// gymtrace.tokens.entries and gymtrace.tokens.incomplete_marks (by gymtrace.tokens.incomplete_cause:
// the token capture of calls under the training prefix, [WithTokenSource]), gymtrace.capture.bounded_calls
// (by gymtrace.capture_bound.kind: calls whose capture stopped at a bound, SPEC §0 D15) and
// gymtrace.capture.near_miss_calls (by gymtrace.capture.near_miss.kind: calls whose path is almost a
// captured endpoint, rollout.ClassifyNearMiss; each shape also logged once). mp also reaches the durable
// processor ([exporter.WithMeterProvider]): the span writer's gymtrace.capture.writer.* counters.
// Metrics are recorded after the call's record was written: a call [Handler.Shutdown] abandoned (its
// ctx ended first) counts only in the writer's gymtrace.capture.writer.spans, outcome "failed". A nil
// mp keeps the default.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.meterProvider = mp })
}

// callMetrics holds the handler's instruments. A nil *callMetrics records nothing (no meter
// provider configured). It is safe for concurrent use.
type callMetrics struct {
	tokenUsage   metric.Int64Histogram
	duration     metric.Float64Histogram
	ttfc         metric.Float64Histogram
	calls        metric.Int64Counter
	bytes        metric.Int64Counter
	uncorrelated metric.Int64Counter
	bounded      metric.Int64Counter
	nearMisses   metric.Int64Counter
}

// newCallMetrics creates the instruments on mp's meter. A nil mp gives a nil *callMetrics.
func newCallMetrics(mp metric.MeterProvider) (*callMetrics, error) {
	if mp == nil {
		return nil, nil
	}
	meter := mp.Meter(instrumentationName, metric.WithSchemaURL(semconv.SchemaURL))
	m := &callMetrics{}
	var err, e error
	m.tokenUsage, e = meter.Int64Histogram(semconv.GenAIClientTokenUsageName,
		metric.WithUnit(semconv.GenAIClientTokenUsageUnit),
		metric.WithDescription(semconv.GenAIClientTokenUsageDescription),
		metric.WithExplicitBucketBoundaries(semconv.GenAIClientTokenUsageBuckets()...))
	err = errors.Join(err, e)
	seconds := func(dst *metric.Float64Histogram, name, unit, desc string) {
		*dst, e = meter.Float64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(semconv.GenAIClientDurationBuckets()...))
		err = errors.Join(err, e)
	}
	seconds(&m.duration, semconv.GenAIClientOperationDurationName, semconv.GenAIClientOperationDurationUnit,
		semconv.GenAIClientOperationDurationDescription)
	seconds(&m.ttfc, semconv.GenAIClientOperationTimeToFirstChunkName, semconv.GenAIClientOperationTimeToFirstChunkUnit,
		semconv.GenAIClientOperationTimeToFirstChunkDescription)
	counter := func(dst *metric.Int64Counter, name, unit, desc string) {
		*dst, e = meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		err = errors.Join(err, e)
	}
	counter(&m.calls, semconv.GymtraceCaptureCallsName, semconv.GymtraceCaptureCallsUnit, semconv.GymtraceCaptureCallsDescription)
	counter(&m.bytes, semconv.GymtraceCaptureBytesName, semconv.GymtraceCaptureBytesUnit, semconv.GymtraceCaptureBytesDescription)
	counter(&m.uncorrelated, semconv.GymtraceCaptureUncorrelatedCallsName, semconv.GymtraceCaptureUncorrelatedCallsUnit,
		semconv.GymtraceCaptureUncorrelatedCallsDescription)
	counter(&m.bounded, semconv.GymtraceCaptureBoundedCallsName, semconv.GymtraceCaptureBoundedCallsUnit,
		semconv.GymtraceCaptureBoundedCallsDescription)
	counter(&m.nearMisses, semconv.GymtraceCaptureNearMissCallsName, semconv.GymtraceCaptureNearMissCallsUnit,
		semconv.GymtraceCaptureNearMissCallsDescription)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return m, nil
}

// metricAttrKeys are the span attributes every GenAI client metric carries when the span has them.
var metricAttrKeys = []attribute.Key{
	semconv.GenAIOperationNameKey,
	semconv.GenAIProviderNameKey,
	semconv.GenAIRequestModelKey,
	semconv.GenAIResponseModelKey,
	semconv.ServerAddressKey,
	semconv.ServerPortKey,
	semconv.ErrorTypeKey,
}

// lastAttr returns the value of the last attribute named k in attrs.
func lastAttr(attrs []attribute.KeyValue, k attribute.Key) (attribute.Value, bool) {
	for i := len(attrs) - 1; i >= 0; i-- {
		if attrs[i].Key == k {
			return attrs[i].Value, true
		}
	}
	return attribute.Value{}, false
}

// recordCall records the metrics of one finished captured call from its span attributes (attrs,
// as set on the span) and its exchange.
func (m *callMetrics) recordCall(ctx context.Context, attrs []attribute.KeyValue, ex *capture.Exchange) {
	if m == nil {
		return
	}
	common := make([]attribute.KeyValue, 0, len(metricAttrKeys)+1)
	for _, k := range metricAttrKeys {
		if v, ok := lastAttr(attrs, k); ok && v.Type() != attribute.INVALID {
			common = append(common, attribute.KeyValue{Key: k, Value: v})
		}
	}
	// attribute.NewSet sorts its argument in place: give each set its own slice.
	callSet := metric.WithAttributeSet(attribute.NewSet(slices.Clone(common)...))

	m.duration.Record(ctx, ex.LatencyMS/1000, callSet)
	if stream, ok := lastAttr(attrs, semconv.GenAIRequestStreamKey); ok && stream.Type() == attribute.BOOL && stream.AsBool() && ex.LatencyTTFTMS != nil {
		m.ttfc.Record(ctx, *ex.LatencyTTFTMS/1000, callSet)
	}
	for _, tok := range []struct {
		key   attribute.Key
		value string
	}{
		{semconv.GenAIUsageInputTokensKey, semconv.GenAITokenTypeInput},
		{semconv.GenAIUsageOutputTokensKey, semconv.GenAITokenTypeOutput},
	} {
		v, ok := lastAttr(attrs, tok.key)
		if !ok || v.Type() != attribute.INT64 || v.AsInt64() < 0 {
			continue // unknown stays absent, never 0 (DESIGN.md "Spans follow the GenAI conventions")
		}
		kvs := append(slices.Clip(slices.Clone(common)), semconv.GenAITokenTypeKey.String(tok.value))
		m.tokenUsage.Record(ctx, v.AsInt64(), metric.WithAttributeSet(attribute.NewSet(kvs...)))
	}

	countAttrs := []attribute.KeyValue{semconv.GymtraceDialectKey.String(ex.Dialect)}
	if ex.ErrorCategory != "" {
		countAttrs = append(countAttrs, semconv.GymtraceErrorCategoryKey.String(ex.ErrorCategory))
	}
	m.calls.Add(ctx, 1, metric.WithAttributes(countAttrs...))
	if b := ex.CaptureBound; b != nil {
		m.bounded.Add(ctx, 1, metric.WithAttributes(semconv.GymtraceCaptureBoundKindKey.String(b.Kind)))
	}

	for _, p := range [...]struct {
		dir string
		n   int
	}{
		{semconv.GymtraceCaptureDirectionRequest, len(ex.Request) + rawLen(ex.RequestRaw)},
		{semconv.GymtraceCaptureDirectionResponse, len(ex.Response) + rawLen(ex.ResponseRaw)},
	} {
		if p.n > 0 {
			m.bytes.Add(ctx, int64(p.n), metric.WithAttributes(semconv.GymtraceCaptureDirectionKey.String(p.dir)))
		}
	}
}

func rawLen(s *string) int {
	if s == nil {
		return 0
	}
	return len(*s)
}

// countUncorrelated counts a call to a captured endpoint of dialect that carried no rollout id
// (gymtrace.capture.uncorrelated_calls); a no-op without a meter provider.
func (h *Handler) countUncorrelated(ctx context.Context, dialect string) {
	if h.metrics == nil {
		return
	}
	h.metrics.uncorrelated.Add(ctx, 1, metric.WithAttributes(semconv.GymtraceDialectKey.String(dialect)))
}
