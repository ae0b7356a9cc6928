package rollouts

import (
	"bytes"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rolloutline"
	"github.com/gymtrace/gymtrace/ojson"
)

// availabilityGaps are the gap codes SPEC §5.6 "Availability gaps" derives from the projected lists
// themselves, and the two that stand for a source's invalid gap or bundle ("Capture gaps",
// "Observation bundle"): a projection re-derives all of them from the sources it reads.
var availabilityGaps = map[string]bool{
	agentobs.GapModelCallsUnavailable:      true,
	agentobs.GapTurnsUnavailable:           true,
	agentobs.GapConversationUnavailable:    true,
	agentobs.GapModelCallCaptureGapInvalid: true,
	agentobs.GapAgentObservationsInvalid:   true,
}

// derivedGaps is the set of gaps (by [gapKey]) an earlier projection of a row derived from its
// sources, for a row that was attached before: see [priorGaps] and [withoutDerivedGaps].
type derivedGaps map[string]bool

// priorGaps returns, for input row l before anything is attached to it, the gaps of its
// ng_model_call_capture (invocation_id null) and of its ng_agent_observations, when l was attached
// before: it carries both an ng_model_call_capture object and an ng_trajectory object, so that
// ng_trajectory is the output of an earlier projection (by `gymtrace attach`, or Gym's collector with
// capture on), not the producer's own record. It returns nil for every other row.
func priorGaps(l *rolloutline.Line) derivedGaps {
	raw, ok := l.Get(agentobs.TrajectoryKey)
	if !ok || !isObjectText(raw) {
		return nil
	}
	if raw, ok = l.Get(capture.AttachmentKey); !ok || !isObjectText(raw) {
		return nil
	}
	d := derivedGaps{}
	d.add(pick(l, []string{capture.AttachmentKey, agentobs.AttachmentKey}))
	return d
}

// isObjectText reports whether the JSON text raw is an object.
func isObjectText(raw []byte) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && raw[0] == '{'
}

// add puts in d the gaps of ev's ng_model_call_capture and ng_agent_observations objects.
func (d derivedGaps) add(ev ojson.Value) {
	for _, k := range []string{capture.AttachmentKey, agentobs.AttachmentKey} {
		if v, ok := ev.Get(k); ok && v.Kind() == ojson.KindObject {
			for _, g := range elemsOf(v, "gaps") {
				d[gapKey(g)] = true
			}
		}
	}
}

// withoutDerivedGaps returns the evidence ev (the row's ng_model_call_capture,
// ng_agent_observations and ng_trajectory after the attachment and the join, see
// projectTrajectory) of a row attached before (prior, from [priorGaps]; nil returns ev as it is)
// ready for projecting it again.
//
// SPEC §5.6 takes an existing ng_trajectory as the producer's and puts its gaps first ("Assembly":
// producer gaps, bundle gaps, capture gaps, availability gaps), so re-projecting an earlier
// projection would keep the gaps that projection derived from the bundle, the capture and the lists
// ahead of the ones it derives now, and never withdraw a stale one (§5.6 "Surprises" item 5). So the
// longest suffix of the earlier trajectory's gaps made only of derived gaps — a gap equal (code,
// invocation_id, detail) to one of the earlier or the current ng_agent_observations or
// ng_model_call_capture gaps (the latter with invocation_id null), or one of availabilityGaps — is
// dropped before the projection, which derives them again from the current sources, in their fresh
// order: a re-attach then writes the row that a fresh attach of the line before its first attach
// writes (same calls, same gaps, same order, same bytes). A producer gap at the end of the list
// that equals a derived one is dropped with them and re-added in the derived position. The rest of
// the trajectory is kept; ev is not modified.
func withoutDerivedGaps(ev ojson.Value, prior derivedGaps) ojson.Value {
	if prior == nil {
		return ev
	}
	traj, ok := ev.Get(agentobs.TrajectoryKey)
	if !ok || traj.Kind() != ojson.KindObject {
		return ev
	}
	gaps, ok := traj.Get("gaps")
	if !ok || gaps.Kind() != ojson.KindArray {
		return ev
	}
	derived := derivedGaps{}
	for k := range prior {
		derived[k] = true
	}
	derived.add(ev)
	elems := gaps.Elems()
	keep := len(elems)
	for keep > 0 {
		g := elems[keep-1]
		code, _ := g.Get("code")
		c, _ := code.AsString()
		if !availabilityGaps[c] && !derived[gapKey(g)] {
			break
		}
		keep--
	}
	if keep == len(elems) {
		return ev
	}
	traj = traj.Clone()
	traj.Set("gaps", ojson.Array(elems[:keep]...))
	out := ev.Clone()
	out.Set(agentobs.TrajectoryKey, traj)
	return out
}

// elemsOf returns the elements of v's member key when it is an array, else none.
func elemsOf(v ojson.Value, key string) []ojson.Value {
	a, ok := v.Get(key)
	if !ok || a.Kind() != ojson.KindArray {
		return nil
	}
	return a.Elems()
}

// gapKey identifies a gap object by its code, invocation_id and detail (a missing member counts as
// null, as SPEC §5.6 "ObservationGap" dumps it); a value that is not an object has a key no gap has.
func gapKey(g ojson.Value) string {
	if g.Kind() != ojson.KindObject {
		return "\x00"
	}
	var key []byte
	for _, k := range []string{"code", "invocation_id", "detail"} {
		v, ok := g.Get(k)
		if !ok {
			v = ojson.Null()
		}
		key = v.AppendJSON(key)
		key = append(key, 0)
	}
	return string(key)
}
