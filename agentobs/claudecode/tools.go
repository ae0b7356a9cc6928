package claudecode

import (
	"cmp"
	"math"
	"slices"

	"github.com/gymtrace/gymtrace/agentobs"
)

// toolObservations pairs tool starts and finishes (SPEC §6.4 "Tool observations").
func (x *extractor) toolObservations() []*agentobs.ToolCallObservation {
	keys := make([]toolKey, 0, len(x.starts)+len(x.finishes))
	for k := range x.starts {
		keys = append(keys, k)
	}
	for k := range x.finishes {
		if _, dup := x.starts[k]; !dup {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b toolKey) int {
		return cmp.Or(cmp.Compare(x.firstSeen[a.invocation], x.firstSeen[b.invocation]), cmp.Compare(a.toolCallID, b.toolCallID),
			cmp.Compare(a.invocation, b.invocation))
	})

	var out []*agentobs.ToolCallObservation
	for _, k := range keys {
		starts, finishes := x.starts[k], x.finishes[k]
		toolGap := func(code string) { x.gap(code, k.invocation, ptr(k.toolCallID)) }
		if len(starts) > 1 || len(finishes) > 1 {
			toolGap(GapAmbiguousToolArtifact)
			continue
		}
		var start toolStart
		finish := toolFinish{status: agentobs.ToolCallStatusIncomplete}
		if len(starts) == 1 {
			start = starts[0]
		}
		if len(finishes) == 1 {
			finish = finishes[0]
		}
		if len(starts) == 0 {
			toolGap(GapToolStartMissing)
		}
		if len(finishes) == 0 {
			toolGap(GapToolResultMissing)
		}
		if len(starts) == 1 && start.at == nil {
			toolGap(GapToolStartTimestampMissing)
		}
		if len(finishes) == 1 && finish.at == nil {
			toolGap(GapToolResultTimestampMissing)
		}
		startedAt, completedAt := start.at, finish.at
		var duration *float64
		if startedAt != nil && completedAt != nil {
			if *completedAt >= *startedAt {
				// An overflow to +Inf (timestamps near ±1.8e308) is what Gym dumps as null.
				if d := (*completedAt - *startedAt) * 1000; !math.IsInf(d, 0) {
					duration = &d
				}
			} else {
				toolGap(GapToolTimingInvalid)
				completedAt = nil
			}
		}
		t := &agentobs.ToolCallObservation{
			InvocationID: k.invocation,
			ToolCallID:   k.toolCallID,
			StartedAt:    startedAt,
			CompletedAt:  completedAt,
			DurationMS:   duration,
			Status:       finish.status,
		}
		if start.name != "" {
			t.ToolName = ptr(start.name)
		}
		if startedAt != nil || completedAt != nil {
			t.TimingSource = ptr(agentobs.TimingSourceArtifact)
		}
		out = append(out, t)
	}
	return out
}
