package tokens

import (
	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/rollout"
)

// The members of a build result (TOKENS.md §3.6, §3.7).
const (
	buildBuilder            = "builder"
	buildRebuiltResponse    = "rebuilt_response"
	buildMetrics            = "metrics"
	buildUnresolvedRetries  = "unresolved_retries"
	buildError              = "error"
	metricNCalls            = "n_calls"
	metricCaptureIncomplete = "capture_incomplete"
)

// The failed-build errors that carry no exception class (TOKENS.md §3.6).
const (
	errNoTokenRecords    = "capture contains no token records"
	errPerRequestRefused = "per_request returns multiple trajectories and is not supported by single-response delivery"
)

// TrajectoriesFromSource is the reference's trajectories_from_source (and, for a file store,
// trajectories_for_rollout; TOKENS.md §3.6): it freezes rolloutID's capture in src and builds its
// entries with the named builder ([BuilderPrefixMerging] is the reference's default) into the
// build result, a JSON object. It never fails: every failure is a failed build. A nil src gives
// null (the reference's None: no capture directory).
//
// A successful build is, in this key order:
//
//	{"rollout_id", "builder", "rebuilt_response": <the main chain's Responses object,
//	 [ProjectMainChainResponse]>, "metrics": {"n_calls" (all entries), "chains", "roots",
//	 "quarantined_calls", "quarantined_fraction" (round(quarantined/n_calls, 4)),
//	 "delivered_fraction", "generated_tokens_captured", "generated_tokens_delivered",
//	 "empty_generation_calls" (a count)}, "mask_sample", "unresolved_retries"}
//
// with mask_sample true when a retry is unresolved or there is not exactly one root and one chain.
// A failed build is {"rollout_id", "builder", "rebuilt_response": null, "mask_sample": true,
// "error", "metrics": {"n_calls"}}; its error is "<Class>: <message>" ([ExceptionText]) when the
// freeze failed (n_calls 0) or the build, projection or contiguity check did (n_calls = the
// entries), "capture contains no token records" for a snapshot without entries, and "per_request
// returns multiple trajectories and is not supported by single-response delivery" for the builder
// [BuilderPerRequest]. When the snapshot is incomplete, mask_sample becomes true and
// metrics.capture_incomplete true is appended. Every build of a frozen snapshot ends with
// "_capture_snapshot": {"snapshot_id", "version"}, the identity [RetireRollout] needs.
func TrajectoriesFromSource(rolloutID string, src Source, builder, model string) ojson.Value {
	if src == nil {
		return ojson.Null()
	}
	snap, err := src.Freeze(rolloutID)
	if err != nil {
		return failedBuild(rolloutID, builder, ExceptionText(err), 0)
	}
	var built ojson.Value
	if len(snap.Entries) == 0 {
		built = failedBuild(rolloutID, builder, errNoTokenRecords, 0)
	} else {
		built = assemble(rolloutID, snap.Entries, builder, model)
	}
	if snap.Incomplete {
		built.Set(MaskSampleKey, ojson.Bool(true))
		metrics, _ := built.Get(buildMetrics)
		metrics.Set(metricCaptureIncomplete, ojson.Bool(true))
		built.Set(buildMetrics, metrics)
	}
	built.Set(CaptureSnapshotKey, snapshotIdentity(snap))
	return built
}

// assemble is the reference's _assemble (TOKENS.md §3.6): build, validate, project and check
// entries (not empty) into a build result.
func assemble(rolloutID string, entries []TokenEntry, builder, model string) ojson.Value {
	if builder == BuilderPerRequest {
		return failedBuild(rolloutID, builder, errPerRequestRefused, len(entries))
	}
	out, err := RunBuilder(entries, builder)
	for i := 0; err == nil && i < len(out.Chains); i++ {
		err = out.Chains[i].Validate()
	}
	var rebuilt ojson.Value
	if err == nil {
		rebuilt, err = ProjectMainChainResponse(rolloutID, out, model)
	}
	if err == nil {
		err = AssertPrefixContiguity(rebuilt)
	}
	if err != nil {
		return failedBuild(rolloutID, builder, ExceptionText(err), len(entries))
	}
	n := out.Notes
	unresolved := make([]ojson.Value, len(n.UnresolvedRetries))
	for i, id := range n.UnresolvedRetries {
		unresolved[i] = ojson.String(id)
	}
	return ojson.Object(
		ojson.Member{Key: keyRolloutID, Value: ojson.String(rolloutID)},
		ojson.Member{Key: buildBuilder, Value: ojson.String(builder)},
		ojson.Member{Key: buildRebuiltResponse, Value: rebuilt},
		ojson.Member{Key: buildMetrics, Value: ojson.Object(
			intMember(metricNCalls, len(entries)),
			intMember("chains", n.Chains),
			intMember("roots", n.Roots),
			intMember("quarantined_calls", len(out.Quarantined)),
			ojson.Member{Key: "quarantined_fraction", Value: ojson.Float(roundPython(float64(len(out.Quarantined))/float64(len(entries)), 4))},
			ojson.Member{Key: "delivered_fraction", Value: ojson.Float(n.DeliveredFraction)},
			intMember("generated_tokens_captured", n.GeneratedTokensCaptured),
			intMember("generated_tokens_delivered", n.GeneratedTokensDelivered),
			intMember("empty_generation_calls", len(n.EmptyGenerationCalls)),
		)},
		ojson.Member{Key: MaskSampleKey, Value: ojson.Bool(len(n.UnresolvedRetries) > 0 || n.Roots != 1 || n.Chains != 1)},
		ojson.Member{Key: buildUnresolvedRetries, Value: ojson.Array(unresolved...)},
	)
}

