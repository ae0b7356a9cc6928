package drain

import (
	"context"
	"sync"
)

// Gate counts the calls in flight and refuses new ones once closed. The zero value is an open gate
// with nothing in flight. A Gate must not be copied after first use. Safe for concurrent use.
type Gate struct {
	mu       sync.Mutex
	closed   bool
	inflight int
	idle     chan struct{} // made by Close while calls are in flight; closed when the last leaves
}

// closedChan is an already closed channel: Close's answer when nothing is in flight.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Enter admits a call and reports true, or reports false once the gate is closed. Every admitted
// call must Leave.
func (g *Gate) Enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.inflight++
	return true
}

// Leave ends a call admitted by Enter.
func (g *Gate) Leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inflight--
	if g.inflight == 0 && g.idle != nil {
		close(g.idle)
		g.idle = nil
	}
}

// Closed reports whether Close was called.
func (g *Gate) Closed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}

// Close refuses every later Enter and returns a channel that is closed once no admitted call is in
// flight (at once when none is). It may be called more than once; every returned channel closes.
func (g *Gate) Close() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	if g.inflight == 0 {
		return closedChan
	}
	if g.idle == nil {
		g.idle = make(chan struct{})
	}
	return g.idle
}

// Drain closes the gate (see Close) and waits until no admitted call is in flight, or until ctx is
// done: then it returns ctx's error (the calls still in flight go on). With nothing in flight it
// returns nil at once, whatever ctx's state.
func (g *Gate) Drain(ctx context.Context) error {
	idle := g.Close()
	select {
	case <-idle:
		return nil
	default:
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
