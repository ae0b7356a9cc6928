package agentobs

import (
	"errors"
	"slices"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/ojson"
)

// payloadKeys are the members of a captured call that move into ng_trajectory on a successful
// projection and that exports drop (SPEC §5.5).
var payloadKeys = []string{"request", "response", "request_raw", "response_raw"}

// HasTrajectoryEvidence reports whether result has any of the keys ng_model_call_capture,
// ng_agent_observations, ng_trajectory, whatever its value (null included): the condition under
// which Gym's collector projects a rollout (SPEC §5.5 step 3).
func HasTrajectoryEvidence(result ojson.Value) bool {
	for _, k := range []string{capture.AttachmentKey, AttachmentKey, TrajectoryKey} {
		if _, ok := result.Get(k); ok {
			return true
		}
	}
	return false
}

// HasObservationGap is Gym's _has_observation_gap (SPEC §5.5 "The redaction rule"): whether
// result.ng_trajectory or result.ng_agent_observations is an object whose gaps is a list holding
// an object whose code is code. Nothing is validated.
func HasObservationGap(result ojson.Value, code string) bool {
	for _, k := range []string{TrajectoryKey, AttachmentKey} {
		v, _ := result.Get(k)
		gaps, _ := v.Get("gaps")
		for _, g := range gaps.Elems() {
			if c, ok := g.Get("code"); ok {
				if s, isStr := c.AsString(); isStr && s == code {
					return true
				}
			}
		}
	}
	return false
}

// AttachTrajectory is Gym's _attach_trajectory_record (SPEC §5.5 step 3): it projects the
// rollout ([ProjectTrajectory]) and edits result in place. On success ng_trajectory is set (an
// existing key keeps its position, else it is appended last) and every object in
// ng_model_call_capture.calls loses request, response, request_raw and response_raw (the payloads
// now live in ng_trajectory). On failure ng_trajectory is removed and the gap
// {"code":"trajectory_projection_failed","detail":<class>} is appended to the gaps of
// ng_model_call_capture (if an object) or else of ng_agent_observations (if an object), a missing
// gaps list being added as the last key; when neither is an object, or the target's gaps is not a
// list, ng_trajectory becomes the minimal record of the row's identity carrying that gap, and when
// the identity itself fails nothing is kept. It returns the projection's error (nil on success),
// for the caller to report; the rollout is kept in either case. A result that is not an object is
// left as it is, with a TypeError, and a nil result is a TypeError too. result must not share
// nested values with row (a plain copy of a parsed row does: use Value.Clone), since result's
// calls are edited in place.
func AttachTrajectory(row ojson.Value, result *ojson.Value) error {
	if result == nil {
		return projErr(ClassTypeError, "the result is nil")
	}
	if result.Kind() != ojson.KindObject {
		return projErr(ClassTypeError, "the result is a JSON %s, not an object", result.Kind())
	}
	return attachTrajectory(row, result, ProjectTrajectory)
}

func attachTrajectory(row ojson.Value, result *ojson.Value, project func(row, result ojson.Value) (ojson.Value, error)) error {
	rec, err := project(row, *result)
	if err == nil {
		result.Set(TrajectoryKey, rec)
		if att, ok := result.Get(capture.AttachmentKey); ok && att.Kind() == ojson.KindObject {
			if calls, ok := att.Get("calls"); ok && calls.Kind() == ojson.KindArray {
				att.Set("calls", stripPayloads(calls, false))
				result.Set(capture.AttachmentKey, att)
			}
		}
		return nil
	}
	class := ClassValidationError
	if pe := (*ProjectionError)(nil); errors.As(err, &pe) {
		class = pe.Class
	}
	*result = without(*result, TrajectoryKey)
	gap := ojson.Object(ojson.Member{Key: "code", Value: ojson.String(GapTrajectoryProjectionFailed)},
		ojson.Member{Key: "detail", Value: ojson.String(class)})
	// The target is the first of the two attachments that is an object; when its gaps is present
	// but not a list, the other one is not tried and the minimal record is written instead.
	for _, k := range []string{capture.AttachmentKey, AttachmentKey} {
		target, _ := result.Get(k)
		if target.Kind() != ojson.KindObject {
			continue
		}
		target = target.Clone()
		gaps, ok := target.Get("gaps")
		if !ok {
			gaps = ojson.Array()
		}
		if gaps.Kind() == ojson.KindArray {
			target.Set("gaps", ojson.Array(append(slices.Clone(gaps.Elems()), gap)...))
			result.Set(k, target)
			return err
		}
		break
	}
	taskID, rolloutID, idErr := trajectoryIdentity(row)
	if idErr != nil {
		return err
	}
	minimal, _ := validateTrajectory(ojson.Object(
		ojson.Member{Key: "task_id", Value: ojson.String(taskID)},
		ojson.Member{Key: "rollout_id", Value: ojson.String(rolloutID)},
		ojson.Member{Key: "gaps", Value: gapsValue([]ObservationGap{gapOf(GapTrajectoryProjectionFailed, class)})},
	))
	result.Set(TrajectoryKey, minimal)
	return err
}

// RolloutForExport is Gym's _rollout_for_export (SPEC §5.5 "Views that drop the trajectory"): a
// copy of result without ng_trajectory, whose ng_model_call_capture, when an object, is moved last
// with its calls (when a list) reduced to the objects among them without payload keys, and a
// non-list calls removed; a non-object attachment is dropped. result is not modified.
func RolloutForExport(result ojson.Value) ojson.Value {
	att, had := result.Get(capture.AttachmentKey)
	out := without(result, TrajectoryKey, capture.AttachmentKey)
	if !had || att.Kind() != ojson.KindObject {
		return out
	}
	att = without(att)
	if calls, ok := att.Get("calls"); ok {
		if calls.Kind() == ojson.KindArray {
			att.Set("calls", stripPayloads(calls, true))
		} else {
			att = without(att, "calls")
		}
	}
	out.Set(capture.AttachmentKey, att)
	return out
}

// stripPayloads returns calls with the payload keys removed from each object; non-objects are
// kept unless objectsOnly.
func stripPayloads(calls ojson.Value, objectsOnly bool) ojson.Value {
	out := make([]ojson.Value, 0, len(calls.Elems()))
	for _, c := range calls.Elems() {
		switch {
		case c.Kind() == ojson.KindObject:
			out = append(out, without(c, payloadKeys...))
		case !objectsOnly:
			out = append(out, c)
		}
	}
	return ojson.Array(out...)
}
