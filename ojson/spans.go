package ojson

import "iter"

// Span is one member or element of an array or object read by [ParseLazy], and where it lies in
// that array's or object's text (see [Value.Spans]): a caller that edits a few members of a
// document in place (the proxy's token restore, docs/TOKENS.md §0 T2) finds them, their values and
// their byte offsets in the one validation pass [ParseLazy] made.
type Span struct {
	// Key is the member's decoded key; "" for an array element.
	Key string
	// Value is the member's or element's value, an array or object again raw (as [ParseLazy]
	// returns it; it shares the parsed data's memory).
	Value Value
	// KeyStart is the offset of the member key's opening quote; for an element, Start.
	KeyStart int
	// Start and End delimit the value's text: text[Start:End], no surrounding whitespace.
	Start, End int
}

// Spans yields the members of v (in text order, duplicate keys each in its place, not collapsed)
// or its elements when v is an array or object read by [ParseLazy] (or one of its raw parts), with
// byte offsets into v's text: the text given to ParseLazy less its leading whitespace for the
// outermost value, and text[Span.Start:Span.End] of the enclosing span for a nested one. It yields
// nothing for a built value (from [Parse], [Object], [Array]) or any other kind. Reading stops
// when the caller's loop does.
func (v Value) Spans() iter.Seq[Span] {
	return func(yield func(Span) bool) {
		if !v.isRaw() {
			return
		}
		var it rawIter
		it.start(v.s)
		for {
			at := it.i
			k, e, ok := it.next()
			if !ok {
				return
			}
			sp := Span{Value: rawValue(e), KeyStart: at}
			if it.object {
				sp.Key = rawKey(k)
				sp.Start = at + len(k) + skipSpaceLen(v.s[at+len(k):]) + 1
				sp.Start += skipSpaceLen(v.s[sp.Start:])
			} else {
				sp.Start = at
			}
			sp.End = sp.Start + len(e)
			if !yield(sp) {
				return
			}
		}
	}
}

// skipSpaceLen returns the number of JSON whitespace bytes s starts with.
func skipSpaceLen(s string) int { return skipSpace(s, 0) }
