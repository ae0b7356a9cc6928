package capture

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkAppendDurability compares the two durability modes (SPEC §0 D17) on the RL pattern of
// issue #18: each writer appends ~1 KiB records to its own rollout file, one at a time. It reports
// records/s and the store's flushes per record (SyncStats.PerLine, background syncs included).
func BenchmarkAppendDurability(b *testing.B) {
	e := perfCases()[0].exchange()
	line := e.AppendJSON(nil)
	for _, d := range []Durability{DurabilityPerRecord, DurabilityJournal} {
		for _, writers := range []int{1, 32} {
			b.Run(d.String()+"/writers="+strconv.Itoa(writers), func(b *testing.B) {
				s, err := NewStore(b.TempDir(), WithDurability(d))
				if err != nil {
					b.Fatal(err)
				}
				var next sync.WaitGroup
				start := time.Now()
				per := (b.N + writers - 1) / writers
				for w := range writers {
					next.Go(func() {
						for range per {
							if err := s.Append(context.Background(), "r"+strconv.Itoa(w), line); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				next.Wait()
				elapsed := time.Since(start)
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(per*writers)/elapsed.Seconds(), "records/s")
				b.ReportMetric(s.SyncStats().PerLine(), "fsyncs/record")
			})
		}
	}
}

// BenchmarkAppendCall is one proxy call's record append at concurrency 1 (issue #18's c=1
// target): a ~1 KiB line keyed by its model_call_id, as the [Writer] gives it to the store, to
// the caller's one rollout file, one call at a time. Besides ns/op it reports the append's
// latency percentiles (p50-us, p99-us) and the store's flushes per record; the per-record cost
// beyond the flush is what each durability mode adds to a call's latency. file-only is the
// journal mode's rollout-file part alone (the append after the journal's fdatasync, without a
// flush of its own): the cost a record adds beyond its flush, free of the disk's noise.
func BenchmarkAppendCall(b *testing.B) {
	e := perfCases()[0].exchange()
	var keys ModelCallLines
	for _, mode := range []string{DurabilityPerRecord.String(), DurabilityJournal.String(), "file-only"} {
		b.Run(mode, func(b *testing.B) {
			d := DurabilityPerRecord
			if mode == DurabilityJournal.String() {
				d = DurabilityJournal
			}
			s, err := NewStore(b.TempDir(), WithDurability(d))
			if err != nil {
				b.Fatal(err)
			}
			path := s.capturePath("bench-0")
			lat := make([]time.Duration, 0, 1<<14)
			var line []byte
			n := 0
			next := func() *appendReq {
				n++
				e.ModelCallID = fmt.Sprintf("%032x", n)
				line = e.AppendJSON(line[:0])
				return &appendReq{line: line, key: e.ModelCallID, keyOf: keys.KeyOf, journaled: mode == "file-only"}
			}
			if mode == "file-only" {
				req := next() // creates the file (a journaled commit that creates one tells the journal)
				req.journaled = false
				if err := s.enqueue(path, req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				req := next()
				start := time.Now()
				if err := s.enqueue(path, req); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2])/1e3, "p50-us")
			b.ReportMetric(float64(lat[len(lat)*99/100])/1e3, "p99-us")
			b.ReportMetric(s.SyncStats().PerLine(), "fsyncs/record")
		})
	}
}
