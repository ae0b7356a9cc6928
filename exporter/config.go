package exporter

import (
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/gymtrace/gymtrace/capture"
)

// Option configures [NewDurableProcessor] and [New].
type Option interface {
	apply(*config)
}

type config struct {
	logger         *slog.Logger
	forwardTimeout time.Duration
	meterProvider  metric.MeterProvider
	checked        *capture.CheckedBodies
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	if c.meterProvider == nil {
		c.meterProvider = noop.NewMeterProvider()
	}
	if c.forwardTimeout <= 0 {
		c.forwardTimeout = DefaultForwardTimeout
	}
	return c
}

// WithLogger sets the logger for failed writes and partial records (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) { c.logger = l })
}

// WithMeterProvider sets the meter provider of the capture span writer's counters
// (gymtrace.capture.writer.spans, .duplicates and .bytes with gymtrace.capture.line_kind
// "model_call"; see [capture.WithMeterProvider] and the README's OpenTelemetry section). Default: a
// no-op provider (libraries never read the global one); nil keeps the default.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.meterProvider = mp })
}

// WithCheckedBodies names the spans whose body payloads their producer in this process has
// already checked (see [capture.CheckedBodies]; the capture proxy registers its own): their record
// lines copy those payloads in without checking them again. Default nil: every payload is checked.
func WithCheckedBodies(c *capture.CheckedBodies) Option {
	return optionFunc(func(cfg *config) { cfg.checked = c })
}

// DefaultForwardTimeout bounds one synchronous export of [NewForwardingProcessor] (10 s).
const DefaultForwardTimeout = 10 * time.Second

// WithForwardTimeout bounds each synchronous export of [NewForwardingProcessor]; a value ≤ 0 keeps
// [DefaultForwardTimeout]. An export that times out counts as a failed record (rollout marked
// incomplete). Other constructors ignore it.
func WithForwardTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.forwardTimeout = d })
}
