package python

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gymtrace/gymtrace/ojson"
)

// ReprStr returns Python's repr() of the str s, quotes included.
//
// The quote is ' unless s holds a single quote and no double quote, then ". Backslash, the chosen
// quote, \t, \n and \r are escaped; other C0 controls and DEL become \xhh; non-ASCII is kept when
// printable (Go's unicode.IsPrint equals Python's str.isprintable for non-ASCII, checked over every
// code point up to U+31FFF; they differ only on characters Unicode 15 added, which Python 3.11's
// Unicode 14 escapes), else written as \xhh, \uhhhh or \Uhhhhhhhh. Bytes that are not UTF-8 (a
// Python str cannot hold them) are written as \xhh. ReprStr never fails.
func ReprStr(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(quote)
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(`\x`)
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xf])
			i++
			continue
		}
		i += size
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x7f:
			b.WriteRune(r)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

// Repr returns Python's repr(v) for a value [Loads] returned: None, True, False, numbers as their
// text, strings through [ReprStr], lists as "[a, b]" and dicts as "{'k': v}" in member order.
func Repr(v ojson.Value) string {
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

// Str returns Python's str(v) for a value [Loads] returned: a string is itself, anything else its
// [Repr].
func Str(v ojson.Value) string {
	if s, ok := v.AsString(); ok {
		return s
	}
	return Repr(v)
}

// writeRepr writes [Repr] of v to b.
func writeRepr(b *strings.Builder, v ojson.Value) {
	switch v.Kind() {
	case ojson.KindNull:
		b.WriteString("None")
	case ojson.KindBool:
		if t, _ := v.AsBool(); t {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case ojson.KindNumber:
		b.WriteString(reprNumber(v))
	case ojson.KindString:
		s, _ := v.AsString()
		b.WriteString(ReprStr(s))
	case ojson.KindArray:
		b.WriteByte('[')
		for i, e := range v.Elems() {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e)
		}
		b.WriteByte(']')
	case ojson.KindObject:
		b.WriteByte('{')
		for i, m := range v.Members() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(ReprStr(m.Key))
			b.WriteString(": ")
			writeRepr(b, m.Value)
		}
		b.WriteByte('}')
	}
}
