package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReportShowsMaskedTokenCaptures: report (text and --html) lists a rollout whose token capture
// is masked, with its cause, before and after attach finalized it, and never freezes a capture.
func TestReportShowsMaskedTokenCaptures(t *testing.T) {
	run := newTokenRun(t)
	html := filepath.Join(t.TempDir(), "report.html")
	r := runGymtrace(t, "report", "--capture-dir", run.dir, "--html", html)
	require.NoError(t, r.err, r.stderr)
	assert.Contains(t, r.stdout, "rollout 1-0: its token capture would be masked (mask_sample) when finalized: capture incomplete")
	squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
	assert.Contains(t, squash(r.stdout), squash("(see `gymtrace tokens --capture-dir "+run.dir+" 1-0`)"), "the real directory, no placeholder")
	assert.NotContains(t, r.stdout, "rollout 0-0: its token capture")
	assert.False(t, inspect(t, run.store, "1-0").Frozen, "report never freezes")
	page, err := os.ReadFile(html)
	require.NoError(t, err)
	assert.Contains(t, string(page), `data-kind="tokens_masked" data-rollout-id="1-0"`)

	output := filepath.Join(t.TempDir(), "out.jsonl")
	r = runGymtrace(t, "attach", "--capture-dir", run.dir, "--input", run.input, "--output", output)
	require.NoError(t, r.err, r.stderr)
	r = runGymtrace(t, "report", "--capture-dir", run.dir, "--rollouts", output)
	require.NoError(t, r.err, r.stderr)
	assert.Contains(t, r.stdout, "rollout 1-0: its token capture is masked (mask_sample): capture incomplete")
	assert.NotContains(t, r.stdout, "rollout 0-0: its token capture", "a retired capture is not masked")

	r = runGymtrace(t, "report", "--capture-dir", run.dir, "--token-dir", t.TempDir())
	require.NoError(t, r.err, r.stderr)
	assert.NotContains(t, r.stdout, "token capture", "an empty token directory holds no token capture")
}
