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

	"github.com/gymtrace/gymtrace/capture/capturetest"
	"github.com/gymtrace/gymtrace/internal/python"
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
// entry (masked), one with two roots (masked), a frozen one, a retired one and one whose entries
// do not read; a read never freezes.
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
		// Frozen by an earlier finalization (attach) and not retired: the last line does not
		// contradict the state line.
		{"frozen", func(t *testing.T, s *tokens.Store) {
			require.NoError(t, s.Append(entry("r", "c1", []int64{1, 2}, []int64{3})))
			_, err := s.Freeze("r")
			require.NoError(t, err)
		}, false},
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
		// The freeze's index recovery (docs/TOKENS.md §2.7), as attach's finalization applies it:
		// a torn final line is cut (trainable), an index offset past the file and a call id with
		// two payloads fail the freeze (masked with its error).
		{"torn_tail", func(t *testing.T, s *tokens.Store) {
			writeRaw(t, s, tokens.EntriesFileSuffix, entryLine(t, entry("r", "c1", []int64{1, 2}, []int64{3}))+"{garbage\n")
		}, false},
		{"index_offset", func(t *testing.T, s *tokens.Store) {
			require.NoError(t, s.Append(entry("r", "c1", []int64{1, 2}, []int64{3})))
			writeRaw(t, s, tokens.StateFileSuffix, `{"entry_digests":{},"frozen":false,"incomplete":false,"indexed_size":999999,"retired":false,"snapshot_id":"","version":1}`+"\n")
		}, true},
		{"conflicting_payloads", func(t *testing.T, s *tokens.Store) {
			writeRaw(t, s, tokens.EntriesFileSuffix, entryLine(t, entry("r", "c1", []int64{1, 2}, []int64{3}))+entryLine(t, entry("r", "c1", []int64{1, 2}, []int64{4})))
		}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tokens.OpenStore(t.TempDir())
			require.NoError(t, err)
			tt.fill(t, s)
			wasFrozen := mustInspect(t, s).Frozen
			before := capturetest.DirContents(t, s.Dir())
			v, err := Read(s, "r", tokens.BuilderPrefixMerging)
			require.NoError(t, err)
			assert.Equal(t, tt.masked, v.Masked)
			assert.Equal(t, wasFrozen, mustInspect(t, s).Frozen, "a read never freezes")
			assert.Equal(t, before, capturetest.DirContents(t, s.Dir()), "a read writes and repairs nothing")
			if !v.Retired { // what the finalization (freeze, build) then makes of it, as the read said
				built := tokens.TrajectoriesFromSource("r", s, tokens.BuilderPrefixMerging, "")
				mask, _ := built.Get(tokens.MaskSampleKey)
				assert.Equal(t, v.Masked, python.Truthy(mask), "the read predicts the finalization's mask_sample")
				wantErr, _ := built.Get("error")
				gotErr, _ := v.Build.Get("error")
				assert.Equal(t, string(wantErr.AppendJSON(nil)), string(gotErr.AppendJSON(nil)), "and its error")
			}

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

// writeRaw writes rollout r's file of suffix with content, as another writer (or a crash) left it.
func writeRaw(t *testing.T, s *tokens.Store, suffix, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), "r"+suffix), []byte(content), 0o600))
}

// entryLine is e's canonical line with its LF.
func entryLine(t *testing.T, e tokens.TokenEntry) string {
	t.Helper()
	b, err := e.Line()
	require.NoError(t, err)
	return string(b)
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
