package capturedir

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestList(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{
		"10-0.capture.jsonl", "2-0.capture.jsonl", "2-0.capture.incomplete", "3-1.capture.incomplete",
		"0-0.observations.jsonl", ".0-0.capture.jsonl.tmp-1", "bad id.capture.jsonl", "notes.txt",
		"...capture.jsonl", // id ".." is a valid capture file id (SPEC §2.2)
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o600))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "run-1"), 0o700))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "9-9.capture.jsonl"), 0o700), "a directory of that name is listed (reading it fails loudly)")

	got, err := List(dir)
	require.NoError(t, err)
	assert.Equal(t, []Entry{
		{RolloutID: "..", HasCapture: true},
		{RolloutID: "2-0", HasCapture: true, HasMarker: true},
		{RolloutID: "3-1", HasMarker: true},
		{RolloutID: "9-9", HasCapture: true},
		{RolloutID: "10-0", HasCapture: true},
	}, got)
}

func TestListErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := List(filepath.Join(dir, "missing"))
	require.Error(t, err)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.Contains(t, err.Error(), "missing")

	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = List(file)
	require.ErrorIs(t, err, ErrNotDir)
	assert.Contains(t, err.Error(), file)

	got, err := List(dir)
	require.NoError(t, err)
	assert.Empty(t, got)
}
