package drain

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestGate(t *testing.T) {
	t.Run("nothing in flight: idle at once, later calls refused", func(t *testing.T) {
		var g Gate
		assert.False(t, g.Closed())
		assert.True(t, isClosed(g.Close()))
		assert.True(t, g.Closed())
		assert.False(t, g.Enter())
	})
	t.Run("idle only when the last call leaves", func(t *testing.T) {
		var g Gate
		require.True(t, g.Enter())
		require.True(t, g.Enter())
		idle := g.Close()
		again := g.Close()
		assert.False(t, g.Enter(), "closed")
		g.Leave()
		assert.False(t, isClosed(idle), "one call still in flight")
		g.Leave()
		assert.True(t, isClosed(idle))
		assert.True(t, isClosed(again))
	})
	t.Run("concurrent calls", func(t *testing.T) {
		var g Gate
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 64 {
			require.True(t, g.Enter())
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				g.Leave()
			}()
		}
		idle := g.Close()
		close(start)
		select {
		case <-idle:
		case <-time.After(5 * time.Second):
			t.Fatal("gate never became idle")
		}
		wg.Wait()
	})
}

func TestGateDrain(t *testing.T) {
	t.Run("nothing in flight: nil even with ctx done", func(t *testing.T) {
		var g Gate
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		assert.NoError(t, g.Drain(ctx))
	})
	t.Run("call in flight past ctx: ctx's error", func(t *testing.T) {
		var g Gate
		require.True(t, g.Enter())
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		assert.ErrorIs(t, g.Drain(ctx), context.DeadlineExceeded)
		g.Leave()
		assert.NoError(t, g.Drain(t.Context()))
	})
	t.Run("waits for the last call", func(t *testing.T) {
		var g Gate
		require.True(t, g.Enter())
		done := make(chan error, 1)
		go func() { done <- g.Drain(t.Context()) }()
		time.Sleep(10 * time.Millisecond)
		g.Leave()
		assert.NoError(t, <-done)
	})
}
