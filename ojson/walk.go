package ojson

import (
	"bytes"
	"unsafe"
)

// Walker validates a JSON text like [CheckCompactString] (or compacts it like [CompactDepth]: the
// same jsontext pass) and, in that pass, shows its caller the outer levels of the document and its
// strings, so that a few facts of a large document are read without a second pass over it.
//
// Its Visitor is called for every object member and array element of a container nested at most Depth
// deep (depth 1: the members or elements of the top-level value): for a member once at its key
// (value nil) and once after its value, for an element after it. key is the member's raw key text,
// quotes and escapes included, nil for an element; value is the raw text of the whole value, as in
// the input (a container keeps its inner whitespace). Both are subslices of the input, valid during
// the call only when the input is a string's memory. Events come in document order; the events of a
// container's members come before the event of the container itself. Events may have been
// reported for a document that turns out invalid: the caller keeps what it read only when the
// walk returns no error.
//
// Suffix, when not empty, makes the walk set SawSuffix when the raw text of some string (a key or
// a value, quotes included) ends with Suffix.
//
// A Walker is for one walk at a time; its fields may be reused for the next.
type Walker struct {
	// MaxDepth is the nesting limit (as [CompactDepth]'s maxDepth); 0 means [MaxDepth].
	MaxDepth int
	// Depth is the deepest container whose members and elements the Visitor sees.
	Depth int
	// Visitor receives the members and elements; nil reports none.
	Visitor Visitor
	// Suffix is the string ending to watch for ("" watches nothing).
	Suffix string
	// SawSuffix reports, after a walk, that a string ending in Suffix was read.
	SawSuffix bool
}

// Visitor receives what a [Walker] shows of a document (see there).
type Visitor interface {
	// Visit is called with the depth of the container, the member's raw key (nil for an array
	// element) and the raw value (nil at a member's key, before its value).
	Visit(depth int, key, value []byte)
}

// Check validates src like [CheckCompactString] with the walk's events, and reports whether src is
// already compact. Errors are *SyntaxError.
func (w *Walker) Check(src []byte) (compact bool, err error) {
	w.SawSuffix = false
	_, spaced, err := compactText(w, nil, src, w.maxDepth(), true)
	return err == nil && !spaced, err
}

// CheckString is [Walker.Check] for text held in a string, read in place.
func (w *Walker) CheckString(src string) (compact bool, err error) {
	return w.Check(stringBytes(src))
}

// Compact appends src to dst with insignificant whitespace removed like [CompactDepth], with the
// walk's events. On error dst is returned unchanged with a *SyntaxError.
func (w *Walker) Compact(dst, src []byte) ([]byte, error) {
	w.SawSuffix = false
	out, _, err := compactText(w, dst, src, w.maxDepth(), false)
	return out, err
}

func (w *Walker) maxDepth() int {
	if w.MaxDepth <= 0 {
		return MaxDepth
	}
	return w.MaxDepth
}

// visits reports whether Visit sees the members and elements of a container at depth.
func (w *Walker) visits(depth int) bool {
	return w != nil && w.Visitor != nil && depth <= w.Depth
}

// sawString notes a string's raw text (quotes included). w may be nil.
func (w *Walker) sawString(raw []byte) {
	if w != nil && w.Suffix != "" && !w.SawSuffix && bytes.HasSuffix(raw, []byte(w.Suffix)) {
		w.SawSuffix = true
	}
}

// walkCompact gives w the events and string suffixes of src, a text [compactWhole] accepted (one
// strict, compact JSON value), exactly as the token-by-token walk of compactTokens would, by
// reading the validated text directly: strings are skipped to their closing quote, scalars to the
// next delimiter.
func (w *Walker) walkCompact(src []byte) {
	w.walkValue(unsafe.String(unsafe.SliceData(src), len(src)), src, 0, 0)
}

// walkValue walks the value starting at s[i] inside a container at depth (0 for the top-level
// value) and returns the index just past it; s and b are the same text as a string and as bytes.
func (w *Walker) walkValue(s string, b []byte, i, depth int) int {
	switch s[i] {
	case '"':
		end := stringEnd(s, i)
		w.sawString(b[i:end])
		return end
	case '{', '[':
		object, inner := s[i] == '{', depth+1
		i++
		if s[i] == '}' || s[i] == ']' {
			return i + 1
		}
		for {
			var key []byte
			if object {
				end := stringEnd(s, i)
				key = b[i:end]
				w.sawString(key)
				if w.visits(inner) {
					w.Visitor.Visit(inner, key, nil)
				}
				i = end + 1 // past the ':'
			}
			start := i
			i = w.walkValue(s, b, i, inner)
			if w.visits(inner) {
				w.Visitor.Visit(inner, key, b[start:i])
			}
			if s[i] != ',' {
				return i + 1 // past the '}' or ']'
			}
			i++
		}
	}
	for i < len(s) && s[i] != ',' && s[i] != '}' && s[i] != ']' {
		i++
	}
	return i
}
