package capture

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// SPEC §8 #64: clearing 0-0 removes its records and marker and leaves 1-0 alone.
func TestClear(t *testing.T) {
	s := newTestStore(t)
	mustAppend(t, s, "0-0", `{"request":{},"response":{}}`+"\n")
	require.NoError(t, s.MarkIncomplete("0-0"))
	mustAppend(t, s, "1-0", `{"request":{},"response":{}}`+"\n")

	require.NoError(t, s.Clear("0-0"))
	rows, err := s.Read("0-0")
	require.NoError(t, err)
	assert.Empty(t, rows)
	inc, err := s.IsIncomplete("0-0")
	require.NoError(t, err)
	assert.False(t, inc)
	has, err := s.HasCapture("0-0")
	require.NoError(t, err)
	assert.False(t, has)

	rows, err = s.Read("1-0")
	require.NoError(t, err)
	assert.Len(t, rows, 1)

	t.Run("missing files are fine", func(t *testing.T) {
		require.NoError(t, s.Clear("0-0"))
		require.NoError(t, s.Clear("never"))
	})
	t.Run("marker only", func(t *testing.T) {
		require.NoError(t, s.MarkIncomplete("m"))
		require.NoError(t, s.Clear("m"))
		has, err := s.HasCapture("m")
		require.NoError(t, err)
		assert.False(t, has)
	})
	t.Run("unlink failure is reported", func(t *testing.T) {
		marker, _ := s.MarkerPath("d")
		require.NoError(t, os.Mkdir(marker, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(marker, "x"), nil, 0o600))
		err := s.Clear("d")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "capture clear d:")
		var pe *fs.PathError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, marker, pe.Path)
	})
}

func TestClearRollouts(t *testing.T) {
	t.Run("no dirs is a no-op", func(t *testing.T) {
		require.NoError(t, ClearRollouts(nil, []string{"0-0"}))
	})
	t.Run("clears every dir, only the given ids", func(t *testing.T) {
		a, b := newTestStore(t), newTestStore(t)
		for _, s := range []*Store{a, b} {
			mustAppend(t, s, "0-0", `{"a":1}`+"\n")
			require.NoError(t, s.MarkIncomplete("0-0"))
			mustAppend(t, s, "1-0", `{"a":1}`+"\n")
		}
		require.NoError(t, ClearRollouts([]string{a.Dir(), b.Dir()}, []string{"0-0"}))
		for _, s := range []*Store{a, b} {
			has, err := s.HasCapture("0-0")
			require.NoError(t, err)
			assert.False(t, has)
			has, err = s.HasCapture("1-0")
			require.NoError(t, err)
			assert.True(t, has)
		}
	})
	t.Run("creates missing dirs", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "new")
		require.NoError(t, ClearRollouts([]string{dir}, nil))
		st, err := os.Stat(dir)
		require.NoError(t, err)
		assert.True(t, st.IsDir())
	})
	t.Run("store construction failure propagates", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(file, nil, 0o600))
		err := ClearRollouts([]string{filepath.Join(file, "sub")}, []string{"0-0"})
		require.ErrorContains(t, err, "create directory")
	})
	t.Run("relative dir refused", func(t *testing.T) {
		require.ErrorContains(t, ClearRollouts([]string{"rel"}, []string{"0-0"}), "absolute")
	})
	t.Run("invalid id refused before anything is removed", func(t *testing.T) {
		s := newTestStore(t)
		mustAppend(t, s, "0-0", `{"a":1}`+"\n")
		err := ClearRollouts([]string{s.Dir()}, []string{"0-0", "a b"})
		require.ErrorIs(t, err, ErrInvalidRolloutID)
		has, err := s.HasCapture("0-0")
		require.NoError(t, err)
		assert.True(t, has)
	})
}

// Clear waits for a writer's LOCK_EX, so it never cuts a line in half.
func TestClearWaitsForWriterLock(t *testing.T) {
	s := newTestStore(t)
	mustAppend(t, s, "r", `{"a":1}`+"\n")
	path, _ := s.CapturePath("r")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, unix.Flock(int(f.Fd()), unix.LOCK_EX))

	done := make(chan error, 1)
	go func() { done <- s.Clear("r") }()
	select {
	case err := <-done:
		t.Fatalf("clear did not wait for LOCK_EX: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	require.NoError(t, unix.Flock(int(f.Fd()), unix.LOCK_UN))
	require.NoError(t, <-done)
	_, err = os.Stat(path)
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

// An Append that opened the file before a Clear unlinked it writes to a new file, not the removed one.
func TestAppendAfterConcurrentUnlinkReopens(t *testing.T) {
	s := newTestStore(t)
	mustAppend(t, s, "r", `{"old":1}`+"\n")
	path, _ := s.CapturePath("r")
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, unix.Flock(int(f.Fd()), unix.LOCK_EX)) // what Clear holds while unlinking

	done := make(chan error, 1)
	go func() { done <- s.Append(context.Background(), "r", []byte(`{"new":1}`+"\n")) }()
	// Wait until the append has its own descriptor on the old file (it then blocks in flock).
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.files[path] != nil
	}, 5*time.Second, time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, os.Remove(path))
	require.NoError(t, unix.Flock(int(f.Fd()), unix.LOCK_UN))
	require.NoError(t, <-done)

	assert.Equal(t, `{"new":1}`+"\n", readFile(t, path))
}
