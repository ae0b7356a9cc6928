package demo

import (
	"fmt"

	"github.com/gymtrace/gymtrace/capture"
)

// CaptureSummary is one rollout's capture as read back from its capture file, the way `gymtrace
// calls` and `gymtrace metrics` read it (the tolerant reader of SPEC §2.5, aggregated per §5.2).
type CaptureSummary struct {
	Calls      int             // valid call records
	Dialects   []string        // distinct dialects of the records, in first-seen order
	Metrics    capture.Metrics // SPEC §5.2 sums over the records (nil = every value null)
	Errors     int             // records whose error_category is set (SPEC §3.3)
	Invalid    int             // unreadable lines, skipped
	Incomplete bool            // the rollout's .capture.incomplete marker exists (SPEC §2.6)
}

// readCaptureSummary reads rollout id's capture file in store.
func readCaptureSummary(store *capture.Store, id string) (CaptureSummary, error) {
	recs, invalid, err := store.ReadAvailableModelCallRecords(id)
	if err != nil {
		return CaptureSummary{}, fmt.Errorf("read capture of %s: %w", id, err)
	}
	incomplete, err := store.IsIncomplete(id)
	if err != nil {
		return CaptureSummary{}, fmt.Errorf("read capture of %s: %w", id, err)
	}
	s := CaptureSummary{Calls: len(recs), Metrics: capture.Aggregate(recs), Invalid: invalid, Incomplete: incomplete}
	seen := map[string]bool{}
	for _, r := range recs {
		if r.ErrorCategory != nil {
			s.Errors++
		}
		if r.Dialect != nil && !seen[*r.Dialect] {
			seen[*r.Dialect] = true
			s.Dialects = append(s.Dialects, *r.Dialect)
		}
	}
	return s, nil
}
