package capture

import (
	"context"
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
