package pyrepr

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Str returns Python's repr() of the str s, quotes included.
//
// The quote is ' unless s holds a single quote and no double quote, then ". Backslash, the chosen
// quote, \t, \n and \r are escaped; other C0 controls and DEL become \xhh; non-ASCII is kept when
// printable (Go's unicode.IsPrint equals Python's str.isprintable for non-ASCII, checked over every
// code point up to U+31FFF; they differ only on characters Unicode 15 added, which Python 3.11's
// Unicode 14 escapes), else written as \xhh, \uhhhh or \Uhhhhhhhh. Bytes that are not UTF-8 (a
// Python str cannot hold them) are written as \xhh. Str never fails.
func Str(s string) string {
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
