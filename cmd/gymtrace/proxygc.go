package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// The garbage collector target of `gymtrace proxy` when the environment sets no GOGC: from
// largeHeapBytes of live heap on (mostly the buffers of bodies in flight) it is largeHeapGCPercent,
// so the heap stays within 1.3 times the live heap instead of Go's 2 times. Measured with `gymtrace
// bench --workload sse1m --concurrency 256` (256 MiB of streams in flight): peak RSS 790–850 MiB
// with Go's default target throughout, 620–704 MiB with 50 from 64 MiB on, 555–615 MiB with 30 from
// 32 MiB on (issue 6's bound: 2.5 × in flight + 64 MiB = 703 MiB), with less CPU per stream, not
// more (fewer fresh pages). Small calls keep Go's default: a fixed lower target costs them about 50%
// more CPU per call.
const (
	defaultGCPercent   = 100
	largeHeapGCPercent = 30
	largeHeapBytes     = 32 << 20
)

// gcPercentFor returns the GC target for a live heap of live bytes.
func gcPercentFor(live uint64) int {
	if live >= largeHeapBytes {
		return largeHeapGCPercent
	}
	return defaultGCPercent
}

// gcTuner adapts the GC target to the live heap after every collection, from a finalizer re-armed
// on each cycle (no goroutine).
type gcTuner struct {
	target  atomic.Int64 // the target last set (0 before the first cycle)
	stopped atomic.Bool
}

// setProxyGC starts a gcTuner unless GOGC is set (the operator's choice wins; it returns nil then).
func setProxyGC() *gcTuner {
	if _, set := os.LookupEnv("GOGC"); set {
		return nil
	}
	g := &gcTuner{}
	g.arm()
	return g
}

// stop ends the tuning after the next cycle (the target stays as it is).
func (g *gcTuner) stop() { g.stopped.Store(true) }

// gcSentinel is an object kept unreachable on purpose: its finalizer runs once per GC cycle.
type gcSentinel struct{ g *gcTuner }

func (g *gcTuner) arm() { runtime.SetFinalizer(&gcSentinel{g: g}, onGC) }

func onGC(s *gcSentinel) {
	if s.g.stopped.Load() {
		return
	}
	s.g.tune(liveHeapBytes())
	s.g.arm()
}

// tune sets the GC target for a live heap of live bytes when it changes.
func (g *gcTuner) tune(live uint64) {
	want := int64(gcPercentFor(live))
	if g.target.Swap(want) != want {
		debug.SetGCPercent(int(want))
	}
}

// liveHeapBytes reads the live heap after the last collection (runtime/metrics).
func liveHeapBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
