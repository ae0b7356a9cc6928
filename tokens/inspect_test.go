package tokens

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInspect: a read shows what each step of a capture's life leaves, never freezes and writes
// nothing but the lock file; Peek agrees with the Freeze that follows it.
func TestInspect(t *testing.T) {
	s := vectorStore(t)
	has, err := s.HasCapture("r0")
	require.NoError(t, err)
	assert.False(t, has)
	_, err = os.Stat(s.path("r0", LockFileSuffix))
	assert.ErrorIs(t, err, os.ErrNotExist, "HasCapture creates nothing")

	require.NoError(t, s.BeginCall("r0", "c0"))
	require.NoError(t, s.BeginCall("r0", "c1"))
	require.NoError(t, s.Append(baseEntry("r0", "c0")))
	require.NoError(t, s.MarkIncomplete("r0", ""))
	before := files(t, s.Dir())

	in, err := s.Inspect("r0")
	require.NoError(t, err)
	assert.Equal(t, files(t, s.Dir()), before, "Inspect writes nothing")
	assert.True(t, in.HasFiles)
	assert.False(t, in.Frozen)
	assert.True(t, in.Incomplete)
	assert.Equal(t, int64(2), in.Version)
	assert.Equal(t, []string{"c0", "c1"}, in.Intents)
	assert.Equal(t, []string{""}, in.Marks)
	assert.Equal(t, []string{"c1"}, in.Dangling)
	require.Len(t, in.Entries, 1)
	peek, err := in.Peek()
	require.NoError(t, err)
	assert.True(t, peek.Incomplete)
	assert.Empty(t, peek.SnapshotID)

	snap, err := s.Freeze("r0")
	require.NoError(t, err)
	in, err = s.Inspect("r0")
	require.NoError(t, err)
	peek, err = in.Peek()
	require.NoError(t, err)
	assert.Equal(t, snap, peek, "Peek of a frozen capture is its snapshot")

	dropped, err := s.Drop("r0", snap.SnapshotID, snap.Version)
	require.NoError(t, err)
	require.True(t, dropped)
	in, err = s.Inspect("r0")
	require.NoError(t, err)
	assert.True(t, in.Retired)
	assert.True(t, in.HasFiles, "the tombstone is a capture file")
	_, err = in.Peek()
	assert.ErrorIs(t, err, ErrRetired)
	assert.EqualError(t, err, "Token capture for rollout r0 is retired")

	require.NoError(t, os.WriteFile(s.path("r1", EntriesFileSuffix), []byte("{}\n"), 0o600))
	in, err = s.Inspect("r1")
	require.NoError(t, err, "an unreadable entry is the inspection's, not the read's error")
	require.Error(t, in.EntriesErr)
	_, err = in.Peek()
	assert.Equal(t, in.EntriesErr, err)

	_, err = s.HasCapture("a/b")
	assert.ErrorIs(t, err, ErrInvalidRolloutID)
}
