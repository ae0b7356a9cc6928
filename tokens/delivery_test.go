package tokens

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/ojson"
)

// TestRolloutCarriesTokenIDsVectors runs the RC group (TOKENS.md §3.7).
func TestRolloutCarriesTokenIDsVectors(t *testing.T) {
	cases := tokenCases(t, "RC")
	require.Len(t, cases, 8)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			want, ok := c.Expected.AsBool()
			require.True(t, ok)
			assert.Equal(t, want, RolloutCarriesTokenIDs(c.Input))
		})
	}
}

// TestRetireVectors runs the RT group (TOKENS.md §3.7).
func TestRetireVectors(t *testing.T) {
	cases := tokenCases(t, "RT")
	require.Len(t, cases, 6)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			built := get(t, c.Input, "built")
			if returned, ok := c.Expected.Get("returned"); ok { // retire_rollout_token_capture
				retired, warning := RetireRollout("0-0", vectorStore(t), built)
				assertJSON(t, returned, ojson.Bool(retired))
				assertJSON(t, get(t, c.Expected, "warnings"), warnings(warning))
				return
			}
			want, ok := c.Expected.AsBool()
			require.True(t, ok)
			assert.Equal(t, want, CaptureBuildCanRetire(built))
		})
	}
}

// warnings is a warning as the vectors list them.
func warnings(w string) ojson.Value {
	if w == "" {
		return ojson.Array()
	}
	return ojson.Array(ojson.String(w))
}

// unreachableSource is DL-09's source (the reference test's _Src): every freeze fails.
var unreachableSource = snapshotSource{err: pyErr("ConnectionError", "data plane unreachable", nil)}

// TestFinalizeVectors runs the DL group (TOKENS.md §3.7): finalize the case's record against a
// store holding its entries and marks, then check retirement and what the store keeps.
func TestFinalizeVectors(t *testing.T) {
	cases := tokenCases(t, "DL")
	require.Len(t, cases, 13)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			in, want := c.Input, c.Expected
			if _, ok := in.Get("steps"); ok {
				finalizeClearReuse(t, want)
				return
			}
			store := storeWith(t, "0-0", get(t, in, "stored_entries"), get(t, in, "incomplete_marks"))
			var src Source
			switch kind, _ := get(t, in, "source").AsString(); kind {
			case "store":
				src = store
			case "_Src":
				src = unreachableSource
			case "NoneType":
			default:
				t.Fatalf("source %q", kind)
			}
			record := get(t, in, "record").Clone()
			built, warning := FinalizeRollout(&record, src)
			assertJSON(t, get(t, want, "returned"), built, "returned")
			assertJSON(t, get(t, want, "record_after"), record, "record_after")
			assertJSON(t, get(t, want, "warnings"), warnings(warning), "warnings")
			if can, ok := want.Get("capture_build_can_retire"); ok {
				assertJSON(t, can, ojson.Bool(CaptureBuildCanRetire(built)))
			}
			if ret, ok := want.Get("retire"); ok {
				retired, warning := RetireRollout("0-0", src, built)
				assertJSON(t, ret, ojson.Bool(retired), "retire")
				assert.Empty(t, warning)
				checkFiles(t, store, get(t, want, "files_after_retire"))
			}
		})
	}
}

// finalizeClearReuse is DL-13 (the reference's test): a rollout is finalized, its id cleared and
// reused by a new attempt before the old build is retired; the stale retire must not drop the
// new attempt's capture.
func finalizeClearReuse(t *testing.T, want ojson.Value) {
	s := vectorStore(t)
	entry := func(id string) TokenEntry {
		return TokenEntry{SchemaVersion: 1, RolloutID: "0-0", ModelCallID: id, PromptTokenIDs: []int64{1, 2}, GenerationTokenIDs: []int64{3}, GenerationLogProbs: []float64{-0.5}}
	}
	require.NoError(t, s.Append(entry("old")))
	record := testvectors.Value(t, []byte(`{"_ng_task_index":0,"_ng_rollout_index":0,"response":{"model":"m","output":[]}}`))
	built, _ := FinalizeRollout(&record, s)
	require.True(t, CaptureBuildCanRetire(built))
	require.NoError(t, ClearTokenCaptures([]ojson.Value{record}, s))
	require.NoError(t, s.Append(entry("new")))
	retired, warning := RetireRollout("0-0", s, built)
	assertJSON(t, get(t, want, "retire"), ojson.Bool(retired))
	assert.Empty(t, warning)
	var ids []ojson.Value
	for _, id := range callIDs(t, s, "0-0") {
		ids = append(ids, ojson.String(id))
	}
	assertJSON(t, get(t, want, "remaining_ids"), ojson.Array(ids...))
}

