package claudecode

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

// TestHostileTranscriptsAreRefused performs the attacks of issue #14 finding 4 on a config
// directory holding one good transcript: each hostile entry makes Extract and Observe refuse the
// run (SPEC §0 D16) at once, without reading through the link, blocking on a FIFO or reading more
// than the bound, and Observe's bundle is the one gap claude_code_transcript_unreadable.
func TestHostileTranscriptsAreRefused(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "other.jsonl")
	require.NoError(t, os.WriteFile(secret, []byte(`{"sessionId":"outside","type":"user","message":{"role":"user","content":"SECRET"}}`), 0o644))

	tests := []struct {
		name  string
		plant func(t *testing.T, projects string)
		limit int64
		rel   string // the refused entry below the config directory
		rule  string
	}{
		{name: "symlink to /dev/zero", rel: "projects/w/evil.jsonl", rule: ruleLink,
			plant: func(t *testing.T, p string) {
				require.NoError(t, os.Symlink("/dev/zero", filepath.Join(p, "w", "evil.jsonl")))
			}},
		{name: "FIFO", rel: "projects/w/evil.jsonl", rule: "is a FIFO, not a regular file: transcripts are read only from regular files",
			plant: func(t *testing.T, p string) {
				require.NoError(t, syscall.Mkfifo(filepath.Join(p, "w", "evil.jsonl"), 0o600))
			}},
		{name: "symlink to a file outside the config dir", rel: "projects/w/evil.jsonl", rule: ruleLink,
			plant: func(t *testing.T, p string) {
				require.NoError(t, os.Symlink(secret, filepath.Join(p, "w", "evil.jsonl")))
			}},
		{name: "dangling symlink", rel: "projects/w/evil.jsonl", rule: ruleLink,
			plant: func(t *testing.T, p string) {
				require.NoError(t, os.Symlink(filepath.Join(outside, "missing"), filepath.Join(p, "w", "evil.jsonl")))
			}},
		{name: "*.jsonl symlink to a directory", rel: "projects/w/evil.jsonl", rule: ruleLink,
			plant: func(t *testing.T, p string) {
				require.NoError(t, os.Symlink(outside, filepath.Join(p, "w", "evil.jsonl")))
			}},
		{name: "projects is a symlinked directory", rel: "projects", rule: ruleLink,
			plant: func(t *testing.T, p string) {
				require.NoError(t, os.RemoveAll(p))
				require.NoError(t, os.Symlink(outside, p))
			}},
		{name: "oversize transcript", limit: 64, rel: "projects/w/big.jsonl", rule: "is larger than 64 bytes, the bound on one transcript",
			plant: func(t *testing.T, p string) {
				require.NoError(t, os.WriteFile(filepath.Join(p, "w", "big.jsonl"), []byte(`{"sessionId":"s","pad":"`+strings.Repeat("x", 64)+`"}`), 0o644))
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTranscript(t, dir, "w/good.jsonl", `{"sessionId":"good"}`)
			tt.plant(t, filepath.Join(dir, "projects"))
			opts := Options{RolloutID: "3-1", ModelServerName: "policy", MaxTranscriptBytes: tt.limit}

			_, err := Extract(dir, opts)
			te, ok := err.(*TranscriptError)
			require.True(t, ok, "want a *TranscriptError, got %v", err)
			assert.Equal(t, filepath.Join(dir, filepath.FromSlash(tt.rel)), te.Path)
			assert.Equal(t, tt.rule, te.Rule)
			assert.Equal(t, "claude code transcript "+te.Path+" "+tt.rule, err.Error())

			b, err := Observe(dir, opts)
			require.ErrorAs(t, err, &te)
			assert.Equal(t, agentobs.AgentObservationBundle{Source: Source, Records: []agentobs.Record{}, Gaps: []agentobs.ObservationGap{
				newGap(GapClaudeCodeTranscriptUnreadable, nil, ptr(tt.rel+" "+tt.rule)), newGap(GapNoSandboxRuntime, nil, nil)}}, b)
			assert.NotContains(t, mustJSON(t, b), "SECRET")
		})
	}
}

func TestTranscriptBound(t *testing.T) {
	dir := t.TempDir()
	line := `{"sessionId":"s"}`
	writeTranscript(t, dir, "w/s.jsonl", line)
	b, err := Extract(dir, Options{MaxTranscriptBytes: int64(len(line))})
	require.NoError(t, err, "a transcript of exactly the bound is read")
	assert.Len(t, invocations(b), 1)

	_, err = Extract(dir, Options{MaxTranscriptBytes: -1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "MaxTranscriptBytes -1")

	// A file that grows after its size was checked is read only up to the bound.
	data, err := readLimited(strings.NewReader("12345"), "projects/w/s.jsonl", 5)
	require.NoError(t, err)
	assert.Equal(t, "12345", string(data))
	_, err = readLimited(strings.NewReader("123456"), "projects/w/s.jsonl", 5)
	assert.EqualError(t, err, "projects/w/s.jsonl is larger than 5 bytes, the bound on one transcript")
}

// TestWalkRefusesDirectorySwappedForLink checks the walk's own open: a directory below projects/
// that is a symbolic link by the time it is opened is refused, not followed.
func TestWalkRefusesDirectorySwappedForLink(t *testing.T) {
	dir := t.TempDir()
	writeTranscript(t, dir, "w/s.jsonl", `{"sessionId":"s"}`)
	require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(dir, "projects", "link")))
	_, err := osFS{}.readDir(dir, "projects/link")
	assert.Equal(t, &refusal{rel: "projects/link", rule: ruleLink}, err)
	_, err = osFS{}.readFile(dir, "projects/link/s.jsonl", DefaultMaxTranscriptBytes)
	assert.Equal(t, &refusal{rel: "projects/link", rule: ruleLink}, err)
}
