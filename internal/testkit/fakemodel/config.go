package fakemodel

import (
	"time"
)

// created is the "created"/"created_at" timestamp of every answer: Unix 1760000000
// (2025-10-09T08:53:20Z), so answers are deterministic.
const created = 1760000000

// maxBodyBytes bounds a request body (413 above it).
const maxBodyBytes = 32 << 20

// config is the Server's settings after options.
type config struct {
	chunkDelay  time.Duration
	fault       FaultFunc
	engine      Engine
	maxModelLen int  // 0 = defaultMaxModelLen
	noInlineIDs bool // vLLM before return_token_ids
}

// Option configures a Server; the With* functions make them.
type Option func(*config)

// WithChunkDelay sets the pause between two consecutive events of a streamed answer (the first
// event is sent at once). Default 0 (no pause). A negative d is treated as 0. The pause ends
// early when the client goes away.
func WithChunkDelay(d time.Duration) Option {
	return func(c *config) { c.chunkDelay = max(d, 0) }
}

// WithFault installs f, called once for every valid model call before it is answered; the
// [Fault] it returns may replace or spoil the answer. Default none. f must be safe for
// concurrent use (the Server calls it from each request's goroutine). A nil f removes the hook.
func WithFault(f FaultFunc) Option {
	return func(c *config) { c.fault = f }
}