func TestFinalizeEdgeCases(t *testing.T) {
	entry := TokenEntry{SchemaVersion: 1, RolloutID: "0-0", ModelCallID: "c1", PromptTokenIDs: []int64{1}, GenerationTokenIDs: []int64{2}, GenerationLogProbs: []float64{-0.5}}
	t.Run("not an object", func(t *testing.T) {
		record := ojson.Array()
		built, warning := FinalizeRollout(&record, vectorStore(t))
		assert.True(t, built.IsNull())
		assert.Contains(t, warning, "not an object")
		assert.Equal(t, "[]", record.String())
	})
	t.Run("redundant freeze fails", func(t *testing.T) {
		record := testvectors.Value(t, []byte(`{"_ng_rollout_id":"r1","response":{"output":[{"generation_token_ids":[1]}]}}`))
		before := record.String()
		built, warning := FinalizeRollout(&record, unreachableSource)
		assert.True(t, built.IsNull())
		assert.Equal(t, "could not freeze redundant records for rollout r1.", warning)
		assert.Equal(t, before, record.String())
	})
	t.Run("existing keys keep their position", func(t *testing.T) {
		s := vectorStore(t)
		require.NoError(t, s.Append(entry))
		require.NoError(t, s.MarkIncomplete("0-0", "c2"))
		record := testvectors.Value(t, []byte(`{"_ng_token_capture":{"old":1},"_ng_task_index":0,"mask_sample":false,"_ng_rollout_index":0}`))
		_, warning := FinalizeRollout(&record, s)
		assert.Contains(t, warning, "'capture_incomplete': True")
		keys := []string{}
		for _, m := range record.Members() {
			keys = append(keys, m.Key)
		}
		assert.Equal(t, []string{"_ng_token_capture", "_ng_task_index", "mask_sample", "_ng_rollout_index", "response"}, keys)
		mask, _ := get(t, record, MaskSampleKey).AsBool()
		assert.True(t, mask)
	})
	t.Run("malformed attempt index", func(t *testing.T) {
		record := testvectors.Value(t, []byte(`{"_ng_task_index":0,"_ng_rollout_index":0,"_ng_attempt_index":"x"}`))
		built, warning := FinalizeRollout(&record, vectorStore(t))
		e, _ := get(t, built, buildError).AsString()
		assert.Contains(t, e, "malformed rollout id: ")
		assert.Contains(t, warning, "a rollout result carries a malformed id (")
	})
	t.Run("retire with a malformed identity", func(t *testing.T) {
		built := testvectors.Value(t, []byte(`{"mask_sample":false,"rebuilt_response":{},"_capture_snapshot":{"snapshot_id":"s","version":"v"}}`))
		retired, warning := RetireRollout("0-0", vectorStore(t), built)
		assert.False(t, retired)
		assert.Equal(t, "could not retire the records for rollout 0-0.", warning)
	})
	t.Run("retire after the capture changed", func(t *testing.T) {
		s := vectorStore(t)
		require.NoError(t, s.Append(entry))
		record := testvectors.Value(t, []byte(`{"_ng_task_index":0,"_ng_rollout_index":0}`))
		built, _ := FinalizeRollout(&record, s)
		require.True(t, CaptureBuildCanRetire(built))
		require.NoError(t, s.MarkIncomplete("0-0", "late")) // a straggler after the freeze bumps the version
		retired, warning := RetireRollout("0-0", s, built)
		assert.False(t, retired)
		assert.Empty(t, warning)
		assert.Equal(t, []string{"c1"}, callIDs(t, s, "0-0"))
	})
}

// checkFiles compares the store's directory with a vector's files_after_retire (file name →
// content), byte for byte.
func checkFiles(t *testing.T, s *Store, want ojson.Value) {
	t.Helper()
	wantFiles := map[string]string{}
	for _, m := range want.Members() {
		wantFiles[m.Key], _ = m.Value.AsString()
	}
	assert.Equal(t, wantFiles, files(t, s.Dir()))
}

// callIDs returns the model call ids of rollout id's entries in s, in file order.
func callIDs(t *testing.T, s *Store, id string) []string {
	t.Helper()
	entries, err := s.ReadEntries(id)
	require.NoError(t, err)
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.ModelCallID
	}
	return ids
}
