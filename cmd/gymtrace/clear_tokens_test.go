package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/tokens"
)

// TestClearTokenCaptures: clear removes the token captures of the rows' rollouts with their
// model-call captures — a retired tombstone too, so the id starts afresh — touches no other
// rollout and creates nothing for a rollout without one; a malformed row removes nothing.
func TestClearTokenCaptures(t *testing.T) {
	for _, tt := range []struct {
		name    string
		split   bool // the token store is another directory (--token-dir)
		badRow  bool
		cleared []string
	}{
		{"capture dir", false, false, []string{"0-0", "1-0"}},
		{"token dir", true, false, []string{"0-0", "1-0"}},
		{"malformed row", false, true, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run := newTokenRun(t)
			args := []string{"clear", "--capture-dir", run.dir}
			store := run.store
			if tt.split {
				dir := filepath.Join(t.TempDir(), "tokens")
				var err error
				store, err = tokens.OpenStore(dir)
				require.NoError(t, err)
				require.NoError(t, store.Append(tokens.TokenEntry{SchemaVersion: tokens.SchemaVersion, RolloutID: "1-0", ModelCallID: "c",
					PromptTokenIDs: []int64{1}, GenerationTokenIDs: []int64{2}, GenerationLogProbs: []float64{-1}}))
				require.NoError(t, store.BeginCall("0-0", "c"))
				args = append(args, "--token-dir", dir)
			}
			snap, err := store.Freeze("0-0")
			require.NoError(t, err)
			dropped, err := store.Drop("0-0", snap.SnapshotID, snap.Version)
			require.NoError(t, err)
			require.True(t, dropped)
			require.NoError(t, store.Append(tokens.TokenEntry{SchemaVersion: tokens.SchemaVersion, RolloutID: "9-0", ModelCallID: "c",
				PromptTokenIDs: []int64{1}, GenerationTokenIDs: []int64{2}, GenerationLogProbs: []float64{-1}}))
			input := run.input
			if tt.badRow {
				b, err := os.ReadFile(input)
				require.NoError(t, err)
				input = filepath.Join(t.TempDir(), "bad.jsonl")
				require.NoError(t, os.WriteFile(input, append(b, []byte(`{"_ng_rollout_id":"a b"}`+"\n")...), 0o600))
			}

			r := runGymtrace(t, append(args, "--input", input)...)
			if tt.badRow {
				require.Error(t, r.err)
			} else {
				require.NoError(t, r.err, r.stderr)
				assert.Contains(t, r.stderr, "; cleared the token captures of 2 rollouts")
			}
			for _, id := range []string{"0-0", "1-0"} {
				has, err := store.HasCapture(id)
				require.NoError(t, err)
				assert.Equal(t, tt.cleared == nil, has, id)
			}
			has, err := store.HasCapture("9-0")
			require.NoError(t, err)
			assert.True(t, has, "a rollout the rows do not name keeps its capture")
			_, err = os.Stat(filepath.Join(store.Dir(), "2-0"+tokens.LockFileSuffix))
			assert.ErrorIs(t, err, os.ErrNotExist, "nothing is created for a rollout without a token capture")
			if tt.cleared != nil {
				require.NoError(t, store.BeginCall("0-0", "again"), "a cleared tombstone's id starts afresh")
			}
		})
	}
	r := runGymtrace(t, "clear", "--capture-dir", t.TempDir(), "--input", newTokenRun(t).input, "--token-dir", filepath.Join(t.TempDir(), "none"))
	require.NoError(t, r.err, r.stderr)
}
