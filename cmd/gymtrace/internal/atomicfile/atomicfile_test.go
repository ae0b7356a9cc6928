package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	require.NoError(t, os.WriteFile(path, []byte("old\n"), 0o644))

	boom := errors.New("boom")
	err := Write(path, "output", 0o600, func(w io.Writer) error {
		_, _ = io.WriteString(w, "partial")
		return boom
	})
	require.ErrorIs(t, err, boom)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "old\n", string(got), "a failed fill leaves the file as it was")

	require.NoError(t, Write(path, "output", 0o640, func(w io.Writer) error {
		_, err := io.WriteString(w, "new\n")
		return err
	}))
	got, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new\n", string(got))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")

	err = Write(filepath.Join(path, "x"), "output x", 0o600, func(io.Writer) error { return nil })
	require.ErrorContains(t, err, "create output x: ")
	assert.NotContains(t, err.Error(), ".tmp-", "errors never name the temporary file")
}
