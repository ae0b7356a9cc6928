package capture

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestObservationsFile(t *testing.T) {
	s := newTestStore(t)
	path, err := s.ObservationsPath("task-1_a.2")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(s.Dir(), "task-1_a.2.observations.jsonl"), path)
	for _, bad := range []string{"", "a/b", "../a", "röllout"} {
		_, err := s.ObservationsPath(bad)
		assert.ErrorIs(t, err, ErrInvalidRolloutID, bad)
		assert.ErrorIs(t, s.AppendObservation(t.Context(), bad, []byte("{}\n")), ErrInvalidRolloutID, bad)
		_, _, _, err = s.ReadObservations(bad)
		assert.ErrorIs(t, err, ErrInvalidRolloutID, bad)
		_, err = s.ClearObservations(bad)
		assert.ErrorIs(t, err, ErrInvalidRolloutID, bad)
	}

	path, err = s.ObservationsPath("r-1")
	require.NoError(t, err)
	lines, invalid, exists, err := s.ReadObservations("r-1")
	require.NoError(t, err)
	assert.False(t, exists)
	assert.Zero(t, invalid)
	assert.Empty(t, lines)

	for _, bad := range []string{"{}", "{}\n{}\n", "[]\n", ""} {
		assert.Error(t, s.AppendObservation(t.Context(), "r-1", []byte(bad)), "%q", bad)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, s.AppendObservation(ctx, "r-1", []byte("{}\n")), context.Canceled)
	_, err = os.Stat(path)
	assert.ErrorIs(t, err, fs.ErrNotExist, "refused appends write nothing")

	require.NoError(t, s.AppendObservation(t.Context(), "r-1", []byte(`{"a":1}`+"\n")))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, DefaultFileMode, fi.Mode().Perm())
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("not json\n\n[1]\n{\"torn\":")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, s.AppendObservation(t.Context(), "r-1", []byte(`{"b":2}`+"\n")))
	assert.Equal(t, "{\"a\":1}\nnot json\n\n[1]\n{\"torn\":\n{\"b\":2}\n", readFile(t, path), "D7 repair before the append")

	lines, invalid, exists, err = s.ReadObservations("r-1")
	require.NoError(t, err)
	assert.True(t, exists)
	assert.Equal(t, 3, invalid)
	require.Len(t, lines, 2)
	assert.Equal(t, IndexedLine{Index: 0, Line: []byte(`{"a":1}`)}, lines[0])
	assert.Equal(t, IndexedLine{Index: 4, Line: []byte(`{"b":2}`)}, lines[1])
	has, err := s.HasCapture("r-1")
	require.NoError(t, err)
	assert.False(t, has, "an observations file is not a capture")

	removed, err := s.ClearObservations("r-1")
	require.NoError(t, err)
	assert.True(t, removed)
	removed, err = s.ClearObservations("r-1")
	require.NoError(t, err)
	assert.False(t, removed)
}

func TestObservationsFileSymlinkRefused(t *testing.T) {
	s := newTestStore(t)
	target := filepath.Join(t.TempDir(), "elsewhere")
	require.NoError(t, os.WriteFile(target, []byte("keep\n"), 0o600))
	path, err := s.ObservationsPath("r-1")
	require.NoError(t, err)
	require.NoError(t, os.Symlink(target, path))

	err = s.AppendObservation(t.Context(), "r-1", []byte("{}\n"))
	assert.ErrorIs(t, err, ErrNotRegularFile)
	_, _, _, err = s.ReadObservations("r-1")
	assert.ErrorIs(t, err, ErrNotRegularFile)
	removed, err := s.ClearObservations("r-1")
	require.NoError(t, err)
	assert.True(t, removed, "the link itself is removed")
	assert.Equal(t, "keep\n", readFile(t, target), "its target is untouched")
}

func TestAppendObservationConcurrentSafe(t *testing.T) {
	var syncs atomic.Int64
	s := newTestStore(t, WithSyncHook(func(path string) error {
		if strings.HasSuffix(path, ObservationsFileSuffix) {
			syncs.Add(1)
		}
		return nil
	}))
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, s.AppendObservation(context.Background(), "r-1", []byte(fmt.Sprintf(`{"i":%d}`+"\n", i))))
			assert.NoError(t, s.Append(context.Background(), "r-1", []byte(fmt.Sprintf(`{"c":%d}`+"\n", i))))
		}()
	}
	wg.Wait()
	lines, invalid, _, err := s.ReadObservations("r-1")
	require.NoError(t, err)
	assert.Zero(t, invalid)
	assert.Len(t, lines, n)
	records, err := s.Read("r-1")
	require.NoError(t, err)
	assert.Len(t, records, n, "the capture file is a file of its own")
	assert.LessOrEqual(t, syncs.Load(), int64(n))
	assert.Positive(t, syncs.Load())
}

func TestParseAvailable(t *testing.T) {
	lines, invalid := ParseAvailable([]byte(" {\"a\":1} \r\n\n{bad}\nnull\n{\"b\":NaN}\n{\"c\":2}"))
	assert.Equal(t, 3, invalid)
	require.Len(t, lines, 2)
	assert.Equal(t, 0, lines[0].Index)
	assert.Equal(t, 4, lines[1].Index)
	lines, invalid = ParseAvailable(nil)
	assert.Empty(t, lines)
	assert.Zero(t, invalid)
}
