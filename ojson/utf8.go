package ojson

import (
	"unicode/utf8"
)

// DecodeUTF8 returns b as a string with every ill-formed UTF-8 sequence replaced by U+FFFD, one
// replacement per maximal subpart (Unicode §3.9 "U+FFFD substitution of maximal subparts"), which
// is what Python's bytes.decode("utf-8", "replace") and the WHATWG decoder do. The capture uses it
// for request_raw/response_raw and SSE text (SPEC §3.1, §4.3). Valid input is returned unchanged.
func DecodeUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return string(AppendValidUTF8(make([]byte, 0, len(b)+8), b))
}

// AppendValidUTF8 appends b to dst with ill-formed sequences replaced as [DecodeUTF8] does.
func AppendValidUTF8(dst, b []byte) []byte {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, "\uFFFD"...)
			i += invalidLen(b[i:])
			continue
		}
		dst = append(dst, b[i:i+size]...)
		i += size
	}
	return dst
}

// invalidLen returns the length of the maximal subpart at the start of b, which starts with an
// ill-formed sequence: the lead byte plus every following byte that still fits a well-formed
// sequence (at least 1).
func invalidLen(b []byte) int {
	c := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF) // allowed range of the second byte
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1 // 0x80–0xC1, 0xF5–0xFF: never a lead byte
	}
	n := 1
	for k := 0; k < need && n < len(b); k++ {
		x := b[n]
		if k == 0 {
			if x < lo || x > hi {
				return n
			}
		} else if x < 0x80 || x > 0xBF {
			return n
		}
		n++
	}
	return n
}
