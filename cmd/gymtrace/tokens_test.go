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
	require.Error(t, r.err)
	assert.Contains(t, r.err.Error(), "--token-dir "+missing+": directory does not exist")
	_, err = os.Stat(missing)
	assert.ErrorIs(t, err, os.ErrNotExist, "the token directory is never created")

	for _, args := range [][]string{{"--token-builder", "x", "0-0"}, {"--token-dir", "rel", "0-0"}, {"a/b"}} {
		r = runGymtrace(t, append([]string{"tokens", "--capture-dir", run.dir}, args...)...)
		assert.Equal(t, 2, r.code, args)
	}
}

// TestTokenDirRunID: with --run-id, --token-dir names the directory whose RUN subdirectory holds
// the run's token captures, where the proxy's --token-dir with the same --run-id writes them.
func TestTokenDirRunID(t *testing.T) {
	run := newTokenRun(t)
	tdir, cdir := t.TempDir(), t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(tdir, "r1"), 0o700))
	ents, err := os.ReadDir(run.dir)
	require.NoError(t, err)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tokens.") {
			b, err := os.ReadFile(filepath.Join(run.dir, e.Name()))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(tdir, "r1", e.Name()), b, 0o600))
		}
	}
	r := runGymtrace(t, "tokens", "--capture-dir", cdir, "--token-dir", tdir, "--run-id", "r1", "0-0")
	require.NoError(t, r.err, r.stderr)
	assert.Contains(t, r.stdout, `"entries"`)

	r = runGymtrace(t, "tokens", "--capture-dir", cdir, "--token-dir", tdir, "0-0")
	require.NoError(t, r.err)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "no token capture for rollout 0-0 in "+tdir)

	r = runGymtrace(t, "tokens", "--capture-dir", cdir, "--token-dir", tdir, "--run-id", "r2", "0-0")
	require.NoError(t, r.err)
	assert.Contains(t, r.stderr, "no token capture for rollout 0-0 in "+filepath.Join(tdir, "r2"))
	assert.NoDirExists(t, filepath.Join(tdir, "r2"), "never created")
}
