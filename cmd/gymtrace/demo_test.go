package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDemoCmdUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"zero rollouts", []string{"--rollouts", "0"}, "--rollouts 0 must be between 1 and 1000"},
		{"negative rollouts", []string{"--rollouts", "-2"}, "--rollouts -2 must be between 1 and 1000"},
		{"too many rollouts", []string{"--rollouts", "1001"}, "--rollouts 1001 must be between 1 and 1000"},
		{"rollouts not a number", []string{"--rollouts", "three"}, `invalid argument "three"`},
		{"positional argument", []string{"extra"}, `unexpected argument "extra"`},
		{"unknown flag", []string{"--capture-dir", "/tmp"}, "unknown flag: --capture-dir"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			res := runGymtrace(t, append([]string{"demo", "--dir", filepath.Join(dir, "out")}, tc.args...)...)
			require.Error(t, res.err)
			assert.Equal(t, 2, res.code, "usage error")
			assert.Contains(t, res.err.Error(), tc.want)
			assert.NoDirExists(t, filepath.Join(dir, "out"), "nothing ran")
		})
	}
}

func TestDemoCmdRelativeDir(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	res := runGymtrace(t, "demo", "--dir", "demo-out", "--rollouts", "1")
	require.NoError(t, res.err, "stderr: %s", res.stderr)
	assert.Equal(t, 0, res.code)

	abs := filepath.Join(cwd, "demo-out")
	assert.Contains(t, res.stderr, `gymtrace demo: --dir "demo-out" is relative; using `+abs)
	captureDir := filepath.Join(abs, "captures")
	assert.FileExists(t, filepath.Join(captureDir, "0-0.capture.jsonl"))
	assert.FileExists(t, filepath.Join(abs, "rollouts.jsonl"))
	assert.FileExists(t, filepath.Join(abs, "rollouts.attached.jsonl"))
	assert.Contains(t, res.stdout, "gymtrace calls --capture-dir "+captureDir+" 0-0")

	// The hint works: `gymtrace calls` prints one record per call of the rollout.
	calls := runGymtrace(t, "calls", "--capture-dir", captureDir, "0-0")
	require.NoError(t, calls.err, calls.stderr)
	assert.Equal(t, 3, strings.Count(calls.stdout, "\n"), calls.stdout)
	assert.Contains(t, calls.stdout, `"dialect":"responses"`)
}

func TestDemoCmdDefaults(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	res := runGymtrace(t, "demo")
	require.NoError(t, res.err, "stderr: %s", res.stderr)
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Len(t, entries, 1, "one new demo directory under the temp dir")
	dir := filepath.Join(tmp, entries[0].Name())
	assert.True(t, strings.HasPrefix(entries[0].Name(), "gymtrace-demo-"), dir)
	assert.Contains(t, res.stdout, dir, "the kept directory is printed")
	for _, id := range []string{"0-0", "0-1", "1-0"} {
		assert.FileExists(t, filepath.Join(dir, "captures", id+".capture.jsonl"), "3 rollouts by default")
	}
	assert.Contains(t, res.stdout, "3 rollout(s), 9 model call(s)")

	// The demo's files are the redesign's baseline (issue #13 step 0).
	files := readGoldenFiles(t, dir, "rollouts")
	for _, f := range readGoldenFiles(t, filepath.Join(dir, "captures"), "") {
		files = append(files, goldenFile{"captures/" + f.name, f.content})
	}
	require.Len(t, files, 8, "rollouts, attached rollouts, and a capture and observations file per rollout")
	checkGolden(t, "demo", files)

	// The training run's files: its rollouts, the finalized lines, capture records and token
	// captures (the trainable rollout retired to its tombstone state, the masked one kept).
	training := filepath.Join(dir, "training")
	files = readGoldenFiles(t, training, "rollouts")
	for _, f := range readGoldenFiles(t, filepath.Join(training, "captures"), "") {
		if strings.HasSuffix(f.name, ".tokens.intents") {
			f.content = quoteLines(f.content) // model_call_id lines, compared as the ids they are
		}
		files = append(files, goldenFile{"training/captures/" + f.name, f.content})
	}
	require.Len(t, files, 10, "rollouts, attached rollouts, 2 capture files, the retired rollout's lock and state, the masked one's four token files")
	checkGolden(t, "demo-training", files)
	assert.Contains(t, res.stdout, "rollout 0-1 masked (mask_sample: true): 2 roots and 2 chains")
}

// quoteLines writes each line of b (an intents file: one model_call_id per line) as a JSON string,
// so the golden replaces the ids as it does in JSON lines.
func quoteLines(b []byte) []byte {
	var out []byte
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l == "" {
			continue
		}
		text, nl := strings.CutSuffix(l, "\n")
		out = strconv.AppendQuote(out, text)
		if nl {
			out = append(out, '\n')
		}
	}
	return out
}
