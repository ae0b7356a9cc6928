package capture

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The attack of #14 finding 6: a hard link to a file outside the capture directory, planted under
// a capture file's or a marker's name, must not let a record reach that file. Every open refuses a
// file with more than one link, like a symbolic link.
func TestStoreRefusesHardLinks(t *testing.T) {
	s := newTestStore(t)
	capPath, _ := s.CapturePath("linked")
	markPath, _ := s.MarkerPath("linked")
	const orig = `{"outside":true}` + "\n"
	for _, op := range []struct {
		name string
		path string
		run  func() error
	}{
		{"append", capPath, func() error { return s.Append(t.Context(), "linked", []byte(testLine)) }},
		{"append in pieces", capPath, func() error {
			return s.AppendStream(t.Context(), "linked", len(testLine), func(emit func([]byte) error) error { return emit([]byte(testLine)) })
		}},
		{"mark", markPath, func() error { return s.MarkIncomplete("linked") }},
		{"strict read", capPath, func() error { _, err := s.Read("linked"); return err }},
		{"tolerant read", capPath, func() error { _, _, err := s.ReadAvailable("linked"); return err }},
	} {
		t.Run(op.name, func(t *testing.T) {
			outside := filepath.Join(t.TempDir(), "outside.jsonl")
			require.NoError(t, os.WriteFile(outside, []byte(orig), 0o600))
			require.NoError(t, os.Link(outside, op.path))
			t.Cleanup(func() { _ = os.Remove(op.path) })

			requireNotRegular(t, op.run(), op.path, "a hard link: 2 links")
			assert.Equal(t, orig, readFile(t, outside), "the file outside did not grow")
		})
	}
}

// The link may be planted after the store opened the file, while it waits for the lock: the
// store checks the link count again once it holds the lock, and writes nothing.
func TestStoreRefusesHardLinkMadeWhileLocking(t *testing.T) {
	s := newTestStore(t)
	require.NoError(t, s.Append(t.Context(), "late", []byte(testLine)))
	capPath, _ := s.CapturePath("late")

	holder, err := os.Open(capPath)
	require.NoError(t, err)
	defer holder.Close()
	require.NoError(t, unix.Flock(int(holder.Fd()), unix.LOCK_EX))
	done := make(chan error, 1)
	go func() { done <- s.Append(t.Context(), "late", []byte(`{"b":2}`+"\n")) }()
	time.Sleep(50 * time.Millisecond) // let the Append open the file and block on the lock
	outside := filepath.Join(t.TempDir(), "outside.jsonl")
	require.NoError(t, os.Link(capPath, outside))
	require.NoError(t, unix.Flock(int(holder.Fd()), unix.LOCK_UN))

	requireNotRegular(t, <-done, capPath, "a hard link: 2 links")
	assert.Equal(t, testLine, readFile(t, outside), "nothing appended through the link")
}

// Through the Writer, a refused hard link is what a refused symbolic link is: outcome rejected
// (retrying cannot help until the file is replaced, so a sender is answered at once), counted,
// the rollout marked incomplete.
func TestWriterHardLinkedCaptureFile(t *testing.T) {
	s := newTestStore(t)
	w, reader := meteredWriter(t, s)
	outside := filepath.Join(t.TempDir(), "outside.jsonl")
	require.NoError(t, os.WriteFile(outside, nil, 0o600))
	require.NoError(t, os.Link(outside, s.capturePath("hl")))

	r := w.Write(t.Context(), writerSpan("hl", "a"))
	assert.Equal(t, OutcomeRejected, r.Outcome)
	require.ErrorIs(t, r.Err, ErrNotRegularFile)
	require.NoError(t, r.MarkErr)
	marked, err := s.IsIncomplete("hl")
	require.NoError(t, err)
	assert.True(t, marked)
	assert.Equal(t, map[string]int64{"spans/rejected": 1}, writerCounts(t, reader))
	assert.Empty(t, readFile(t, outside))
}
