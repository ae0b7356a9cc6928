package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/tokens"
)

// TestTokensCommand: `gymtrace tokens` prints one rollout's capture as JSON off a terminal, never
// freezes it, says so on stderr for a rollout without token files, and refuses bad flags.
func TestTokensCommand(t *testing.T) {
	run := newTokenRun(t)
	for _, tt := range []struct {
		id, cause string
		masked    bool
		dangling  []any
	}{
		{"0-0", "", false, []any{}},
		{"1-0", "capture incomplete", true, []any{"1-0-b"}},
	} {
		r := runGymtrace(t, "tokens", "--capture-dir", run.dir, tt.id)
		require.NoError(t, r.err, r.stderr)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), r.stdout)
		assert.Equal(t, tt.masked, got["masked"], tt.id)
		assert.Equal(t, tt.dangling, got["intents_without_entries"], tt.id)
		if tt.cause != "" {
			assert.Contains(t, got["cause"], tt.cause)
		}
		assert.False(t, got["state"].(map[string]any)["frozen"].(bool), tt.id)
		assert.False(t, inspect(t, run.store, tt.id).Frozen, "a read never freezes")
	}

	r := runGymtrace(t, "tokens", "--capture-dir", run.dir, "2-0")
	require.NoError(t, r.err)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "no token capture for rollout 2-0 in "+run.dir)
	_, err := os.Stat(filepath.Join(run.dir, "2-0"+tokens.LockFileSuffix))
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing is created for a rollout without a token capture")

	missing := filepath.Join(t.TempDir(), "missing")
	r = runGymtrace(t, "tokens", "--capture-dir", run.dir, "--token-dir", missing, "0-0")
	require.NoError(t, r.err)
	_, err = os.Stat(missing)
	assert.ErrorIs(t, err, os.ErrNotExist, "the token directory is never created")

	for _, args := range [][]string{{"--token-builder", "x", "0-0"}, {"--token-dir", "rel", "0-0"}, {"a/b"}} {
		r = runGymtrace(t, append([]string{"tokens", "--capture-dir", run.dir}, args...)...)
		assert.Equal(t, 2, r.code, args)
	}
}
