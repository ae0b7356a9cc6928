package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/agentobs"
)

// claudeFixture is a Claude Code config directory of the claudecode package's SPEC §8 #91 case.
func claudeFixture(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "agentobs", "claudecode", "testdata", "91_nested_tree", "claude"))
	require.NoError(t, err)
	require.DirExists(t, dir)
	return dir
}

func TestObserveClaudeCodeCmd(t *testing.T) {
	dir := claudeFixture(t)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		check    func(t *testing.T, res cliResult)
	}{
		{name: "bundle of the transcripts", args: []string{"--config-dir", dir, "--rollout-id", "r1"},
			check: func(t *testing.T, res cliResult) {
				b, err := agentobs.DecodeBundle([]byte(res.stdout))
				require.NoError(t, err, res.stdout)
				assert.Equal(t, "claude_code", b.Source)
				ids := map[string]bool{}
				for _, r := range b.Records {
					if inv, ok := r.(*agentobs.AgentInvocation); ok {
						ids[inv.InvocationID] = true
					}
				}
				assert.Equal(t, map[string]bool{"session-root": true, "agent-child": true, "agent-grandchild": true}, ids)
				assert.Contains(t, res.stdout, `"name":"policy_model"`)
			}},
		{name: "missing directory is a gap, not a failure", args: []string{"--config-dir", filepath.Join(t.TempDir(), "none"), "--rollout-id", "r1"},
			check: func(t *testing.T, res cliResult) {
				assert.Contains(t, res.stdout, "agent_transcript_unavailable")
			}},
		{name: "rollout id required", args: []string{"--config-dir", dir}, wantCode: 2},
		{name: "unsafe rollout id refused", args: []string{"--config-dir", dir, "--rollout-id", "../x"}, wantCode: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runGymtrace(t, append([]string{"observe", "claudecode"}, tt.args...)...)
			require.Equal(t, tt.wantCode, res.code, "stderr: %s", res.stderr)
			if tt.check != nil {
				tt.check(t, res)
			}
		})
	}
}

// TestAttachClaudeCodeDirKey: attach --claude-code-dir-key extracts the bundle of the directory a
// row names and joins it with the rollout's calls.
func TestAttachClaudeCodeDirKey(t *testing.T) {
	capDir := t.TempDir()
	in := filepath.Join(t.TempDir(), "rollouts.jsonl")
	out := filepath.Join(t.TempDir(), "out.jsonl")
	rows := `{"_ng_rollout_id":"cc-1","claude_dir":"` + claudeFixture(t) + `"}` + "\n" + `{"_ng_rollout_id":"cc-2"}` + "\n"
	require.NoError(t, os.WriteFile(in, []byte(rows), 0o600))
	res := runGymtrace(t, "attach", "--capture-dir", capDir, "--input", in, "--output", out, "--claude-code-dir-key", "claude_dir")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	require.Len(t, lines, 2)
	assert.Contains(t, lines[0], `"ng_agent_observations":{"source":"claude_code"`)
	assert.Contains(t, lines[0], `"model_call_reference_unmatched"`, "no captured calls: the refs stay unmatched")
	assert.NotContains(t, lines[1], "ng_agent_observations")
	assert.Contains(t, res.stderr, "1 ng_agent_observations joined")
}

// hostileClaudeDir returns a Claude Code config directory with one good transcript and, in the same
// project, evil.jsonl planted by plant.
func hostileClaudeDir(t *testing.T, plant func(evil string) error) string {
	t.Helper()
	dir := t.TempDir()
	w := filepath.Join(dir, "projects", "w")
	require.NoError(t, os.MkdirAll(w, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(w, "good.jsonl"),
		[]byte(`{"sessionId":"good","type":"assistant","message":{"id":"msg-1","role":"assistant","content":"hi"}}`+"\n"), 0o600))
	if plant != nil {
		require.NoError(t, plant(filepath.Join(w, "evil.jsonl")))
	}
	return dir
}

