package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGCPercentFor(t *testing.T) {
	tests := []struct {
		name string
		live uint64
		want int
	}{
		{name: "idle", live: 0, want: defaultGCPercent},
		{name: "small calls", live: 8 << 20, want: defaultGCPercent},
		{name: "just below", live: largeHeapBytes - 1, want: defaultGCPercent},
		{name: "large bodies in flight", live: largeHeapBytes, want: largeHeapGCPercent},
		{name: "256 streams", live: 500 << 20, want: largeHeapGCPercent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, gcPercentFor(tt.live))
		})
	}
}

// TestProxyGCHook checks that the hook follows the live heap across collections: a large live heap
// lowers the target, and it comes back once the heap is released.
func TestProxyGCHook(t *testing.T) {
	before := debug.SetGCPercent(defaultGCPercent)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	t.Setenv("GOGC", "")
	assert.Nil(t, setProxyGC(), "GOGC set in the environment (even empty): the runtime is left alone")

	g := &gcTuner{}
	g.arm()
	t.Cleanup(g.stop)
	waitTarget := func(want int64) {
		t.Helper()
		require.Eventually(t, func() bool {
			runtime.GC()
			return g.target.Load() == want
		}, 5*time.Second, 20*time.Millisecond)
	}
	func() {
		big := make([][]byte, 0, 96) // 96 MiB live
		for range 96 {
			big = append(big, make([]byte, 1<<20))
		}
		waitTarget(largeHeapGCPercent)
		assert.Equal(t, largeHeapGCPercent, debug.SetGCPercent(largeHeapGCPercent), "the runtime got the lower target")
		runtime.KeepAlive(big)
	}()
	waitTarget(defaultGCPercent)
	assert.Equal(t, defaultGCPercent, debug.SetGCPercent(defaultGCPercent))
}
