package report

import (
	"cmp"
	"math"
	"slices"

	"github.com/gymtrace/gymtrace/capture"
)

// Percentile returns the p-th percentile (0 < p ≤ 100) of values by the nearest-rank method: the
// smallest value such that at least p percent of the values are less than or equal to it, so the
// result is always one of the values (the median of 1, 2, 3, 4 is 2). NaN values are ignored. It
// returns nil when there is no value or p is out of range. values is not modified.
func Percentile(values []float64, p float64) *float64 {
	if !(p > 0 && p <= 100) {
		return nil
	}
	s := make([]float64, 0, len(values))
	for _, v := range values {
		if !math.IsNaN(v) {
			s = append(s, v)
		}
	}
	if len(s) == 0 {
		return nil
	}
	slices.Sort(s)
	v := s[max(1, int(math.Ceil(p/100*float64(len(s)))))-1]
	return &v
}

// countCategories counts calls by error category, most frequent first (ties by name), and returns
// the number of failed calls.
func countCategories(calls []Call) ([]CategoryCount, int) {
	counts := make(map[string]int)
	failed := 0
	for i := range calls {
		if c := calls[i].ErrorCategory; c != nil {
			counts[*c]++
			failed++
		}
	}
	return sortedCounts(counts), failed
}

func sortedCounts(counts map[string]int) []CategoryCount {
	out := make([]CategoryCount, 0, len(counts))
	for k, v := range counts {
		out = append(out, CategoryCount{Category: k, Count: v})
	}
	slices.SortFunc(out, func(a, b CategoryCount) int {
		return cmp.Or(b.Count-a.Count, cmp.Compare(a.Category, b.Category))
	})
	return out
}

// totals aggregates the rollouts.
func totals(rs []Rollout) Totals {
	var t Totals
	var all []capture.ModelCallRecord
	var lat, ttft []float64
	counts := make(map[string]int)
	for i := range rs {
		r := &rs[i]
		t.Rollouts++
		if len(r.Calls) > 0 {
			t.RolloutsWithCalls++
		}
		t.DamagedLines += r.DamagedLines
		t.FailedCalls += r.FailedCalls
		for _, c := range r.Errors {
			counts[c.Category] += c.Count
		}
		for j := range r.Calls {
			rec := r.Calls[j].ModelCallRecord
			all = append(all, rec)
			if rec.LatencyTotalMS != nil {
				lat = append(lat, *rec.LatencyTotalMS)
			}
			if rec.LatencyTTFTMS != nil {
				ttft = append(ttft, *rec.LatencyTTFTMS)
			}
		}
		t.FirstStartedAt = minPtr(t.FirstStartedAt, r.FirstStartedAt)
		t.LastCompletedAt = maxPtr(t.LastCompletedAt, r.LastCompletedAt)
	}
	t.Calls = len(all)
	t.Metrics = capture.Aggregate(all)
	t.LatencyP50MS, t.LatencyP95MS = Percentile(lat, 50), Percentile(lat, 95)
	t.TTFTP50MS, t.TTFTP95MS = Percentile(ttft, 50), Percentile(ttft, 95)
	t.Errors = sortedCounts(counts)
	return t
}

// minPtr and maxPtr return the smaller (larger) of *cur and *v as a new pointer, ignoring a nil or
// NaN v.
func minPtr(cur, v *float64) *float64 {
	return pickPtr(cur, v, func(a, b float64) bool { return a < b })
}
func maxPtr(cur, v *float64) *float64 {
	return pickPtr(cur, v, func(a, b float64) bool { return a > b })
}

func pickPtr(cur, v *float64, better func(a, b float64) bool) *float64 {
	if v == nil || math.IsNaN(*v) || (cur != nil && !better(*v, *cur)) {
		return cur
	}
	x := *v
	return &x
}
