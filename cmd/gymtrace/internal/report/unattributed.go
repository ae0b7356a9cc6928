package report

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
)

// FindingUnattributedObservations: the capture directory's _unattributed.observations.jsonl holds
// observation spans that named no rollout — not on the span, its resource or any span of its
// trace the writer saw within its window (SPEC §0 D18); no rollout's observations include them
// (run level; the message gives the spans, traces and reasons).
const FindingUnattributedObservations FindingKind = "unattributed_observations"

// unattributedFinding returns the finding of a non-empty unattributed file in store's directory,
// nil for none; the error is a failing read.
func unattributedFinding(store *capture.Store) (*Finding, error) {
	u, err := agentobs.ReadUnattributed(store)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if u.Empty() {
		return nil, nil
	}
	return &Finding{Kind: FindingUnattributedObservations, Message: UnattributedMessage(filepath.Join(store.Dir(), capture.UnattributedObservationsFile), u)}, nil
}

// UnattributedMessage is the sentence for a non-empty unattributed file at path, e.g.
// "/d/_unattributed.observations.jsonl holds 3 observation spans of 2 traces that name no rollout
// (reasons: 2 no_rollout_id, 1 flushed): no rollout's observations include them; set
// gymtrace.rollout.id on the spans or their resource (OTEL_RESOURCE_ATTRIBUTES), or put them in the
// rollout's trace (SPEC §0 D18)". `gymtrace attach --strict` says the same.
func UnattributedMessage(path string, u agentobs.UnattributedSummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s holds %d observation span%s of %d trace%s that name no rollout", path, u.Spans, plural(u.Spans), u.Traces, plural(u.Traces))
	if len(u.Reasons) > 0 {
		var parts []string
		for _, r := range slices.Sorted(maps.Keys(u.Reasons)) {
			parts = append(parts, fmt.Sprintf("%d %s", u.Reasons[r], cmp.Or(r, "unknown")))
		}
		fmt.Fprintf(&b, " (reasons: %s)", strings.Join(parts, ", "))
	}
	if u.Damaged > 0 {
		fmt.Fprintf(&b, " and %d damaged line%s", u.Damaged, plural(u.Damaged))
	}
	b.WriteString(": no rollout's observations include them; set gymtrace.rollout.id on the spans or their resource (OTEL_RESOURCE_ATTRIBUTES), or put them in the rollout's trace (SPEC §0 D18)")
	return b.String()
}
