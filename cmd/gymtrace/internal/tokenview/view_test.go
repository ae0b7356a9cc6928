package tokenview

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/tokens"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func entry(rid, cid string, prompt, gen []int64) tokens.TokenEntry {
	lp := make([]float64, len(gen))
	for i := range lp {
		lp[i] = -0.25
	}
	return tokens.TokenEntry{SchemaVersion: tokens.SchemaVersion, RolloutID: rid, ModelCallID: cid,
		PromptTokenIDs: prompt, GenerationTokenIDs: gen, GenerationLogProbs: lp, CreatedAt: 1786032154.25}
}

// TestReadGolden: the text and JSON views of a trainable capture, one with an intent without an
// entry (masked), one with two roots (masked), a retired one and one whose entries do not read;
// a read never freezes.
func TestReadGolden(t *testing.T) {
	for _, tt := range []struct {
		name   string
		fill   func(t *testing.T, s *tokens.Store)
		masked bool
	}{
		{"trainable", func(t *testing.T, s *tokens.Store) {
			require.NoError(t, s.Append(entry("r", "c1", []int64{1, 2}, []int64{3})))
			require.NoError(t, s.Append(entry("r", "c2", []int64{1, 2, 3, 4}, []int64{5, 6})))
		}, false},
		{"incomplete", func(t *testing.T, s *tokens.Store) {
			require.NoError(t, s.BeginCall("r", "c1"))
			require.NoError(t, s.Append(entry("r", "c1", []int64{1, 2}, []int64{3})))
			require.NoError(t, s.BeginCall("r", "c2"))
			require.NoError(t, s.MarkIncomplete("r", "c3"))
		}, true},
		{"two_roots", func(t *testing.T, s *tokens.Store) {
			require.NoError(t, s.Append(entry("r", "c1", []int64{1, 2}, []int64{3})))
			require.NoError(t, s.Append(entry("r", "c2", []int64{7, 8}, []int64{9})))
		}, true},
		{"retired", func(t *testing.T, s *tokens.Store) {
			require.NoError(t, s.Append(entry("r", "c1", []int64{1, 2}, []int64{3})))
			snap, err := s.Freeze("r")
			require.NoError(t, err)
			ok, err := s.Drop("r", snap.SnapshotID, snap.Version)
			require.NoError(t, err)
			require.True(t, ok)
		}, false},
		{"unreadable", func(t *testing.T, s *tokens.Store) {
			require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), "r"+tokens.EntriesFileSuffix), []byte(`{"rollout_id":"r"}`+"\n"), 0o600))
		}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tokens.OpenStore(t.TempDir())
			require.NoError(t, err)
			tt.fill(t, s)
			wasFrozen := mustInspect(t, s).Frozen
			v, err := Read(s, "r", tokens.BuilderPrefixMerging)
			require.NoError(t, err)
			assert.Equal(t, tt.masked, v.Masked)
			assert.Equal(t, wasFrozen, mustInspect(t, s).Frozen, "a read never freezes")

			var text bytes.Buffer
			require.NoError(t, WriteText(&text, &v))
			got := text.String() + "\n" + string(v.AppendJSON(nil)) + "\n"
			if v.SnapshotID != "" {
				got = strings.ReplaceAll(got, v.SnapshotID, "<snapshot_id>")
			}
			golden(t, tt.name+".golden", got)
		})
	}
}

func mustInspect(t *testing.T, s *tokens.Store) tokens.Inspection {
	t.Helper()
	in, err := s.Inspect("r")
	require.NoError(t, err)
	return in
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	assert.Equal(t, string(want), got)
}
