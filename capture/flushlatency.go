package capture

import (
	"sync/atomic"
	"time"
)

// Flush latencies are counted in buckets of flushBucket up to flushBuckets × flushBucket; a longer
// flush counts in the last bucket.
const (
	flushBucket  = 10 * time.Microsecond
	flushBuckets = 2000 // 20 ms
)

// flushHistogram counts the durations of the flushes appends waited on (the journal batch's
// fdatasync in journal mode, the rollout file's fsync of each group commit in per-record mode):
// what "one fsync" costs the calls themselves, at their own spacing, as opposed to a probe's
// back-to-back flushes. Safe for concurrent use; the zero value is empty.
type flushHistogram struct {
	n       atomic.Int64
	buckets [flushBuckets]atomic.Int64
}

// time runs flush and counts its duration.
func (h *flushHistogram) time(flush func() error) error {
	start := time.Now()
	err := flush()
	h.observe(time.Since(start))
	return err
}

func (h *flushHistogram) observe(d time.Duration) {
	i := min(int(d/flushBucket), flushBuckets-1)
	h.buckets[max(i, 0)].Add(1)
	h.n.Add(1)
}

// quantile returns the midpoint of the bucket that holds quantile q (0 < q ≤ 1) of the flushes
// counted, within flushBucket/2 of the true value below 20 ms; 0 when none was counted.
func (h *flushHistogram) quantile(q float64) time.Duration {
	n := h.n.Load()
	if n == 0 {
		return 0
	}
	rank := max(int64(q*float64(n)+0.5), 1)
	var seen int64
	for i := range h.buckets {
		if seen += h.buckets[i].Load(); seen >= rank {
			return time.Duration(i)*flushBucket + flushBucket/2
		}
	}
	return flushBuckets*flushBucket - flushBucket/2 // counts raced past n: the last bucket
}
