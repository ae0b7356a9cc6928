package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateCLIGolden = flag.Bool("update-cli-golden", false, "rewrite the calls/metrics golden files under testdata/readcmds/")

// TestReadCommandsGolden compares calls/metrics stdout and stderr (the fixture directory replaced by
// DIR) with golden files byte for byte; -update-cli-golden rewrites them after a reviewed change.
func TestReadCommandsGolden(t *testing.T) {
	dir := readFixtureDir(t)
	tests := []struct {
		name string
		args []string
	}{
		{name: "calls_rollout-7", args: []string{"calls", "--capture-dir", dir, "rollout-7"}},
		{name: "calls_rollout-7_payloads", args: []string{"calls", "--payloads", "--capture-dir", dir, "rollout-7"}},
		{name: "metrics_rollout-7", args: []string{"metrics", "--capture-dir=" + dir, "rollout-7"}},
		{name: "calls_empty-1", args: []string{"calls", "--capture-dir", dir, "empty-1"}},
		{name: "metrics_empty-1", args: []string{"metrics", "--capture-dir", dir, "empty-1"}},
		{name: "calls_missing", args: []string{"calls", "--capture-dir", dir, "no-such-rollout"}},
		{name: "metrics_missing", args: []string{"metrics", "--capture-dir", dir, "no-such-rollout"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runGymtrace(t, tt.args...)
			require.NoError(t, r.err)
			assert.Equal(t, 0, r.code)
			stderr := strings.ReplaceAll(r.stderr, dir, "DIR")
			for _, g := range []struct{ ext, got string }{{".stdout", r.stdout}, {".stderr", stderr}} {
				path := filepath.Join("testdata", "readcmds", tt.name+g.ext)
				if *updateCLIGolden {
					require.NoError(t, os.WriteFile(path, []byte(g.got), 0o644))
				}
				want, err := os.ReadFile(path)
				require.NoError(t, err, "run go test -run ReadCommandsGolden -update-cli-golden to create it")
				assert.Equal(t, string(want), g.got, path)
			}
		})
	}
}

func TestCallsOutputShape(t *testing.T) {
	dir := readFixtureDir(t)
	for _, payloads := range []bool{false, true} {
		args := []string{"calls", "--capture-dir", dir, "rollout-7"}
		if payloads {
			args = append(args, "--payloads")
		}
		r := runGymtrace(t, args...)
		require.NoError(t, r.err)
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		require.Len(t, lines, 3, "damaged and blank lines skipped")
		for i, want := range []string{`"call_index":0`, `"call_index":2`, `"call_index":3`} {
			assert.Contains(t, lines[i], want)
			assert.True(t, strings.HasPrefix(lines[i], `{"model_call_id":`))
			assert.Equal(t, payloads, strings.Contains(lines[i], `"request":`))
			assert.Equal(t, payloads, strings.Contains(lines[i], `"request_raw":`))
		}
		assert.Contains(t, r.stderr, "skipped 1 damaged line")
		assert.Contains(t, r.stderr, "marked incomplete")
	}
}

func TestMetricsMatchesCalls(t *testing.T) {
	r := runGymtrace(t, "metrics", "--capture-dir", readFixtureDir(t), "rollout-7")
	require.NoError(t, r.err)
	assert.Equal(t, `{"tokens_in":29,"tokens_out":10,"tokens_reasoning":0,"tokens_total":39,"cached_tokens":0,"latency_total_ms":2592.7,"num_calls":3}`+"\n", r.stdout)
}

func TestReadCommandsNeverCreateTheDirectory(t *testing.T) {
	for _, cmd := range []string{"calls", "metrics"} {
		t.Run(cmd, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "not", "there")
			r := runGymtrace(t, cmd, "--capture-dir", dir, "0-0")
			require.NoError(t, r.err)
			assert.Contains(t, r.stderr, "capture directory "+dir+" does not exist")
			if cmd == "metrics" {
				assert.Equal(t, `{"tokens_in":null,"tokens_out":null,"tokens_reasoning":null,"tokens_total":null,"cached_tokens":null,"latency_total_ms":null,"num_calls":0}`+"\n", r.stdout)
			} else {
				assert.Empty(t, r.stdout)
			}
			_, err := os.Stat(filepath.Dir(dir))
			assert.True(t, os.IsNotExist(err), "directory created")
		})
	}
}

