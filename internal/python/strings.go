package python

import (
	"strings"
	"unicode"
)

// IsSpace reports Python's str.isspace() for one code point: Unicode White_Space plus the
// information separators U+001C–U+001F, which Python counts and Go's unicode.IsSpace does not.
func IsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// Strip returns Python's s.strip() with no argument: s without leading and trailing [IsSpace]
// code points.
func Strip(s string) string { return strings.TrimFunc(s, IsSpace) }

// Lower returns Python's s.lower() as far as comparing with ASCII words goes: Go's simple case
// mapping, except U+0130 (İ), whose full lowercase mapping is "i\u0307" (two code points), so
// that "FAİLED" does not become "failed" as it would with strings.ToLower.
func Lower(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "\u0130", "i\u0307"))
}
