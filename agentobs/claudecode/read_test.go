package claudecode

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/agentobs"
)

// readAll runs the reader alone over configDir.
func readAll(t *testing.T, fsys fileSystem, configDir string) ([]event, []agentobs.ObservationGap) {
	t.Helper()
	var gaps []agentobs.ObservationGap
	events, err := readEvents(fsys, configDir, DefaultMaxTranscriptBytes, &gaps)
	require.NoError(t, err)
	return events, gaps
}

func sessionIDs(t *testing.T, events []event) []string {
	t.Helper()
	out := make([]string, 0, len(events))
	for i, e := range events {
		require.Equal(t, i, e.ordinal)
		v, _ := e.get("sessionId")
		s, _ := v.AsString()
		out = append(out, s)
	}
	return out
}

func TestFileOrderIsByPathComponents(t *testing.T) {
	dir := t.TempDir()
	for _, rel := range []string{"p/a-c.jsonl", "p/a/b.jsonl", "p/a.jsonl", "p/a/b/c.jsonl", "P/z.jsonl", "p/é.jsonl", "p/.hidden.jsonl", "p/x.json", "p/notes.txt"} {
		writeTranscript(t, dir, rel, `{"sessionId":"`+rel+`"}`)
	}
	events, gaps := readAll(t, osFS{}, dir)
	assert.Empty(t, gaps)
	// Python: sorted(Path.rglob("*.jsonl")) compares component lists, so "p/a/…" < "p/a-c.jsonl"
	// ('/' never compared with '-'), and "a" < "a-c.jsonl" < "a.jsonl".
	assert.Equal(t, []string{"P/z.jsonl", "p/.hidden.jsonl", "p/a/b/c.jsonl", "p/a/b.jsonl", "p/a-c.jsonl", "p/a.jsonl", "p/é.jsonl"},
		sessionIDs(t, events))
}

func TestLineSplittingAndNumbering(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "projects", "w", "s.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	content := "\ufeff{\"sessionId\":\"bom\"}\r\n" + // 1: a BOM is not whitespace: malformed
		"{\"sessionId\":\"a\"}\r" + // 2: CR alone ends a line
		"\r\n" + // 3: blank (counted)
		" \t\x1c\u00a0\u2028 \n" + // 4: whitespace only (Python's str.strip)
		"{\"sessionId\":\"b\u2028c\"}\n" + // 5: U+2028 does not end a line
		"{\"sessionId\":\"d\xff\"}\n" + // 6: invalid UTF-8 becomes U+FFFD
		"\u00a0{\"sessionId\":\"e\"}\n" + // 7: leading NBSP is not JSON whitespace
		"[1]\n" + // 8: not an object
		"{\"session\":\"x\"}\n" + // 9: no sessionId: skipped silently
		"{\"sessionId\":\"f\",\"sessionId\":5}\n" + // 10: duplicate keys: the last wins (not a string)
		"{\"sessionId\":5,\"sessionId\":\"g\"}\n" + // 11: … here a string
		"{\"sessionId\":\"h\"}" // 12: no final newline
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	events, gaps := readAll(t, osFS{}, dir)
	assert.Equal(t, []string{"a", "b\u2028c", "d\ufffd", "g", "h"}, sessionIDs(t, events))
	assert.Equal(t, []agentobs.ObservationGap{
		newGap(GapMalformedTranscriptLine, nil, ptr("s.jsonl:1")),
		newGap(GapMalformedTranscriptLine, nil, ptr("s.jsonl:7")),
		newGap(GapInvalidTranscriptRecord, nil, ptr("s.jsonl:8")),
	}, gaps)
}

func TestReadingGaps(t *testing.T) {
	t.Run("config dir missing", func(t *testing.T) {
		b, err := Extract(filepath.Join(t.TempDir(), "nope"), Options{})
		require.NoError(t, err)
		assert.Equal(t, []agentobs.ObservationGap{newGap(GapTranscriptDirMissing, nil, nil), newGap(GapAgentTranscriptUnavailable, nil, nil)}, b.Gaps)
		assert.Empty(t, b.Records)
	})
	t.Run("config dir is a file", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(f, nil, 0o644))
		_, gaps := readAll(t, osFS{}, f)
		assert.Equal(t, []agentobs.ObservationGap{newGap(GapTranscriptDirMissing, nil, nil)}, gaps)
	})
	t.Run("projects missing", func(t *testing.T) {
		_, gaps := readAll(t, osFS{}, t.TempDir())
		assert.Equal(t, []agentobs.ObservationGap{newGap(GapTranscriptDirMissing, nil, ptr("projects"))}, gaps)
	})
	t.Run("listing fails", func(t *testing.T) {
		dir := t.TempDir()
		writeTranscript(t, dir, "w/s.jsonl", `{"sessionId":"s"}`)
		writeTranscript(t, dir, "w/sub/t.jsonl", `{"sessionId":"t"}`)
		events, gaps := readAll(t, failingFS{failDir: "projects/w/sub"}, dir)
		assert.Empty(t, events)
		assert.Equal(t, []agentobs.ObservationGap{newGap(GapTranscriptDirUnreadable, nil, nil)}, gaps)
	})
	t.Run("a *.jsonl directory is an unreadable transcript", func(t *testing.T) {
		dir := t.TempDir()
		writeTranscript(t, dir, "w/dir.jsonl/inner.jsonl", `{"sessionId":"inner"}`)
		events, gaps := readAll(t, osFS{}, dir)
		assert.Equal(t, []string{"inner"}, sessionIDs(t, events))
		assert.Equal(t, []agentobs.ObservationGap{newGap(GapTranscriptUnreadable, nil, ptr("dir.jsonl"))}, gaps)
	})
	t.Run("a linked directory is not entered", func(t *testing.T) {
		dir := t.TempDir()
		other := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(other, "x.jsonl"), []byte(`{"sessionId":"outside"}`), 0o644))
		writeTranscript(t, dir, "w/s.jsonl", `{"sessionId":"s"}`)
		require.NoError(t, os.Symlink(other, filepath.Join(dir, "projects", "w", "subdir")))
		events, gaps := readAll(t, osFS{}, dir)
		assert.Empty(t, gaps)
		assert.Equal(t, []string{"s"}, sessionIDs(t, events))
	})
}

func TestForEachLine(t *testing.T) {
	var got []string
	forEachLine("a\r\nb\rc\n\nd", func(n int, line string) { got = append(got, string(rune('0'+n))+":"+line) })
	assert.Equal(t, []string{"1:a", "2:b", "3:c", "4:", "5:d"}, got)
	got = nil
	forEachLine("", func(n int, line string) { got = append(got, line) })
	assert.Empty(t, got)
}