func TestReadCommandsUsageErrors(t *testing.T) {
	dir := readFixtureDir(t)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "no capture dir", args: []string{"0-0"}, want: []string{"--capture-dir is required"}},
		{name: "relative capture dir", args: []string{"--capture-dir", "captures", "0-0"}, want: []string{`--capture-dir "captures" must be an absolute path`}},
		{name: "no rollout id", args: []string{"--capture-dir", dir}, want: []string{"exactly one ROLLOUT_ID", "got 0"}},
		{name: "two rollout ids", args: []string{"--capture-dir", dir, "a", "b"}, want: []string{"exactly one ROLLOUT_ID", "got 2"}},
		{name: "slash in id", args: []string{"--capture-dir", dir, "a/b"}, want: []string{`"a/b"`, "^[A-Za-z0-9][A-Za-z0-9._-]*$"}},
		{name: "leading dot", args: []string{"--capture-dir", dir, ".hidden"}, want: []string{`".hidden"`, "must match"}},
		{name: "path traversal", args: []string{"--capture-dir", dir, "../x"}, want: []string{`"../x"`}},
		{name: "trailing newline", args: []string{"--capture-dir", dir, "0-0\n"}, want: []string{`"0-0\n"`}},
		{name: "too long", args: []string{"--capture-dir", dir, strings.Repeat("a", 201)}, want: []string{"longer than 200 bytes"}},
		{name: "unknown flag", args: []string{"--capture-dir", dir, "--bogus", "0-0"}, want: []string{"bogus"}},
		// An empty run id would read the top-level directory as if no --run-id were given.
		{name: "empty run id", args: []string{"--capture-dir", dir, "--run-id", "", "0-0"}, want: []string{`invalid argument "" for "--run-id"`, "leave --run-id out"}},
	}
	for _, cmd := range []string{"calls", "metrics"} {
		for _, tt := range tests {
			t.Run(cmd+"/"+tt.name, func(t *testing.T) {
				r := runGymtrace(t, append([]string{cmd}, tt.args...)...)
				require.Error(t, r.err)
				assert.Equal(t, 2, r.code, r.err.Error())
				for _, w := range tt.want {
					assert.Contains(t, r.err.Error(), w)
				}
				assert.Empty(t, r.stdout)
			})
		}
	}
	r := runGymtrace(t, "calls", "--capture-dir", dir, strings.Repeat("a", 200))
	require.NoError(t, r.err, "200 bytes is allowed")
}

func TestReadCommandsFailures(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	r := runGymtrace(t, "calls", "--capture-dir", file, "0-0")
	require.Error(t, r.err)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.err.Error(), "is not a directory")

	// The token directory defaults to the capture directory: a file there is named by the flag the
	// user gave (from a new-user trial: it said --token-dir, which nobody had passed).
	for _, args := range [][]string{
		{"report", "--capture-dir", file},
		{"tokens", "--capture-dir", file, "0-0"},
	} {
		r := runGymtrace(t, args...)
		require.Error(t, r.err, args)
		assert.Contains(t, r.err.Error(), "--capture-dir "+file+": not a directory", args)
		assert.NotContains(t, r.err.Error(), "--token-dir", args)
	}
	r = runGymtrace(t, "tokens", "--capture-dir", t.TempDir(), "--token-dir", file, "0-0")
	require.Error(t, r.err)
	assert.Contains(t, r.err.Error(), "--token-dir "+file+": not a directory")

	// A --token-dir that does not exist is refused by every command that reads token captures (a
	// new-user trial's typo finalized no token capture, with exit 0); a missing --run-id
	// subdirectory of an existing one is a run that captured no tokens.
	missing := filepath.Join(t.TempDir(), "tokdir-missing")
	in := filepath.Join(t.TempDir(), "rows.jsonl")
	require.NoError(t, os.WriteFile(in, []byte(`{"_ng_task_index":0,"_ng_rollout_index":0}`+"\n"), 0o600))
	capDir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(capDir, "run1"), 0o700))
	for _, args := range [][]string{
		{"attach", "--capture-dir", capDir, "--input", in, "--output", filepath.Join(t.TempDir(), "out.jsonl")},
		{"report", "--capture-dir", capDir},
		{"tokens", "--capture-dir", capDir, "0-0"},
	} {
		r := runGymtrace(t, append(args, "--token-dir", missing)...)
		require.Error(t, r.err, args)
		assert.Equal(t, 1, r.code, args)
		assert.Contains(t, r.err.Error(), "--token-dir "+missing+": directory does not exist", args)
		r = runGymtrace(t, append(args, "--token-dir", t.TempDir(), "--run-id", "run1")...)
		require.NoError(t, r.err, args)
	}
	// clear, for which a missing directory has nothing to clear, says so instead.
	r = runGymtrace(t, "clear", "--capture-dir", capDir, "--input", in, "--token-dir", missing)
	require.NoError(t, r.err)
	assert.Contains(t, r.stderr, "token directory "+missing+" does not exist: no token capture to clear")

	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "0-0.capture.jsonl"), 0o700)) // unreadable as a file
	r = runGymtrace(t, "metrics", "--capture-dir", dir, "0-0")
	require.Error(t, r.err)
	assert.Equal(t, 1, r.code)
	assert.Empty(t, r.stdout)

	// A capture file that is a dangling symbolic link or a loop is refused by name, not read as a
	// missing file (from a fresh-user trial).
	require.NoError(t, os.Symlink("/nonexistent", filepath.Join(dir, "dang.capture.jsonl")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "loop.capture.jsonl"), filepath.Join(dir, "loop.capture.jsonl")))
	for _, id := range []string{"dang", "loop"} {
		for _, cmd := range []string{"calls", "metrics"} {
			r = runGymtrace(t, cmd, "--capture-dir", dir, id)
			require.Error(t, r.err, cmd+" "+id)
			assert.Equal(t, 1, r.code)
			assert.Contains(t, r.err.Error(), "(a symbolic link): capture files and markers must be regular files with one link and symbolic links are never followed")
		}
	}
}
