package capture

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SPEC §2.7 at 10× scale (issue 7): 4 processes × 1000 appends to one rollout file give 4000 intact
// lines, each record exactly once, nothing unreadable. The writers are this test binary re-executed
// in its writer mode (TestMain, startWriters), appending through Store.Append.
func TestMultiProcessAppendAtScale(t *testing.T) {
	const writers, count = 4, 1000
	s := newTestStore(t)
	startWriters(t, s.Dir(), "mp4k", writers, count, 0)

	lines, invalid, err := s.ReadAvailable("mp4k")
	require.NoError(t, err)
	assert.Zero(t, invalid, "no torn or interleaved line")
	require.Len(t, lines, writers*count)
	seen := make([]int, writers*count)
	lastSeq := map[int]int{}
	for i, l := range lines {
		require.Equal(t, i, l.Index)
		var v struct{ Writer, Seq, V int }
		require.NoError(t, json.Unmarshal(l.Line, &v))
		require.GreaterOrEqual(t, v.V, 0)
		require.Less(t, v.V, writers*count)
		seen[v.V]++
		if prev, ok := lastSeq[v.Writer]; ok {
			require.Greater(t, v.Seq, prev, "one writer's records stay in its append order")
		}
		lastSeq[v.Writer] = v.Seq
	}
	for v, n := range seen {
		require.Equal(t, 1, n, "value %d", v)
	}
	records, invalid, err := s.ReadAvailableModelCallRecords("mp4k")
	require.NoError(t, err)
	assert.Zero(t, invalid)
	assert.Len(t, records, writers*count)
}
