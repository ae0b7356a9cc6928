package capture

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
)

// This file adds to store_bench_test.go's BenchmarkAppend what issue 6's store target needs: an
// exact number of writer goroutines whatever GOMAXPROCS is (RunParallel only approximates 64), the
// records/s and fsyncs/record metrics, a baseline of one fsync per record at the same concurrency
// (64 writers on one file through 64 separate Stores: no in-process group commit, the writers
// serialize on flock), and a check after each run that every appended record is in the files.
// Target: 64 writers on one file at ≥ 10× the records/s of the baseline.

// BenchmarkAppendWriters runs b.N appends of a ~1 KiB record line (the small bench call) spread over
// a fixed number of writer goroutines.
func BenchmarkAppendWriters(b *testing.B) {
	cases := []struct {
		name           string
		writers, files int
		storePerWriter bool // each writer its own Store: no group commit across writers
	}{
		{"1_writer", 1, 1, false},
		{"64_writers_1_file", 64, 1, false},
		{"64_writers_1_file_fsync_per_record", 64, 1, true},
		{"64_writers_64_files", 64, 64, false},
	}
	e := perfCases()[0].exchange()
	line := e.AppendJSON(nil)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			benchAppendWriters(b, line, c.writers, c.files, c.storePerWriter)
		})
	}
}

func benchAppendWriters(b *testing.B, line []byte, writers, files int, storePerWriter bool) {
	dir := b.TempDir()
	var syncs atomic.Int64
	hook := WithSyncHook(func(string) error { syncs.Add(1); return nil })
	newStore := func() *Store {
		s, err := NewStore(dir, hook)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	shared := newStore()
	stores := make([]*Store, writers)
	ids := make([]string, writers)
	for i := range writers {
		stores[i] = shared
		if storePerWriter {
			stores[i] = newStore()
		}
		ids[i] = fmt.Sprintf("rollout-%d", i%files)
	}
	ctx := context.Background()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	b.ResetTimer()
	for i := range writers {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := stores[i].Append(ctx, ids[i], line); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(syncs.Load())/float64(b.N), "fsyncs/record")

	// Every Append returned after its line was durable: all b.N lines are in the files.
	total := 0
	for f := range files {
		path, err := shared.CapturePath(fmt.Sprintf("rollout-%d", f))
		if err != nil {
			b.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			b.Fatal(err)
		}
		total += bytes.Count(data, []byte{'\n'})
	}
	if total != b.N {
		b.Fatalf("%d lines in the files after %d appends", total, b.N)
	}
}
