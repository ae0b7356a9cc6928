package stream

// config holds the settings shared by [Decoder] and [Capture].
type config struct {
	maxEventBytes int
}

// newConfig applies the defaults, then opts in order.
func newConfig(opts []Option) config {
	cfg := config{maxEventBytes: DefaultMaxEventBytes}
	for _, o := range opts {
		if o != nil {
			cfg = o.apply(cfg)
		}
	}
	return cfg
}

// Option configures a [Decoder] or a [Capture].
type Option interface {
	apply(config) config
}

type optionFunc func(config) config

func (f optionFunc) apply(c config) config { return f(c) }

// WithMaxEventBytes sets the per-event capture bound, in bytes (SPEC.md §0 D2): the most bytes held
// for one pending event (its name, joined data and current partial line). An event that outgrows it
// loses its data and is counted ([Stats.BoundHits], [Decoder.BoundHits]); framing goes on with the
// next event. It never limits forwarding. Default [DefaultMaxEventBytes] (64 MiB); a value below 1
// keeps the default.
func WithMaxEventBytes(n int) Option {
	return optionFunc(func(c config) config {
		if n > 0 {
			c.maxEventBytes = n
		}
		return c
	})
}
