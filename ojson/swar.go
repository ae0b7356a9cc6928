package ojson

// Word-at-a-time scanning of string text (SWAR: SIMD within a register). A string's text is mostly
// bytes that need no attention — printable ASCII other than '"' and '\\' — and the parser and the
// encoder skip eight of them per step instead of one.

const (
	lsb8 = 0x0101010101010101 // 0x01 in every byte
	msb8 = 0x8080808080808080 // 0x80 in every byte
)

// plainWord reports whether all eight bytes of w are plain: >= 0x20, < 0x80, not '"' and not '\\'.
// Each test below is exact for the word as a whole (a borrow can only mark a byte after one that
// really matches), which is all a skip needs.
func plainWord(w uint64) bool {
	ctl := (w - 0x20*lsb8) &^ w    // a byte below 0x20 (or >= 0x80, caught below anyway)
	q := w ^ ('"' * lsb8)          // zero byte where w has '"'
	bs := w ^ ('\\' * lsb8)        // zero byte where w has '\\'
	quote := (q - lsb8) &^ q       // a zero byte in q
	backslash := (bs - lsb8) &^ bs // a zero byte in bs
	return (ctl|quote|backslash|w)&msb8 == 0
}

// load8 reads b[i:i+8] (a []byte or a string) as a little-endian word (the compiler makes it one
// load).
func load8[T ~[]byte | ~string](b T, i int) uint64 {
	b = b[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// skipPlain returns the first index >= i of b (a []byte or a string) where an 8-byte word
// starting there is not all plain (or where fewer than 8 bytes remain); every byte of b[i:result]
// is plain.
func skipPlain[T ~[]byte | ~string](b T, i int) int {
	for i+8 <= len(b) && plainWord(load8(b, i)) {
		i += 8
	}
	return i
}
