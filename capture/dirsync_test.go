package capture

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// #14 finding 9: when only the directory fsync fails after the record itself was fsynced, the
// store says so (ErrDirNotSynced), the line is in the file, and a retry does not append it again.
func TestAppendDirSyncFailure(t *testing.T) {
	var dirSyncs atomic.Int32
	s := newTestStore(t, WithDirSyncHook(func(dir string) error {
		dirSyncs.Add(1)
		return unix.EIO
	}))
	err := s.Append(t.Context(), "d", []byte(testLine))
	require.ErrorIs(t, err, ErrDirNotSynced)
	require.ErrorIs(t, err, unix.EIO)
	assert.ErrorContains(t, err, s.Dir())
	assert.Equal(t, testLine, fileOf(t, s, "d"), "the line is in the file")
	assert.Equal(t, int32(1), dirSyncs.Load())

	// The file exists now: the next commit does not create it, so no directory fsync is needed.
	require.NoError(t, s.Append(t.Context(), "d", []byte(`{"b":2}`+"\n")))
	assert.Equal(t, int32(1), dirSyncs.Load())
	marked, err := s.IsIncomplete("d")
	require.NoError(t, err)
	assert.False(t, marked, "the store marks nothing; the line is there")
}

// Through the Writer: outcome written_dir_unsynced, counted with the line's bytes, no marker; the
// sender's retry finds the record (a duplicate) and appends nothing.
func TestWriterDirSyncFailure(t *testing.T) {
	s := newTestStore(t, WithDirSyncHook(func(string) error { return unix.EIO }))
	w, reader := meteredWriter(t, s)
	sp := writerSpan("d", "a")

	r := w.Write(t.Context(), sp)
	assert.Equal(t, OutcomeWrittenDirUnsynced, r.Outcome)
	assert.Equal(t, "written_dir_unsynced", r.Outcome.String())
	require.ErrorIs(t, r.Err, ErrDirNotSynced)
	require.NoError(t, r.MarkErr)
	marked, err := s.IsIncomplete("d")
	require.NoError(t, err)
	assert.False(t, marked, "not marked: the record is there")

	assert.Equal(t, Result{Outcome: OutcomeWritten, RolloutID: "d"}, w.Write(t.Context(), sp), "the retry finds the record")
	assert.Equal(t, writerLine(t, "d", "a"), fileOf(t, s, "d"), "one record")
	assert.Equal(t, map[string]int64{
		"spans/written_dir_unsynced": 1, "spans/written": 1, "duplicates": 1,
		"bytes": int64(len(writerLine(t, "d", "a"))),
	}, writerCounts(t, reader))
}

// A partial record whose directory fsync failed stays partial (marked), and its error names both.
func TestWriterDirSyncFailurePartial(t *testing.T) {
	s := newTestStore(t, WithDirSyncHook(func(string) error { return unix.EIO }))
	w, _ := meteredWriter(t, s)
	sp := writerSpan("p", "a")
	sp.DroppedAttributes = 1
	r := w.Write(t.Context(), sp)
	assert.Equal(t, OutcomePartial, r.Outcome)
	require.ErrorIs(t, r.Err, ErrDirNotSynced)
	var p Problems
	require.ErrorAs(t, r.Err, &p)
	marked, err := s.IsIncomplete("p")
	require.NoError(t, err)
	assert.True(t, marked)
}
