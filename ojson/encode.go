package ojson

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends v to dst encoded the way orjson writes (SPEC §0 D6): compact (no spaces),
// members in order (duplicates included; a raw value of [ParseLazy] has them collapsed), numbers as
// their text, strings per [AppendString].
func (v Value) AppendJSON(dst []byte) []byte {
	if v.isRaw() {
		return appendRaw(dst, v.s)
	}
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

// AppendFloat appends f the way orjson writes a float (SPEC §0 D6; orjson calls ryu): the
// shortest round-trip digits d, n of them, with value d×10^k and p = n+k, written
//
//   - k >= 0 and p <= 16: the digits, k zeros, ".0" (100.0, 1000000000000000.0);
//   - 0 < p <= 16: the point after p digits (842.7, 1786032154.123456);
//   - -5 < p <= 0: "0.", -p zeros, the digits (0.0001, 0.00001, -0.000032);
//   - otherwise scientific: one digit, the rest after a point, "e", the exponent p-1 without "+"
//     and without padding (1e-7, 1e16, 1.5e300, 5e-324).
//
// Zero is 0.0 or -0.0; NaN and ±Inf are written as null, as orjson does. This is not Python's
// repr, which switches to exponent form earlier and pads it (1e-05, 1e+16). It is the one float
// writer for every float the capture writes itself: parsed and re-encoded values, derived
// fields, sums, times. It does not allocate beyond growing dst.
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
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64) // d[.ddd]e±XX
	var digits [20]byte                               // at most 17 significant digits
	n, i := 0, 0
	for ; e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[n] = e[i]
			n++
		}
	}
	exp := 0 // the first digit's power of ten: e is followed by a sign and at least two digits
	for _, c := range e[i+2:] {
		exp = exp*10 + int(c-'0')
	}
	if e[i+1] == '-' {
		exp = -exp
	}
	p := exp + 1
	switch {
	case p > 16 || p <= -5:
		dst = append(dst, digits[0])
		if n > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:n]...)
		}
		dst = append(dst, 'e')
		return strconv.AppendInt(dst, int64(exp), 10)
	case p <= 0:
		dst = append(dst, "0."...)
		for range -p {
			dst = append(dst, '0')
		}
		return append(dst, digits[:n]...)
	case n <= p: // k = p-n >= 0
		dst = append(dst, digits[:n]...)
		for range p - n {
			dst = append(dst, '0')
		}
		return append(dst, ".0"...)
	}
	dst = append(dst, digits[:p]...)
	dst = append(dst, '.')
	return append(dst, digits[p:n]...)
}
