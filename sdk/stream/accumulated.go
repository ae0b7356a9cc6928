package stream

import "unsafe"

// accumulated returns the text of an accumulator (a choice's content, a block's text, a tool
// call's argument pieces) as a string that shares its memory, so that building the response does
// not copy what is most of a long stream once more. Safe because accumulators are append-only: the
// bytes below their length never change, whatever is appended later.
func accumulated(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
