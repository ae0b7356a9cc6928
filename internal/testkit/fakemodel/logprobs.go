package fakemodel

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"

	"github.com/gymtrace/gymtrace/ojson"
)

// pyFloat is f as Python's json and pydantic write it (shortest round trip, "-1.0" not "-1").
func pyFloat(f float64) json.RawMessage { return json.RawMessage(ojson.AppendFloat(nil, f)) }

// logprob is the deterministic log probability of the i-th generated token of choice c:
// −k/10000 for the k in [1, 20000] this returns, derived from the request and the position.
func (e *engineAnswer) logprob(c, i int) int {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(c))
	binary.BigEndian.PutUint64(b[8:], uint64(i))
	h := sha256.Sum256(append(e.seed[:], b[:]...))
	return 1 + int(binary.BigEndian.Uint64(h[:8])%20000)
}

// alternatives are the pieces the top_logprobs lists offer after the sampled token.
var alternatives = tokenize(" the a , . and to of I\n is in it that for you was with on as")

// ranked is one entry of a top_logprobs list.
type ranked struct {
	tok token
	lp  float64
}

// sampled returns the log probability of token g at position i of choice c and, when
// top_logprobs asks for k > 0, the k-entry list: g first, then alternatives, each 1.25 lower
// than the one before (every value a multiple of 0.0001, so its decimal text is short).
func (e *engineAnswer) sampled(c, i int, g token) (float64, []ranked) {
	k := e.logprob(c, i)
	lp := -float64(k) / 10000
	if e.tr.topLogprobs <= 0 {
		return lp, nil
	}
	top := []ranked{{g, lp}}
	for _, alt := range alternatives {
		if len(top) == e.tr.topLogprobs {
			break
		}
		if alt.id != g.id {
			top = append(top, ranked{alt, -float64(k+12500*len(top)) / 10000})
		}
	}
	return lp, top
}

// logprobsObject is {"content": [entry…]} for tokens [from, to) of choice c, or nil when the
// request did not ask for log probs; entry shapes one token's entry in the engine's way.
func (e *engineAnswer) logprobsObject(c, from, to int, entry func(g token, lp float64, top []ranked) obj) any {
	if !e.tr.logprobs {
		return nil
	}
	content := arr{}
	for i := from; i < to; i++ {
		g := e.choices[c].gen[i].token
		lp, top := e.sampled(c, i, g)
		content = append(content, entry(g, lp, top))
	}
	return obj{{"content", content}}
}

// byteList is b as a JSON array of integers ([] for none).
func byteList(b []byte) arr {
	out := arr{}
	for _, x := range b {
		out = append(out, int(x))
	}
	return out
}
