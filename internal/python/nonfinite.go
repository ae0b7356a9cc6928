package python

import (
	"bytes"
	"math"
	"strconv"
	"strings"

	"github.com/gymtrace/gymtrace/ojson"
)

// Python's json.dumps writes a non-finite float as the literal NaN, Infinity or -Infinity, and
// json.loads reads them back (as it reads a float literal beyond the float64 range as ±inf):
// readers of text a Python program wrote (an upstream model server's answer, the reference's
// vectors) find them with NonFiniteLiterals.

// NonFinite is a value of a JSON text that json.loads reads as a non-finite float: one of Python's
// literals, or a float literal beyond the float64 range (json.loads gives ±inf where a strict
// reader refuses it and [Loads], like orjson, gives null).
type NonFinite struct {
	At, End int    // where its text lies: b[At:End]
	Value   string // what json.loads reads: "NaN", "Infinity" or "-Infinity"
}

// NonFiniteLiterals returns the non-finite float values of b that stand outside strings, in order.
// Outside a string no JSON token starts with N or I, so every NaN, Infinity or -Infinity found
// there is a literal json.loads reads (or text no reading accepts; -NaN is none); a number with a
// fraction or an exponent is a float in Python, infinite when it overflows (an integer stays
// exact).
func NonFiniteLiterals(b []byte) []NonFinite {
	var out []NonFinite
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
		case (c == 'N' || c == 'I') && (i == 0 || b[i-1] != '-') || c == '-' && bytes.HasPrefix(b[i:], []byte("-Infinity")):
			for _, lit := range []string{"-Infinity", "Infinity", "NaN"} {
				if bytes.HasPrefix(b[i:], []byte(lit)) {
					out = append(out, NonFinite{At: i, End: i + len(lit), Value: lit})
					i += len(lit) - 1
					break
				}
			}
		case c == '-' || c >= '0' && c <= '9':
			end := i + 1
			for end < len(b) && bytes.IndexByte([]byte("0123456789+-.eE"), b[end]) >= 0 {
				end++
			}
			if num := string(b[i:end]); strings.ContainsAny(num, ".eE") && ojson.ValidNumber(num) {
				if f, _ := strconv.ParseFloat(num, 64); math.IsInf(f, 0) {
					value := "Infinity"
					if f < 0 {
						value = "-Infinity"
					}
					out = append(out, NonFinite{At: i, End: end, Value: value})
				}
			}
			i = end - 1
		}
	}
	return out
}
