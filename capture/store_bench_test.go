package capture

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// benchLine is a ~1 KiB record line.
var benchLine = []byte(`{"model_call_id":"863410a8d52e4be6a31efc5c6e9d4629","dialect":"responses","request":{"input":"` +
	strings.Repeat("x", 900) + `"},"response":{"id":"r","usage":{"input_tokens":3,"output_tokens":2,"total_tokens":5}}}` + "\n")

func BenchmarkAppend(b *testing.B) {
	cases := []struct {
		name    string
		writers int  // concurrent goroutines (0 = one, in the benchmark goroutine)
		perFile bool // each writer has its own rollout file
	}{
		{"1_writer", 0, false},
		{"64_writers_1_file", 64, false},
		{"64_writers_64_files", 64, true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var syncs atomic.Int64
			s, err := NewStore(b.TempDir(), WithSyncHook(func(string) error { syncs.Add(1); return nil }))
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.SetBytes(int64(len(benchLine)))
			if c.writers == 0 {
				for b.Loop() {
					if err := s.Append(ctx, "bench", benchLine); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				var next atomic.Int64
				b.SetParallelism((c.writers + 1) / max(1, runtimeProcs()))
				b.RunParallel(func(pb *testing.PB) {
					id := "bench"
					if c.perFile {
						id = fmt.Sprintf("bench-%d", next.Add(1))
					}
					for pb.Next() {
						if err := s.Append(ctx, id, benchLine); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			b.ReportMetric(float64(syncs.Load())/float64(b.N), "fsyncs/op")
		})
	}
}

func BenchmarkReadAvailable(b *testing.B) {
	s, err := NewStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	path, _ := s.CapturePath("r")
	content := strings.Repeat(string(benchLine), 1000) + "{bad\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		lines, invalid, err := s.ReadAvailable("r")
		if err != nil || len(lines) != 1000 || invalid != 1 {
			b.Fatal(len(lines), invalid, err)
		}
	}
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
