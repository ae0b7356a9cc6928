package exporter

import (
	"log/slog"
	"time"
)

// Option configures [NewDurableProcessor] and [New].
type Option interface {
	apply(*config)
}

type config struct {
	logger         *slog.Logger
	forwardTimeout time.Duration
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
	if c.forwardTimeout <= 0 {
		c.forwardTimeout = DefaultForwardTimeout
	}
	return c
}

// WithLogger sets the logger for failed writes and partial records (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) { c.logger = l })
}

// DefaultForwardTimeout bounds one synchronous export of [NewForwardingProcessor] (10 s).
const DefaultForwardTimeout = 10 * time.Second

// WithForwardTimeout bounds each synchronous export of [NewForwardingProcessor]; a value ≤ 0 keeps
// [DefaultForwardTimeout]. An export that times out counts as a failed record (rollout marked
// incomplete). Other constructors ignore it.
func WithForwardTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.forwardTimeout = d })
}
