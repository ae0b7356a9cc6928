package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunIDHint: captures made with `proxy --run-id RUN` live in DIR/RUN/; calls, report, attach and
// clear on DIR itself say which --run-id to pass instead of only "no capture file".
func TestRunIDHint(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "runA"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "runA", "r1.capture.jsonl"),
		[]byte(`{"model_call_id":"c1","dialect":"chat","request":{},"response":{}}`+"\n"), 0o600))

	calls := runGymtrace(t, "calls", "--capture-dir", dir, "r1")
	require.Equal(t, 0, calls.code, calls.stderr)
	assert.Contains(t, calls.stderr, "pass --run-id runA")
	other := runGymtrace(t, "calls", "--capture-dir", dir, "r2")
	assert.NotContains(t, other.stderr, "hint:", "no run directory holds r2")

	rep := runGymtrace(t, "report", "--capture-dir", dir)
	require.Equal(t, 0, rep.code, rep.stderr)
	assert.Contains(t, rep.stderr, "pass --run-id runA")
	withRun := runGymtrace(t, "report", "--capture-dir", dir, "--run-id", "runA")
	assert.NotContains(t, withRun.stderr, "hint:")

	// attach and clear name the run too when a row's rollout has nothing in DIR itself (a clear
	// that removes nothing would let the next run append to the old captures).
	input := filepath.Join(t.TempDir(), "rows.jsonl")
	require.NoError(t, os.WriteFile(input, []byte(`{"_ng_rollout_id":"r1"}`+"\n"), 0o600))
	att := runGymtrace(t, "attach", "--capture-dir", dir, "--input", input, "--output", filepath.Join(t.TempDir(), "out.jsonl"), "--no-trajectory")
	require.Equal(t, 0, att.code, att.stderr)
	assert.Contains(t, att.stderr, "pass --run-id runA")
	attRun := runGymtrace(t, "attach", "--capture-dir", dir, "--run-id", "runA", "--input", input, "--output", filepath.Join(t.TempDir(), "out.jsonl"), "--no-trajectory")
	require.Equal(t, 0, attRun.code, attRun.stderr)
	assert.NotContains(t, attRun.stderr, "hint:")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other.capture.jsonl"), nil, 0o600)) // DIR exists with captures
	clr := runGymtrace(t, "clear", "--capture-dir", dir, "--input", input)
	require.Equal(t, 0, clr.code, clr.stderr)
	assert.Contains(t, clr.stderr, "1 rollout had nothing to remove")
	assert.Contains(t, clr.stderr, "pass --run-id runA")
	assert.FileExists(t, filepath.Join(dir, "runA", "r1.capture.jsonl"), "clear without --run-id leaves the run's captures")

	dash := runGymtrace(t, "attach", "--capture-dir", dir, "--input", "-", "--output", "-")
	assert.Equal(t, 2, dash.code)
	assert.ErrorContains(t, dash.err, `"-" (standard input or output) is not supported`)
}
