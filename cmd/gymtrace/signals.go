package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// repeatSignalWindow is how long after the first shutdown signal a further one is a repeat and
// ignored: timeout(1), supervisors and job control often signal the process and its group at once.
const repeatSignalWindow = time.Second

// shutdownSignals turns SIGINT and SIGTERM into the proxy's two shutdown stages: the first signal
// cancels ctx (drain in-flight calls); one more than repeatSignalWindow later closes abort. The
// signals stay subscribed until stop, so none falls back to killing the process in between.
type shutdownSignals struct {
	ctx    context.Context    // cancelled at the first signal (or when the parent is)
	abort  chan struct{}      // closed at a deliberate second signal
	cancel context.CancelFunc // cancels ctx
	quit   chan struct{}      // closed by stop
	done   chan struct{}      // closed when the watching goroutine returned
	unsub  func()             // unsubscribes from the OS signals
}

// watchShutdownSignals subscribes to SIGINT and SIGTERM; ctx derives from parent. Call stop when done.
func watchShutdownSignals(parent context.Context, logger *slog.Logger) *shutdownSignals {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	w := newShutdownSignals(parent, ch, time.Now, logger)
	w.unsub = func() { signal.Stop(ch) }
	return w
}

// newShutdownSignals watches signals arriving on ch, timing them with now.
func newShutdownSignals(parent context.Context, ch <-chan os.Signal, now func() time.Time, logger *slog.Logger) *shutdownSignals {
	ctx, cancel := context.WithCancel(parent)
	w := &shutdownSignals{
		ctx: ctx, cancel: cancel, abort: make(chan struct{}),
		quit: make(chan struct{}), done: make(chan struct{}), unsub: func() {},
	}
	go w.run(ch, now, logger)
	return w
}

func (w *shutdownSignals) run(ch <-chan os.Signal, now func() time.Time, logger *slog.Logger) {
	defer close(w.done)
	var first time.Time
	seen := false
	for {
		select {
		case <-w.quit:
			return
		case sig := <-ch:
			t := now()
			switch {
			case !seen:
				seen, first = true, t
				w.cancel()
			case t.Sub(first) < repeatSignalWindow:
				logger.Info("gymtrace proxy: ignoring a repeated signal within 1s of the first", "signal", sig.String())
			default:
				close(w.abort)
				return
			}
		}
	}
}

// stop unsubscribes from the signals, ends the watching goroutine and cancels ctx. Call it once.
func (w *shutdownSignals) stop() {
	w.unsub()
	close(w.quit)
	<-w.done
	w.cancel()
}