// TestObserveClaudeCodeRefusesHostileTranscripts performs issue #14 finding 4's attacks on
// `observe claudecode`: each exits 1 at once (no hang, no memory blow-up) naming the file and the
// rule (SPEC §0 D16) and prints nothing.
func TestObserveClaudeCodeRefusesHostileTranscripts(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.jsonl")
	require.NoError(t, os.WriteFile(secret, []byte(`{"sessionId":"s","type":"user","message":{"role":"user","content":"SECRET"}}`), 0o600))
	link := "is a symbolic link: transcripts and the directories below the config directory are opened without following links"
	tests := []struct {
		name  string
		plant func(evil string) error
		args  []string
		rule  string
	}{
		{name: "symlink to /dev/zero", plant: func(evil string) error { return os.Symlink("/dev/zero", evil) }, rule: link},
		{name: "FIFO", plant: func(evil string) error { return syscall.Mkfifo(evil, 0o600) },
			rule: "is a FIFO, not a regular file: transcripts are read only from regular files"},
		{name: "symlink to a file outside", plant: func(evil string) error { return os.Symlink(secret, evil) }, rule: link},
		{name: "oversize transcript", args: []string{"--max-transcript-bytes", "16"},
			plant: func(evil string) error { return os.WriteFile(evil, []byte(`{"sessionId":"0123456789"}`), 0o600) },
			rule:  "is larger than 16 bytes, the bound on one transcript"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := hostileClaudeDir(t, tt.plant)
			res := runGymtrace(t, append([]string{"observe", "claudecode", "--config-dir", dir, "--rollout-id", "r1"}, tt.args...)...)
			require.Equal(t, 1, res.code, "stderr: %s", res.stderr)
			assert.Empty(t, res.stdout)
			require.Error(t, res.err)
			assert.Equal(t, "observe claudecode: claude code transcript "+filepath.Join(dir, "projects", "w", "evil.jsonl")+" "+tt.rule, res.err.Error())
		})
	}
	t.Run("symlinked projects directory", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.Symlink(filepath.Dir(secret), filepath.Join(dir, "projects")))
		res := runGymtrace(t, "observe", "claudecode", "--config-dir", dir, "--rollout-id", "r1")
		require.Equal(t, 1, res.code, "stderr: %s", res.stderr)
		require.Error(t, res.err)
		assert.Equal(t, "observe claudecode: claude code transcript "+filepath.Join(dir, "projects")+" "+link, res.err.Error())
	})
	t.Run("negative bound is a usage error", func(t *testing.T) {
		res := runGymtrace(t, "observe", "claudecode", "--config-dir", t.TempDir(), "--rollout-id", "r1", "--max-transcript-bytes", "-1")
		require.Equal(t, 2, res.code, "stderr: %s", res.stderr)
		assert.ErrorContains(t, res.err, "--max-transcript-bytes -1")
	})
}

// TestAttachClaudeCodeHostileRow performs the attack on attach: one row among good rows names a
// directory whose transcript links to /dev/zero. The output is written with every row, the hostile
// row carries the gap claude_code_transcript_unreadable, stderr names it, and the exit status is
// that of a capture gap (0; 1 with --strict, after writing the output).
func TestAttachClaudeCodeHostileRow(t *testing.T) {
	capDir := t.TempDir()
	good := hostileClaudeDir(t, nil)
	evil := hostileClaudeDir(t, func(evil string) error { return os.Symlink("/dev/zero", evil) })
	in := filepath.Join(t.TempDir(), "rollouts.jsonl")
	rows := `{"_ng_rollout_id":"cc-1","claude_dir":"` + good + `"}` + "\n" +
		`{"_ng_rollout_id":"cc-2","claude_dir":"` + evil + `"}` + "\n" +
		`{"_ng_rollout_id":"cc-3","claude_dir":"` + good + `"}` + "\n"
	require.NoError(t, os.WriteFile(in, []byte(rows), 0o600))
	for _, strict := range []bool{false, true} {
		out := filepath.Join(t.TempDir(), "out.jsonl")
		args := []string{"attach", "--capture-dir", capDir, "--input", in, "--output", out, "--claude-code-dir-key", "claude_dir"}
		want := 0
		if strict {
			args, want = append(args, "--strict"), 1
		}
		res := runGymtrace(t, args...)
		require.Equal(t, want, res.code, "stderr: %s", res.stderr)
		got, err := os.ReadFile(out)
		require.NoError(t, err, "the output is written")
		lines := strings.Split(strings.TrimSpace(string(got)), "\n")
		require.Len(t, lines, 3)
		for _, i := range []int{0, 2} {
			assert.Contains(t, lines[i], `"invocation_id":"good"`, "good row %d keeps its observations", i+1)
		}
		assert.Contains(t, lines[1], `"ng_agent_observations":{"source":"claude_code","records":[],"gaps":[{"code":"claude_code_transcript_unreadable","invocation_id":null,"detail":"projects/w/evil.jsonl is a symbolic link`)
		assert.Contains(t, res.stderr, "gap claude_code_transcript_unreadable: line 2: claude code transcript "+filepath.Join(evil, "projects", "w", "evil.jsonl"))
		assert.Contains(t, res.stderr, "1 with refused Claude Code transcripts")
	}
}
