package exporter

import (
	"log/slog"
)

// Option configures [NewDurableProcessor] and [New].
type Option interface {
	apply(*config)
}

type config struct {
	logger *slog.Logger
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
	return c
}

// WithLogger sets the logger for failed writes and partial records (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) { c.logger = l })
}
