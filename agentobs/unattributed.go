package agentobs

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
)

// meterName is the instrumentation scope of the package's metrics.
const meterName = "github.com/gymtrace/gymtrace/agentobs"

// UnattributedCounter counts the observation spans that name no rollout: spans [ObservationKind]
// recognizes whose gymtrace.rollout.id is missing, not a string or empty ([RolloutIDOf]). No
// observations file can hold them, and the span writer ([ObservationLines] in a [capture.Writer])
// counts them as ignored, like any span that is not an observation; this counter keeps them
// visible. Its instrument, on meter "github.com/gymtrace/gymtrace/agentobs" (not a semantic
// convention):
//
//   - gymtrace.observations.unattributed (counter, {span}): by gymtrace.observation.kind
//     ("agent_invocation", "tool_call", "context_compaction", "sandbox").
//
// The [ObservationProcessor] and the Collector's gymcapture exporter count through it. Safe for
// concurrent use.
type UnattributedCounter struct {
	c     metric.Int64Counter
	attrs map[string]metric.AddOption // by observation kind
}

// NewUnattributedCounter returns a counter on mp's meter; a nil mp is a no-op provider (nothing is
// recorded; libraries never read the global one). It returns an error when the instrument cannot
// be created.
func NewUnattributedCounter(mp metric.MeterProvider) (*UnattributedCounter, error) {
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	c, err := mp.Meter(meterName).Int64Counter(semconv.GymtraceObservationsUnattributedName,
		metric.WithUnit(semconv.GymtraceObservationsUnattributedUnit),
		metric.WithDescription(semconv.GymtraceObservationsUnattributedDescription))
	if err != nil {
		return nil, fmt.Errorf("agentobs: metrics: %w", err)
	}
	u := &UnattributedCounter{c: c, attrs: make(map[string]metric.AddOption, 4)}
	for _, k := range []string{KindAgentInvocation, KindToolCall, KindContextCompaction, KindSandbox} {
		u.attrs[k] = metric.WithAttributeSet(attribute.NewSet(semconv.GymtraceObservationKindKey.String(k)))
	}
	return u, nil
}

// Add counts s when it is an observation span that names no rollout, and returns its kind and
// true; for any other span it returns "", false and counts nothing.
func (u *UnattributedCounter) Add(ctx context.Context, s *capture.Span) (string, bool) {
	kind, ok := ObservationKind(s.Attributes)
	if !ok {
		return "", false
	}
	if _, ok := RolloutIDOf(s.Attributes); ok {
		return "", false
	}
	u.c.Add(ctx, 1, u.attrs[kind])
	return kind, true
}
