package proxy

import (
	"strings"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// An upstream written in Python (vLLM, SGLang) serializes its answer with json.dumps, which writes
// a non-finite float as the literals NaN, Infinity and -Infinity (a -inf log prob, say), and an
// integer of any size as its digits; the reference reads that answer back with json.loads, which
// accepts both (docs/TOKENS.md §1.5, §6 #8). Strict JSON (SPEC §0 D6) refuses them, so the token
// adapter reads such an answer as json.loads does (readAnswer), and the restore finds its members
// in a copy with the literals masked (maskNonFinite, which finds them with
// python.NonFiniteLiterals), editing the answer's own bytes (docs/TOKENS.md §0 T2).

// maskNonFinite returns a copy of b with each non-finite float value outside strings replaced by
// a JSON number of the same length ("0e0…"), so that a reader that refuses them (ojson.ParseLazy,
// jsontext) finds every member at the offset it has in b; found is false (and the copy nil) when
// b holds none. The copy is only read for offsets: edits apply to b.
func maskNonFinite(b []byte) (masked []byte, found bool) {
	lits := python.NonFiniteLiterals(b)
	if len(lits) == 0 {
		return nil, false
	}
	masked = append([]byte(nil), b...)
	for _, l := range lits {
		copy(masked[l.At:l.End], "0e"+strings.Repeat("0", l.End-l.At-2))
	}
	return masked, true
}

// readAnswer reads an upstream answer as the reference reads it, json.loads (an integer of any
// size kept exact, duplicate keys as a dict holds them), except that a non-finite float (a literal,
// or a float beyond the float64 range: 1e400) stays the number it is in Python, a number whose text
// is "NaN", "Infinity" or "-Infinity" that [ojson.Value.Float64] reads as NaN or ±Inf
// (python.LoadsNonFinite), where python.Loads gives null (orjson's writing). The token adapter
// needs them to refuse a non-finite log prob rather than misread it (docs/TOKENS.md §0 T7). Strict
// JSON is read by ojson.Parse. The value is for reading: a literal's text is not RFC 8259.
func readAnswer(b []byte) (ojson.Value, error) {
	if v, err := ojson.Parse(b); err == nil {
		return v, nil
	}
	return python.LoadsNonFinite(b)
}

// readAnswerLazy is readAnswer for an answer of which a few members are read (the token
// adapter's, which may hold millions of ids and log probs): strict JSON is read by
// [ojson.ParseLazy], which builds no tree and reads duplicate keys as readAnswer does (the last
// value); other text as readAnswer reads it (without a second strict attempt).
func readAnswerLazy(b []byte) (ojson.Value, error) {
	if v, err := ojson.ParseLazy(b); err == nil {
		return v, nil
	}
	return python.LoadsNonFinite(b)
}
