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
	"github.com/gymtrace/gymtrace/semconv"
)

// FindingUnattributedObservations: the capture directory's _unattributed.observations.jsonl holds
// observation spans that named no rollout — not on the span, its resource or any span of its
// trace the writer saw within its window (SPEC §0 D18); no rollout's observations include them
// (run level; the message gives the spans, traces and reasons).
const FindingUnattributedObservations FindingKind = "unattributed_observations"

// unattributedFinding returns the finding of a non-empty unattributed file in store's directory,
// nil for none. A file that cannot be read — a symbolic link, a FIFO, a directory, another file
// type or a hard link, which the store never opens (package capture's ErrNotRegularFile), or a
// failing read — is a finding too ([UnattributedUnreadableMessage]), as `gymtrace attach` reports
// it and as an unreadable capture file is a finding, never the report's error: what the file holds
// cannot be known, so it may hold spans that name no rollout (SPEC §0 D18).
func unattributedFinding(store *capture.Store) *Finding {
	path := filepath.Join(store.Dir(), capture.UnattributedObservationsFile)
	u, err := agentobs.ReadUnattributed(store)
	switch {
	case err != nil:
		return &Finding{Kind: FindingUnattributedObservations, Message: UnattributedUnreadableMessage(path, err)}
	case u.Empty():
		return nil
	}
	return &Finding{Kind: FindingUnattributedObservations, Message: UnattributedMessage(path, u)}
}

// UnattributedUnreadableMessage is the sentence for the unattributed file at path that cannot be
// read (err, which names the file and the rule it breaks), e.g. "/d/_unattributed.observations.jsonl
// cannot be read: ...: not a regular file (a symbolic link): ...". `gymtrace attach` says the same.
func UnattributedUnreadableMessage(path string, err error) string {
	return fmt.Sprintf("%s cannot be read: %v", path, err)
}

// UnattributedMessage is the sentence for a non-empty unattributed file at path, e.g.
// "/d/_unattributed.observations.jsonl holds 3 observation spans of 2 traces that name no rollout
// (reasons: 2 no_rollout_id, 1 flushed): no rollout's observations include them; set
// gymtrace.rollout.id on the spans or their resource (OTEL_RESOURCE_ATTRIBUTES), or put them in the
// rollout's trace (SPEC §0 D18)". `gymtrace attach --strict` says the same.
func UnattributedMessage(path string, u agentobs.UnattributedSummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s holds %d observation span%s", path, u.Spans, plural(u.Spans))
	if u.Traces > 0 { // a span without a valid trace id belongs to none
		fmt.Fprintf(&b, " of %d trace%s", u.Traces, plural(u.Traces))
	}
	if u.Spans == 1 {
		b.WriteString(" that names no rollout")
	} else {
		b.WriteString(" that name no rollout")
	}
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
	if u.Reasons[semconv.GymtraceUnattributedNoTraceID] > 0 {
		b.WriteString("; a span without a valid trace id (no_trace_id) goes here even when it names a rollout: its sender must give it one")
	}
	return b.String()
}
