package fakemodel

import (
	"time"
)

// defaultCreated is the default clock's instant: Unix 1760000000 (2025-10-09T08:53:20Z).
var defaultCreated = time.Unix(1760000000, 0).UTC()

// defaultModels is the default list of GET /v1/models.
var defaultModels = []string{"gpt-4.1-mini", "gpt-5-mini", "o4-mini", "claude-sonnet-4-5", "claude-haiku-4-5"}

// config is the Server's settings after defaults and options.
type config struct {
	chunkDelay   time.Duration
	fault        FaultFunc
	now          func() time.Time
	alwaysReason bool
	models       []string
	maxBodyBytes int64
}

// newConfig applies the defaults, then opts in order.
func newConfig(opts []Option) config {
	c := config{
		now:          func() time.Time { return defaultCreated },
		models:       defaultModels,
		maxBodyBytes: 32 << 20,
	}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	return c
}

// Option configures a Server. Options are sealed: only this package's With* functions make them.
type Option interface {
	apply(*config)
}

// optionFunc adapts a func to Option.
type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithChunkDelay sets the pause between two consecutive events of a streamed answer (the first
// event is sent at once). Default 0 (no pause). A negative d is treated as 0. The pause ends
// early when the client goes away.
func WithChunkDelay(d time.Duration) Option {
	return optionFunc(func(c *config) { c.chunkDelay = max(d, 0) })
}

// WithFault installs f, called once for every valid model call before it is answered; the
// [Fault] it returns may replace or spoil the answer. Default none. f must be safe for
// concurrent use (the Server calls it from each request's goroutine). A nil f removes the hook.
func WithFault(f FaultFunc) Option {
	return optionFunc(func(c *config) { c.fault = f })
}

// WithClock sets the clock used for the "created"/"created_at" timestamps (Unix seconds).
// Default: a fixed instant, Unix 1760000000, so answers are deterministic. A nil now restores
// the default.
func WithClock(now func() time.Time) Option {
	return optionFunc(func(c *config) {
		if now == nil {
			now = func() time.Time { return defaultCreated }
		}
		c.now = now
	})
}

// WithAlwaysReasoning makes every answer carry reasoning (a Responses reasoning item with a
// summary, a Chat reasoning_content, an Anthropic thinking block), not only the answers to
// requests that ask for it or name a reasoning model. Default off.
func WithAlwaysReasoning() Option {
	return optionFunc(func(c *config) { c.alwaysReason = true })
}

// WithModels sets the model ids listed by GET /v1/models, in order. Default: gpt-4.1-mini,
// gpt-5-mini, o4-mini, claude-sonnet-4-5, claude-haiku-4-5. Model calls accept any model id
// whatever this list holds.
func WithModels(ids ...string) Option {
	return optionFunc(func(c *config) { c.models = append([]string(nil), ids...) })
}
