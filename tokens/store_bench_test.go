package tokens

import (
	"fmt"
	"testing"
)

// longEntry is call n of a long rollout: a prompt of promptLen ids and 256 generated tokens.
func longEntry(n, promptLen int) TokenEntry {
	e := baseEntry("bench", fmt.Sprintf("c%04d", n))
	e.PromptTokenIDs = make([]int64, promptLen)
	for i := range e.PromptTokenIDs {
		e.PromptTokenIDs[i] = int64(100000 + i)
	}
	e.GenerationTokenIDs = make([]int64, 256)
	e.GenerationLogProbs = make([]float64, 256)
	for i := range e.GenerationTokenIDs {
		e.GenerationTokenIDs[i] = int64(i)
		e.GenerationLogProbs[i] = -0.0012345 * float64(i)
	}
	return e
}

// BenchmarkAppend: one durable append of a 32k-token call (about 230 KB of line) per op, the
// intent first, as the proxy does per call; dominated by the two fsyncs.
func BenchmarkAppend(b *testing.B) {
	s, err := OpenStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	entries := make([]TokenEntry, b.N)
	for i := range entries {
		entries[i] = longEntry(i, 32768)
	}
	b.ResetTimer()
	for i := range b.N {
		if err := s.BeginCall("bench", entries[i].ModelCallID); err != nil {
			b.Fatal(err)
		}
		if err := s.Append(entries[i]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCanonicalJSON: the line of a 32k-token call, without I/O.
func BenchmarkCanonicalJSON(b *testing.B) {
	e := longEntry(0, 32768)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.CanonicalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFreeze: freezing (first freeze: index check, state write, reading every line) a
// rollout of 50 calls with 32k-token prompts.
func BenchmarkFreeze(b *testing.B) {
	dir := b.TempDir()
	s, err := OpenStore(dir)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 50 {
		if err := s.Append(longEntry(i, 32768)); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		snap, err := s.Freeze("bench")
		if err != nil || len(snap.Entries) != 50 {
			b.Fatal(err, len(snap.Entries))
		}
	}
}

// BenchmarkCallSmall: what the proxy does per small token-captured call, one op per call: the
// intent (BeginCall), then the entry of a 64-token prompt and 16 generated tokens (Append), in
// rollouts of 8 calls (the bench's tokens workloads); dominated by the two fsyncs and the state
// file's replacement.
func BenchmarkCallSmall(b *testing.B) {
	s, err := OpenStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		e := baseEntry(fmt.Sprintf("bench-%d", n/8), fmt.Sprintf("c%06d", n))
		e.PromptTokenIDs = make([]int64, 64)
		e.GenerationTokenIDs = make([]int64, 16)
		e.GenerationLogProbs = make([]float64, 16)
		n++
		if err := s.BeginCall(e.RolloutID, e.ModelCallID); err != nil {
			b.Fatal(err)
		}
		if err := s.Append(e); err != nil {
			b.Fatal(err)
		}
	}
}
