package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/tokens"
)

// agreeEntry is one complete token entry line of rollout rid, call cid, generating token gen.
func agreeEntry(t *testing.T, rid, cid string, gen int64) string {
	t.Helper()
	e := tokens.TokenEntry{SchemaVersion: tokens.SchemaVersion, RolloutID: rid, ModelCallID: cid,
		PromptTokenIDs: []int64{1, 2, 3}, GenerationTokenIDs: []int64{gen}, GenerationLogProbs: []float64{-0.1}}
	b, err := e.Line()
	require.NoError(t, err)
	return string(b)
}

// TestTokensAndReportPredictAttach: `gymtrace tokens` and report's tokens_masked finding say what
// `gymtrace attach` then does ("what gymtrace attach would make of it now"), on captures whose
// freeze runs the index recovery (docs/TOKENS.md §2.7): a complete entry and a torn "{garbage"
// final line (cut: trainable), a state whose indexed_size is past the file's end (masked: Invalid
// token-capture index offset), two lines with one call id and different payloads (masked:
// conflicting durable payloads). The read-only commands change no file.
func TestTokensAndReportPredictAttach(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
	}
	write("A"+tokens.EntriesFileSuffix, agreeEntry(t, "A", "c0", 4)+"{garbage\n")
	write("B"+tokens.EntriesFileSuffix, agreeEntry(t, "B", "c0", 4))
	write("B"+tokens.StateFileSuffix, `{"entry_digests":{},"frozen":false,"incomplete":false,"indexed_size":999999,"retired":false,"snapshot_id":"","version":1}`+"\n")
	write("C"+tokens.EntriesFileSuffix, agreeEntry(t, "C", "c0", 4)+agreeEntry(t, "C", "c0", 5))
	input := filepath.Join(t.TempDir(), "in.jsonl")
	require.NoError(t, os.WriteFile(input, []byte(`{"_ng_rollout_id":"A"}`+"\n"+`{"_ng_rollout_id":"B"}`+"\n"+`{"_ng_rollout_id":"C"}`+"\n"), 0o600))
	want := map[string]struct {
		masked bool
		cause  string
	}{
		"A": {false, ""},
		"B": {true, "ValueError: Invalid token-capture index offset for rollout B"},
		"C": {true, "ValueError: Model call id 'c0' has conflicting durable payloads for rollout 'C'"},
	}
	before := dirContents(t, dir)

	for id, w := range want {
		r := runGymtrace(t, "tokens", "--capture-dir", dir, "--json", id)
		require.NoError(t, r.err, r.stderr)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), r.stdout)
		assert.Equal(t, w.masked, got["masked"], "tokens %s", id)
		if w.masked {
			assert.Equal(t, w.cause, got["cause"], "tokens %s", id)
			assert.Equal(t, w.cause, got["index_error"], "tokens %s", id)
		} else {
			assert.Nil(t, got["cause"], "tokens %s", id)
		}
	}
	assert.Equal(t, float64(len("{garbage\n")), tokensJSON(t, dir, "A")["torn_tail_bytes"], "the torn tail is reported")

	r := runGymtrace(t, "report", "--capture-dir", dir, "--rollouts", input)
	require.NoError(t, r.err, r.stderr)
	text := strings.Join(strings.Fields(r.stdout), " ")
	assert.NotContains(t, text, "rollout A: its token capture", "report: A is trainable")
	assert.Contains(t, text, "rollout B: its token capture would be masked (mask_sample) when finalized: "+want["B"].cause)
	assert.Contains(t, text, "rollout C: its token capture would be masked (mask_sample) when finalized: "+want["C"].cause)
	assert.Equal(t, before, dirContents(t, dir), "tokens and report change no file (but the lock files they create)")

	output := filepath.Join(t.TempDir(), "out.jsonl")
	r = runGymtrace(t, "attach", "--capture-dir", dir, "--input", input, "--output", output, "--no-trajectory")
	require.NoError(t, r.err, r.stderr)
	for _, row := range outputRows(t, output) {
		id := row["_ng_rollout_id"].(string)
		w := want[id]
		mask, _ := row[tokens.MaskSampleKey].(bool)
		assert.Equal(t, w.masked, mask, "attach %s", id)
		capture := row[tokens.TokenCaptureKey].(map[string]any)
		if w.masked {
			assert.Equal(t, w.cause, capture["error"], "attach %s", id)
		} else {
			assert.NotContains(t, capture, "error", "attach %s", id)
		}
	}
}

