package rollouts

import (
	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rolloutline"
	"github.com/gymtrace/gymtrace/semconv"
)

// evidenceKeys are the row keys the projection reads and writes (SPEC §5.5 step 3).
var evidenceKeys = []string{capture.AttachmentKey, agentobs.AttachmentKey, agentobs.TrajectoryKey}

// hasRedactedHistory reports whether ng_trajectory or ng_agent_observations of l has the gap
// multimodal_history_redacted (SPEC §5.5 step 2, [agentobs.HasObservationGap]).
func hasRedactedHistory(l *rolloutline.Line) bool {
	return agentobs.HasObservationGap(pick(l, []string{agentobs.TrajectoryKey, agentobs.AttachmentKey}),
		semconv.GapMultimodalHistoryRedacted)
}

// projectTrajectory is SPEC §5.5 step 3 on row l (after its attachment and join): when l has any
// of the evidence keys, [agentobs.AttachTrajectory] runs over them, and the keys it changed are
// written back (a new ng_trajectory as the last key, a removed one deleted); every other key keeps
// its text. The identity row is l's rollout-identity keys (which Gym's collector copied from the
// dispatched row) with the task keys of the matching row of inputs, else of l itself; matched
// reports whether inputs had one. A row attached before (prior, see [priorGaps]) has the gaps its
// earlier projection derived dropped from its ng_trajectory first ([withoutDerivedGaps]), so its
// projection is that of a fresh attach. err is the projection's failure (the row then carries the
// trajectory_projection_failed gap, SPEC §5.5), or a write-back failure.
func projectTrajectory(l *rolloutline.Line, inputs *InputRows, prior derivedGaps) (matched bool, err error) {
	before := pick(l, evidenceKeys)
	if !agentobs.HasTrajectoryEvidence(before) {
		return false, nil
	}
	task, matched := inputs.lookup(l)
	if !matched {
		task = pick(l, taskKeys)
	}
	row := pick(l, identityKeys)
	for _, m := range task.Members() {
		row.Set(m.Key, m.Value)
	}
	after := withoutDerivedGaps(before, prior).Clone()
	projErr := agentobs.AttachTrajectory(row, &after)
	for _, k := range evidenceKeys {
		was, had := before.Get(k)
		now, has := after.Get(k)
		switch {
		case had && !has:
			l.Delete(k)
		case has && (!had || !now.Equal(was)):
			if err := l.Set(k, now.AppendJSON(nil)); err != nil {
				return matched, err
			}
		}
	}
	return matched, projErr
}
