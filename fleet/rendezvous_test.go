package fleet

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func traceIDs(n int) [][16]byte {
	r := rand.New(rand.NewPCG(1, 2))
	ids := make([][16]byte, n)
	for i := range ids {
		binary.BigEndian.PutUint64(ids[i][:8], r.Uint64())
		binary.BigEndian.PutUint64(ids[i][8:], r.Uint64())
	}
	return ids
}

func owner(id [16]byte, keys []string) string { return keys[Rank(id, keys)[0]] }

// Weight's values were computed independently (Python: int.from_bytes(sha256(key + b"\0" +
// trace_id).digest()[:8], "big")), so a script can reproduce the owner table.
func TestWeightGolden(t *testing.T) {
	var id [16]byte
	for i := range id {
		id[i] = byte(i)
	}
	assert.Equal(t, uint64(2675962944942692034), Weight("http://127.0.0.1:4318", id))
	assert.Equal(t, uint64(1903246856726198800), Weight("http://127.0.0.1:4319", id))
	assert.Equal(t, []int{0, 1}, Rank(id, []string{"http://127.0.0.1:4318", "http://127.0.0.1:4319"}))
	assert.Equal(t, []int{1, 0}, Rank(id, []string{"http://127.0.0.1:4319", "http://127.0.0.1:4318"}))
}

// Every proxy picks the same owner, whatever order its endpoints were configured in.
func TestRankOwnerIndependentOfConfigurationOrder(t *testing.T) {
	keys := []string{"http://10.0.0.1:4318", "http://10.0.0.2:4318", "http://10.0.0.3:4318", "http://10.0.0.4:4318"}
	shuffled := slices.Clone(keys)
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	require.NotEqual(t, keys, shuffled)
	for _, id := range traceIDs(2000) {
		a, b := Rank(id, keys), Rank(id, shuffled)
		for j := range a {
			require.Equal(t, keys[a[j]], shuffled[b[j]], "rank %d of trace %x", j, id)
		}
	}
}

// Losing a gateway moves only its own rollouts, each to its second choice; the others keep theirs.
func TestRankStableReassignmentWhenAGatewayDisappears(t *testing.T) {
	keys := []string{"http://10.0.0.1:4318", "http://10.0.0.2:4318", "http://10.0.0.3:4318"}
	lost := keys[1]
	rest := []string{keys[0], keys[2]}
	moved := 0
	for _, id := range traceIDs(3000) {
		before, after := Rank(id, keys), owner(id, rest)
		if keys[before[0]] == lost {
			moved++
			assert.Equal(t, keys[before[1]], after, "a lost gateway's rollout goes to its second choice")
		} else {
			assert.Equal(t, keys[before[0]], after, "a rollout of a remaining gateway stays")
		}
	}
	assert.InDelta(t, 1000, moved, 150, "about a third of the rollouts were the lost gateway's")
}

func TestRankSpreadsRollouts(t *testing.T) {
	keys := []string{"http://127.0.0.1:14318", "http://127.0.0.1:24318", "http://127.0.0.1:34318"}
	counts := map[string]int{}
	for _, id := range traceIDs(6000) {
		counts[owner(id, keys)]++
	}
	for _, k := range keys {
		assert.InDelta(t, 2000, counts[k], 250, "share of %s", k)
	}
}
