package capture

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A file name the file system refuses (ENAMETOOLONG: the store directory takes 4000 of PATH_MAX's
// 4096 bytes, a valid 150-byte id the rest) can never be written: rejected, not failed, so no
// sender retries it; the marker is tried (its name is longer still: MarkErr) and the counts say
// rejected.
func TestWriterFileNameTooLong(t *testing.T) {
	dir := t.TempDir()
	for len(dir) < 4000 {
		dir = filepath.Join(dir, strings.Repeat("d", min(250, 4000-len(dir)-1)))
	}
	require.NoError(t, os.MkdirAll(dir, 0o700))
	s, err := NewStore(dir)
	require.NoError(t, err)
	w, reader := meteredWriter(t, s)
	rid := strings.Repeat("p", 150)

	r := w.Write(t.Context(), writerSpan(rid, "a"))
	assert.Equal(t, OutcomeRejected, r.Outcome)
	require.ErrorIs(t, r.Err, syscall.ENAMETOOLONG)
	assert.ErrorContains(t, r.Err, "retrying cannot help")
	require.ErrorIs(t, r.MarkErr, syscall.ENAMETOOLONG)

	assert.Equal(t, OutcomeWritten, w.Write(t.Context(), writerSpan("ok", "b")).Outcome, "a shorter name in the same directory is written")
	assert.Equal(t, map[string]int64{"spans/rejected": 1, "spans/written": 1, "bytes": int64(len(writerLine(t, "ok", "b")))}, writerCounts(t, reader))
}
