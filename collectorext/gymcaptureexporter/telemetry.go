package gymcaptureexporter

import (
	"context"
	"fmt"
	"sync/atomic"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/gymtrace/gymtrace/collectorext/gymcaptureexporter/internal/metadata"
)

// outcome is what the exporter did with one span (the values of metadata.OutcomeKey).
type outcome int

const (
	outcomeWritten  outcome = iota // record or observation line appended whole
	outcomePartial                 // record appended with a payload null; rollout marked incomplete
	outcomeIgnored                 // neither a model-call span nor an observation span with a rollout id
	outcomeRejected                // record cannot be rebuilt, or unsafe rollout id (permanent)
	outcomeFailed                  // record or line not written: I/O error or attempt cancelled (retryable)
	outcomeDropped                 // model-call or observation span received after Shutdown
	numOutcomes
)

var outcomeNames = [numOutcomes]string{"written", "partial", "ignored", "rejected", "failed", "dropped"}

func (o outcome) String() string { return outcomeNames[o] }

// stats is a snapshot of the exporter's span counts by outcome.
type stats [numOutcomes]int64

// telemetry counts spans by outcome, in memory and on the metadata.SpansMetric counter of the
// component's MeterProvider. It is safe for concurrent use.
type telemetry struct {
	counts  [numOutcomes]atomic.Int64
	counter metric.Int64Counter
	attrs   [numOutcomes]metric.AddOption
}

func newTelemetry(set component.TelemetrySettings) (*telemetry, error) {
	c, err := set.MeterProvider.Meter(metadata.ScopeName).Int64Counter(metadata.SpansMetric,
		metric.WithDescription("Spans handled by the gymcapture exporter, by outcome."),
		metric.WithUnit("{span}"))
	if err != nil {
		return nil, fmt.Errorf("gymcapture: create %s counter: %w", metadata.SpansMetric, err)
	}
	t := &telemetry{counter: c}
	for o := range numOutcomes {
		t.attrs[o] = metric.WithAttributeSet(attribute.NewSet(attribute.String(metadata.OutcomeKey, o.String())))
	}
	return t, nil
}

func (t *telemetry) add(ctx context.Context, o outcome) {
	t.counts[o].Add(1)
	t.counter.Add(ctx, 1, t.attrs[o])
}

func (t *telemetry) stats() stats {
	var s stats
	for o := range numOutcomes {
		s[o] = t.counts[o].Load()
	}
	return s
}