// tokensJSON runs `gymtrace tokens --json` on rollout id of dir and decodes its object.
func tokensJSON(t *testing.T, dir, id string) map[string]any {
	t.Helper()
	r := runGymtrace(t, "tokens", "--capture-dir", dir, "--json", id)
	require.NoError(t, r.err, r.stderr)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), r.stdout)
	return got
}

// dirContents returns dir's files but the token lock files (which every reader creates) with
// their content.
func dirContents(t *testing.T, dir string) map[string]string {
	t.Helper()
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string]string{}
	for _, de := range des {
		if strings.HasSuffix(de.Name(), tokens.LockFileSuffix) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, de.Name()))
		require.NoError(t, err)
		out[de.Name()] = string(b)
	}
	return out
}

// TestTokenReadersRefuseLinks: with t8.tokens.jsonl a symbolic link to /etc/passwd (or a FIFO),
// `gymtrace tokens` and attach's finalization never read the target: tokens shows the entries
// unreadable and masked, naming the path and the rule; attach masks the rollout with the same
// error; report says the same. A symlinked state file makes tokens fail naming the path.
func TestTokenReadersRefuseLinks(t *testing.T) {
	const rule = "not a regular file (a symbolic link): token capture files must be regular files with one link and symbolic links are never followed"
	dir := t.TempDir()
	entries := filepath.Join(dir, "t8"+tokens.EntriesFileSuffix)
	require.NoError(t, os.Symlink("/etc/passwd", entries))

	got := tokensJSON(t, dir, "t8")
	assert.Equal(t, true, got["masked"])
	wantErr := "OSError: open " + entries + ": " + rule
	assert.Equal(t, wantErr, got["entries_error"])
	assert.Equal(t, wantErr, got["cause"])
	assert.NotContains(t, got, "root:")
	b, _ := json.Marshal(got)
	assert.NotContains(t, string(b), "root:", "the target is never read")

	input := filepath.Join(t.TempDir(), "in.jsonl")
	require.NoError(t, os.WriteFile(input, []byte(`{"_ng_rollout_id":"t8"}`+"\n"), 0o600))
	r := runGymtrace(t, "report", "--capture-dir", dir, "--rollouts", input)
	require.NoError(t, r.err, r.stderr)
	assert.Contains(t, strings.Join(strings.Fields(r.stdout), ""), strings.Join(strings.Fields("rollout t8: its token capture would be masked (mask_sample) when finalized: "+wantErr), ""))

	output := filepath.Join(t.TempDir(), "out.jsonl")
	r = runGymtrace(t, "attach", "--capture-dir", dir, "--input", input, "--output", output, "--no-trajectory")
	require.NoError(t, r.err, r.stderr)
	rows := outputRows(t, output)
	require.Len(t, rows, 1)
	assert.Equal(t, true, rows[0][tokens.MaskSampleKey])
	assert.Equal(t, wantErr, rows[0][tokens.TokenCaptureKey].(map[string]any)["error"])
	out, err := os.ReadFile(output)
	require.NoError(t, err)
	assert.NotContains(t, string(out), "root:", "the target is never read")
	fi, err := os.Lstat(entries)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the link is left as it is")

	state := filepath.Join(dir, "t9"+tokens.StateFileSuffix)
	require.NoError(t, os.Symlink("/etc/passwd", state))
	r = runGymtrace(t, "tokens", "--capture-dir", dir, "--json", "t9")
	require.Error(t, r.err)
	assert.Equal(t, 1, r.code)
	assert.ErrorContains(t, r.err, "tokens: rollout t9: open "+state+": "+rule)
	assert.NotContains(t, r.stdout+r.stderr, "root:")
}
