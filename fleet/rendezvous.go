package fleet

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"slices"
)

// Weight is the rendezvous weight of the gateway with normalized key for a trace id: the first 8
// bytes, big-endian, of SHA-256(key || 0x00 || traceID). Any implementation computing the same
// function (a script checking which gateway owns a rollout) agrees with the proxy.
func Weight(key string, traceID [16]byte) uint64 {
	h := sha256.New()
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write(traceID[:])
	var sum [sha256.Size]byte
	return binary.BigEndian.Uint64(h.Sum(sum[:0]))
}

// Rank returns the indices of keys in the order a span of traceID tries them: by descending
// [Weight], ties (practically impossible) by key. The first is the trace's owner. Removing a key
// moves only the traces it owned, each to its next-ranked key; the order of the others is kept.
func Rank(traceID [16]byte, keys []string) []int {
	type cand struct {
		i int
		w uint64
	}
	cs := make([]cand, len(keys))
	for i, k := range keys {
		cs[i] = cand{i, Weight(k, traceID)}
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if c := cmp.Compare(b.w, a.w); c != 0 {
			return c
		}
		return cmp.Compare(keys[a.i], keys[b.i])
	})
	order := make([]int, len(cs))
	for j, c := range cs {
		order[j] = c.i
	}
	return order
}
