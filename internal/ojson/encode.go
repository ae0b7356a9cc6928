package ojson

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends v to dst encoded the way orjson writes (SPEC §0 D6): compact (no spaces),
// members in order (duplicates included), numbers as their text, strings per [AppendString].
func (v Value) AppendJSON(dst []byte) []byte {
	switch v.kind {
	case KindNull:
		return append(dst, "null"...)
	case KindBool:
		if v.b {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case KindNumber:
		return append(dst, v.s...)
	case KindString:
		return AppendString(dst, v.s)
	case KindArray:
		dst = append(dst, '[')
		for i, e := range v.arr {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = e.AppendJSON(dst)
		}
		return append(dst, ']')
	case KindObject:
		dst = append(dst, '{')
		for i, m := range v.obj {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, m.Key)
			dst = append(dst, ':')
			dst = m.Value.AppendJSON(dst)
		}
		return append(dst, '}')
	}
	return append(dst, "null"...)
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string the way orjson writes it: only '"', '\\' and control
// characters below U+0020 are escaped (\b \f \n \r \t in short form, others as \u00XX with
// lowercase hex); nothing is HTML-escaped; non-ASCII, DEL and U+2028/U+2029 are written raw.
// Ill-formed UTF-8 is written as U+FFFD per maximal subpart (see [DecodeUTF8]).
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = AppendStringBody(dst, s)
	return append(dst, '"')
}

// AppendStringBody is [AppendString] without the surrounding quotes, for writing one long string
// in windows: the bodies of consecutive pieces of s form the body of s as long as no piece boundary
// splits a UTF-8 sequence (cut s with [CutUTF8]).
func AppendStringBody(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		if i = skipPlain(s, i); i >= len(s) {
			break
		}
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i += invalidLen([]byte(s[i:min(len(s), i+4)]))
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		i++
		start = i
	}
	return append(dst, s[start:]...)
}

// CutUTF8 returns an n <= max such that s[:n] does not end inside a UTF-8 sequence that continues
// in s[n:] (it backs off over at most three continuation bytes; for valid UTF-8 it is the largest
// such n); s[:n] and s[n:] then encode like s does. It returns len(s) when max >= len(s), 0 when
// max <= 0.
func CutUTF8(s string, max int) int {
	if max >= len(s) {
		return len(s)
	}
	if max <= 0 {
		return 0
	}
	n := max
	for k := 0; k < utf8.UTFMax-1 && n > 0 && !utf8.RuneStart(s[n]); k++ {
		n--
	}
	if !utf8.RuneStart(s[n]) {
		return max // not a sequence continuing past max: ill-formed bytes, each replaced alone
	}
	return n
}

// AppendFloat appends f the way Python's repr (and orjson, within 1e-4 <= |f| < 1e16) writes a
// float: the shortest text that round-trips; integral values keep ".0" (100.0); exponent form
// outside 1e-4 <= |f| < 1e16, with a sign and at least two exponent digits (1e+16, 1e-05,
// 1.5e-07). NaN and ±Inf are written as null, as orjson does.
func AppendFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64) // [-]d[.ddd]e±XX
	neg := e[0] == '-'
	if neg {
		e = e[1:]
		dst = append(dst, '-')
	}
	// Split mantissa digits and exponent.
	var digits [24]byte
	nd := 0
	k := 0
	for ; k < len(e) && e[k] != 'e'; k++ {
		if e[k] != '.' {
			digits[nd] = e[k]
			nd++
		}
	}
	exp, _ := strconv.Atoi(string(e[k+1:])) // decimal exponent of the first digit
	if exp >= -4 && exp < 16 {
		if exp < 0 {
			dst = append(dst, '0', '.')
			for z := 0; z < -exp-1; z++ {
				dst = append(dst, '0')
			}
			return append(dst, digits[:nd]...)
		}
		// exp+1 digits before the point.
		if nd <= exp+1 {
			dst = append(dst, digits[:nd]...)
			for z := nd; z < exp+1; z++ {
				dst = append(dst, '0')
			}
			return append(dst, '.', '0')
		}
		dst = append(dst, digits[:exp+1]...)
		dst = append(dst, '.')
		return append(dst, digits[exp+1:nd]...)
	}
	dst = append(dst, digits[0])
	if nd > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:nd]...)
	}
	dst = append(dst, 'e')
	if exp < 0 {
		dst = append(dst, '-')
		exp = -exp
	} else {
		dst = append(dst, '+')
	}
	if exp < 10 {
		dst = append(dst, '0')
	}
	return strconv.AppendInt(dst, int64(exp), 10)
}