// failedBuild is the reference's failed-build result (TOKENS.md §3.6).
func failedBuild(rolloutID, builder, errText string, nCalls int) ojson.Value {
	return ojson.Object(
		ojson.Member{Key: keyRolloutID, Value: ojson.String(rolloutID)},
		ojson.Member{Key: buildBuilder, Value: ojson.String(builder)},
		ojson.Member{Key: buildRebuiltResponse, Value: ojson.Null()},
		ojson.Member{Key: MaskSampleKey, Value: ojson.Bool(true)},
		ojson.Member{Key: buildError, Value: ojson.String(errText)},
		ojson.Member{Key: buildMetrics, Value: ojson.Object(intMember(metricNCalls, nCalls))},
	)
}

func intMember(key string, n int) ojson.Member {
	return ojson.Member{Key: key, Value: ojson.Int(int64(n))}
}

// Deleter removes a rollout's whole token capture (entries, marks, intents and state) so that its
// id starts afresh: the file store's delete (TOKENS.md §2.6). The error names the rollout; an id
// the store refuses is an error too.
type Deleter interface {
	Delete(rolloutID string) error
}

// ClearTokenCaptures is the reference's clear_token_captures_for_rollouts (TOKENS.md §3.6, §1.7
// step 4), run before rows are dispatched: for each store, the capture of every row's rollout id
// (Gym's maybe_rollout_id_from_run_body, [rollout.IDFromRunBody]; rows without an identity are
// skipped) is deleted. The first error stops it and is returned: a malformed id in a row (a
// ValueError, [ExceptionText]; its text is rollout's, "_ng_rollout_id must be ...") or an error of Delete (such as a derived
// id the store refuses, "Invalid rollout id: 'a/b-0'"). With no stores it does nothing, whatever
// the rows.
func ClearTokenCaptures(rows []ojson.Value, stores ...Deleter) error {
	if len(stores) == 0 {
		return nil
	}
	for _, s := range stores {
		for _, row := range rows {
			id, ok, err := rolloutIDOf(row)
			if err != nil {
				return err
			}
			if !ok || id == "" {
				continue
			}
			if err := s.Delete(id); err != nil {
				return err
			}
		}
	}
	return nil
}

// runBodyKeys are the members of a run body or rollout line that name its rollout (SPEC §1.2).
var runBodyKeys = []string{rollout.IDKey, rollout.TaskIndexKey, rollout.IndexKey, rollout.AttemptIndexKey}

// rolloutIDOf is Gym's maybe_rollout_id_from_run_body over a rollout line ([rollout.IDFromRunBody]):
// only the identity members are re-encoded for it, so a large line is not written again. ok is
// false for a line without an identity, including one that is not a JSON object. The error, a
// ValueError as in the reference, wraps rollout's (errors.Is(err, rollout.ErrInvalidID) holds for
// a malformed _ng_rollout_id).
func rolloutIDOf(line ojson.Value) (id string, ok bool, err error) {
	if line.Kind() != ojson.KindObject {
		return "", false, nil
	}
	var ident []ojson.Member
	for _, k := range runBodyKeys {
		if v, ok := line.Get(k); ok {
			ident = append(ident, ojson.Member{Key: k, Value: v})
		}
	}
	id, ok, err = rollout.IDFromRunBody(ojson.Object(ident...).AppendJSON(nil))
	if err != nil {
		return "", false, &classedError{class: "ValueError", err: err}
	}
	return id, ok, nil
}
