package main

import (
	"os"
	"path/filepath"
	"strings"
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
