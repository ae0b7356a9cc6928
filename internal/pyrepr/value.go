package pyrepr

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gymtrace/gymtrace/internal/ojson"
)

// The functions below give Python's str(), repr(), int() and type names of a value as
// json.loads returns it, for values read with [ojson.ParsePython] (numbers already in Python's
// repr: integers exact, floats shortest round-trip with ".0" or an exponent). The reference
// builds rollout ids with them (SPEC §1.2); the texts match CPython 3.11.

// MaxStrDigits is CPython's default limit (3.11+) on the decimal digits converted between an int
// and its text; longer conversions raise ValueError.
const MaxStrDigits = 4300

// Value returns Python's repr(v): None, True, False, numbers as their text, strings as [Str],
// lists and dicts with ", " and ": " separators in insertion order.
func Value(v ojson.Value) string {
	var b strings.Builder
	writeValue(&b, v)
	return b.String()
}

func writeValue(b *strings.Builder, v ojson.Value) {
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
		text, _ := v.NumberText()
		b.WriteString(text)
	case ojson.KindString:
		s, _ := v.AsString()
		b.WriteString(Str(s))
	case ojson.KindArray:
		b.WriteByte('[')
		for i, e := range v.Elems() {
			if i > 0 {
				b.WriteString(", ")
			}
			writeValue(b, e)
		}
		b.WriteByte(']')
	case ojson.KindObject:
		b.WriteByte('{')
		for i, m := range v.Members() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(Str(m.Key))
			b.WriteString(": ")
			writeValue(b, m.Value)
		}
		b.WriteByte('}')
	}
}

// StrOf returns Python's str(v): a string is itself, anything else its repr ([Value]). An integer
// of more than [MaxStrDigits] digits is an error, as in CPython.
func StrOf(v ojson.Value) (string, error) {
	if s, ok := v.AsString(); ok {
		return s, nil
	}
	if err := checkDigits(v); err != nil {
		return "", err
	}
	return Value(v), nil
}

// TypeName returns Python's type(v).__name__: NoneType, bool, int, float, str, list or dict.
func TypeName(v ojson.Value) string {
	switch v.Kind() {
	case ojson.KindNull:
		return "NoneType"
	case ojson.KindBool:
		return "bool"
	case ojson.KindNumber:
		if isInt(v) {
			return "int"
		}
		return "float"
	case ojson.KindString:
		return "str"
	case ojson.KindArray:
		return "list"
	}
	return "dict"
}

// Int returns Python's int(v): a bool is 0 or 1, an int itself, a float truncated toward zero,
// a string parsed as [ParseInt] does; null, lists and dicts raise TypeError. The error texts are
// Python's.
func Int(v ojson.Value) (*big.Int, error) {
	switch v.Kind() {
	case ojson.KindBool:
		if t, _ := v.AsBool(); t {
			return big.NewInt(1), nil
		}
		return big.NewInt(0), nil
	case ojson.KindString:
		s, _ := v.AsString()
		return ParseInt(s)
	case ojson.KindNumber:
		if err := checkDigits(v); err != nil {
			return nil, err
		}
		text, _ := v.NumberText()
		if isInt(v) {
			n, ok := new(big.Int).SetString(text, 10)
			if !ok {
				return nil, fmt.Errorf("invalid number %q", text)
			}
			return n, nil
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, fmt.Errorf("invalid number %q: %w", text, err)
		}
		return intFromFloat(f)
	}
	return nil, fmt.Errorf("int() argument must be a string, a bytes-like object or a real number, not %s", Str(TypeName(v)))
}

// checkDigits refuses an integer longer than MaxStrDigits digits.
func checkDigits(v ojson.Value) error {
	if !isInt(v) {
		return nil
	}
	text, _ := v.NumberText()
	if n := len(strings.TrimPrefix(text, "-")); n > MaxStrDigits {
		return fmt.Errorf("exceeds the limit (%d digits) for integer string conversion: value has %d digits", MaxStrDigits, n)
	}
	return nil
}

// isInt reports whether the number v is a Python int. A reader holds Python's float inf, which
// JSON cannot write, as the number text "inf" or "-inf".
func isInt(v ojson.Value) bool {
	text, _ := v.NumberText()
	return v.IsInteger() && text != "inf" && text != "-inf"
}

func intFromFloat(f float64) (*big.Int, error) {
	switch {
	case math.IsNaN(f):
		return nil, errors.New("cannot convert float NaN to integer")
	case math.IsInf(f, 0):
		return nil, errors.New("cannot convert float infinity to integer")
	}
	i, _ := big.NewFloat(math.Trunc(f)).Int(nil)
	return i, nil
}

// ParseInt is Python's int(s) with base 10: surrounding whitespace (unicode.IsSpace, which is
// exactly what int() skips; not the separators U+001C–U+001F that str.isspace() accepts) is
// ignored; then an optional sign and decimal digits (any Unicode Nd digit), with single
// underscores allowed between digits; leading zeros are fine. More than [MaxStrDigits] digits
// raise, as CPython's default limit does. The error text is Python's.
func ParseInt(s string) (*big.Int, error) {
	invalid := func() error {
		return fmt.Errorf("invalid literal for int() with base 10: %s", Str(s))
	}
	t := strings.TrimFunc(s, unicode.IsSpace)
	var digits []byte
	neg := false
	i := 0
	if i < len(t) && (t[i] == '+' || t[i] == '-') {
		neg = t[i] == '-'
		i++
	}
	prevUnderscore := false
	for i < len(t) {
		r, size := utf8.DecodeRuneInString(t[i:])
		i += size
		if r == '_' {
			if len(digits) == 0 || prevUnderscore {
				return nil, invalid()
			}
			prevUnderscore = true
			continue
		}
		d, ok := decimal(r)
		if !ok {
			return nil, invalid()
		}
		digits = append(digits, byte('0'+d))
		prevUnderscore = false
	}
	if len(digits) == 0 || prevUnderscore {
		return nil, invalid()
	}
	if len(digits) > MaxStrDigits {
		return nil, fmt.Errorf("exceeds the limit (%d digits) for integer string conversion: value has %d digits", MaxStrDigits, len(digits))
	}
	n, ok := new(big.Int).SetString(string(digits), 10)
	if !ok {
		return nil, invalid()
	}
	if neg {
		n.Neg(n)
	}
	return n, nil
}

// decimal returns the value of a Unicode decimal digit (general category Nd, which int() accepts
// in place of ASCII digits). Every Nd run in Unicode is a complete 0–9 sequence starting at a zero
// (the stability policy guarantees it), so the value is the offset within the run modulo 10.
func decimal(r rune) (int, bool) {
	if r >= '0' && r <= '9' {
		return int(r - '0'), true
	}
	if r < 0x80 || !unicode.Is(unicode.Nd, r) {
		return 0, false
	}
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10, true
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10, true
		}
	}
	return 0, false
}
