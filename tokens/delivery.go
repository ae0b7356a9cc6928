package tokens

import (
	"fmt"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// The members finalization reads and writes (TOKENS.md §3.7).
const (
	// TokenCaptureKey is the rollout line's member holding the build's metrics (and its error).
	TokenCaptureKey = "_ng_token_capture"
	// MaskSampleKey is the rollout line's member set to true when the trainer must not train on
	// the rollout; it is never written as false. It is also a build result's member.
	MaskSampleKey = "mask_sample"
	// RedundantCaptureKey marks the build of a rollout whose line already carries token ids.
	RedundantCaptureKey = "_redundant_capture"
	// CaptureSnapshotKey is a build's {"snapshot_id", "version"}: the frozen capture it was
	// built from, which [RetireRollout] drops.
	CaptureSnapshotKey = "_capture_snapshot"
)

// RolloutCarriesTokenIDs is the reference's rollout_carries_token_ids (TOKENS.md §3.7): whether
// result.response is an object whose output holds an object with a truthy generation_token_ids
// (an empty list is not; prompt ids alone are not; a chat-shaped response never is). Such a
// rollout came from a "native" agent and is not rebuilt.
func RolloutCarriesTokenIDs(result ojson.Value) bool {
	response, _ := result.Get("response")
	output, _ := response.Get("output")
	for _, item := range output.Elems() {
		if g, _ := item.Get(keyGenerationTokenIDs); python.Truthy(g) {
			return true
		}
	}
	return false
}

// FinalizeRollout is the reference's finalize_rollout_token_capture (TOKENS.md §3.7, gymtrace's
// T6): it freezes and builds the capture of result's rollout from src and edits result (a rollout
// line) in place. It never fails; it returns the build (null when there is nothing to do: no src,
// or a line that carries token ids but names no rollout) and a warning for the log ("" when
// none). In order:
//
//   - The rollout id is read as Gym's maybe_rollout_id_from_run_body reads it; a malformed id
//     makes the line unusable, "malformed rollout id: <message>".
//   - A line that already carries token ids ([RolloutCarriesTokenIDs]) is left untouched; its
//     capture is frozen and the build is {"rebuilt_response": null, "mask_sample": false,
//     "_redundant_capture": true, "_capture_snapshot": {...}}, so it can be retired (a freeze
//     error gives null and the warning "could not freeze redundant records for rollout <id>.").
//   - A line without an id is unusable, "no capture key".
//   - Else the build is [TrajectoriesFromSource] with the builder [BuilderPrefixMerging] and the
//     model of result.response (when truthy). A rebuilt response replaces result.response.output
//     (every other member of the response kept), or becomes result.response when that is not an
//     object; this happens for masked builds too. result._ng_token_capture is set to the build's
//     metrics plus its error, if any; a masked build also sets result.mask_sample to true and
//     warns "rollout <id> was captured incompletely or ambiguously (<metrics>); it is marked for
//     masking rather than trained on."
//
// An unusable line gets mask_sample true and _ng_token_capture {"n_calls": 0, "error": <e>}, the
// build {"rebuilt_response": null, "mask_sample": true, "error": <e>, "metrics": {"n_calls": 0,
// "error": <e>}} and the reference's warning. Members the line has keep their position; new ones
// are appended, mask_sample before _ng_token_capture. A result that is not a JSON object is left
// as it is, with a null build and a warning.
func FinalizeRollout(result *ojson.Value, src Source) (built ojson.Value, warning string) {
	return FinalizeRolloutWith(result, src, BuilderPrefixMerging)
}

// FinalizeRolloutWith is [FinalizeRollout] building with the named builder instead of the
// reference's [BuilderPrefixMerging] (TOKENS.md §3.6: [BuilderPerRequest] always gives the failed
// build "per_request returns multiple trajectories and is not supported by single-response
// delivery"; an unknown name fails the build with [RunBuilder]'s ValueError).
func FinalizeRolloutWith(result *ojson.Value, src Source, builder string) (built ojson.Value, warning string) {
	if src == nil {
		return ojson.Null(), ""
	}
	if result.Kind() != ojson.KindObject {
		return ojson.Null(), fmt.Sprintf("a rollout result is a JSON %s, not an object, so it was not finalized.", result.Kind())
	}
	id, ok, err := rolloutIDOf(*result)
	if err != nil {
		return unusable(result, "malformed rollout id: "+err.Error()),
			"a rollout result carries a malformed id (" + err.Error() + "), so its recorded token ids could not be looked up and it will be token-less."
	}
	if RolloutCarriesTokenIDs(*result) {
		if !ok {
			return ojson.Null(), ""
		}
		snap, err := src.Freeze(id)
		if err != nil {
			return ojson.Null(), "could not freeze redundant records for rollout " + id + "."
		}
		return ojson.Object(
			ojson.Member{Key: buildRebuiltResponse, Value: ojson.Null()},
			ojson.Member{Key: MaskSampleKey, Value: ojson.Bool(false)},
			ojson.Member{Key: RedundantCaptureKey, Value: ojson.Bool(true)},
			ojson.Member{Key: CaptureSnapshotKey, Value: snapshotIdentity(snap)},
		), ""
	}
	if !ok {
		return unusable(result, "no capture key"),
			"a rollout result carries no id and no task/rollout indices, so its recorded token ids could not be looked up and it will be token-less."
	}
	response, _ := result.Get("response")
	model := ""
	if m, _ := response.Get("model"); python.Truthy(m) {
		model = python.Str(m)
	}
	built = TrajectoriesFromSource(id, src, builder, model)
	if rebuilt, _ := built.Get(buildRebuiltResponse); !rebuilt.IsNull() {
		if response.Kind() == ojson.KindObject {
			output, _ := rebuilt.Get("output")
			response.Set("output", output)
			result.Set("response", response)
		} else {
			result.Set("response", rebuilt)
		}
	}
	metrics, _ := built.Get(buildMetrics)
	capture := ojson.Object(append([]ojson.Member(nil), metrics.Members()...)...)
	if e, ok := built.Get(buildError); ok {
		capture.Set(buildError, e)
	}
	if mask, _ := built.Get(MaskSampleKey); python.Truthy(mask) {
		result.Set(MaskSampleKey, ojson.Bool(true))
		warning = "rollout " + id + " was captured incompletely or ambiguously (" + python.Repr(capture) + "); it is marked for masking rather than trained on."
	}
	result.Set(TokenCaptureKey, capture)
	return built, warning
}

// snapshotIdentity is a build's _capture_snapshot member (TOKENS.md §3.6).
func snapshotIdentity(snap Snapshot) ojson.Value {
	return ojson.Object(
		ojson.Member{Key: "snapshot_id", Value: ojson.String(snap.SnapshotID)},
		ojson.Member{Key: "version", Value: ojson.Int(snap.Version)},
	)
}

// unusable marks result as a rollout whose capture could not be looked up (TOKENS.md §3.7) and
// returns the build that says so.
func unusable(result *ojson.Value, errText string) ojson.Value {
	metrics := func() ojson.Value {
		return ojson.Object(intMember(metricNCalls, 0), ojson.Member{Key: buildError, Value: ojson.String(errText)})
	}
	result.Set(MaskSampleKey, ojson.Bool(true))
	result.Set(TokenCaptureKey, metrics())
	return ojson.Object(
		ojson.Member{Key: buildRebuiltResponse, Value: ojson.Null()},
		ojson.Member{Key: MaskSampleKey, Value: ojson.Bool(true)},
		ojson.Member{Key: buildError, Value: ojson.String(errText)},
		ojson.Member{Key: buildMetrics, Value: metrics()},
	)
}

// CaptureBuildCanRetire is the reference's capture_build_can_retire (TOKENS.md §3.7): whether
// built (a build result; null for none) is not masked and either rebuilt the response or was a
// redundant capture — only then may its capture be retired, after the line holding it is durable.
func CaptureBuildCanRetire(built ojson.Value) bool {
	if built.Kind() != ojson.KindObject {
		return false
	}
	mask, _ := built.Get(MaskSampleKey)
	rebuilt, _ := built.Get(buildRebuiltResponse)
	redundant, _ := built.Get(RedundantCaptureKey)
	return !python.Truthy(mask) && (!rebuilt.IsNull() || python.Truthy(redundant))
}

// RetireRollout is the reference's retire_rollout_token_capture (TOKENS.md §3.7, gymtrace's T6):
// when built can retire ([CaptureBuildCanRetire]) it drops rolloutID's capture in src at the
// build's _capture_snapshot identity, and reports whether it did. Drop refuses (false) when the
// capture changed since the freeze, e.g. the id was cleared and reused. It never fails: a build
// without a snapshot identity warns "rollout <id> has no frozen capture identity to retire.", an
// identity that does not convert or a failing Drop warns "could not retire the records for
// rollout <id>.", and both return false.
func RetireRollout(rolloutID string, src Source, built ojson.Value) (retired bool, warning string) {
	if src == nil || !CaptureBuildCanRetire(built) {
		return false, ""
	}
	ident, _ := built.Get(CaptureSnapshotKey)
	if ident.Kind() != ojson.KindObject {
		return false, "rollout " + rolloutID + " has no frozen capture identity to retire."
	}
	failed := "could not retire the records for rollout " + rolloutID + "."
	sid, hasID := ident.Get("snapshot_id")
	v, hasVersion := ident.Get("version")
	if !hasID || !hasVersion {
		return false, failed
	}
	version, err := python.Int(v)
	if err != nil || !version.IsInt64() {
		return false, failed
	}
	retired, err = src.Drop(rolloutID, python.Str(sid), version.Int64())
	if err != nil {
		return false, failed
	}
	return retired, ""
}
