package python

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gymtrace/gymtrace/ojson"
)

// MaxStrDigits is CPython's default limit (3.11+, sys.get_int_max_str_digits) on the number of
// decimal digits converted between an int and its text; [Int] raises beyond it as CPython does.
// [Loads] and [Str] do not apply it: SPEC §6.4 reads a longer integer as an integer.
const MaxStrDigits = 4300

// Int returns Python's int(v) for a value [Loads] returned (SPEC §1.2 attempt index): True → 1,
// False → 0, an integer → itself (exact, any size up to [MaxStrDigits] digits), a float → truncated
// toward zero ("2.7" → 2, "-0.5" → 0), a string → parsed as int(s) with base 10 does (surrounding
// whitespace, one sign, any Unicode decimal digits, single underscores between digits: " 2 " → 2,
// "1_0" → 10, "٣" → 3). Errors carry CPython's message: a string that is not an integer gives
// "invalid literal for int() with base 10: 'x'"; null, a list or a dict gives "int() argument must
// be a string, a bytes-like object or a real number, not 'NoneType'" (or 'list', 'dict'); a float
// beyond float64 gives "cannot convert float infinity to integer".
func Int(v ojson.Value) (*big.Int, error) {
	switch v.Kind() {
	case ojson.KindBool:
		if b, _ := v.AsBool(); b {
			return big.NewInt(1), nil
		}
		return big.NewInt(0), nil
	case ojson.KindString:
		s, _ := v.AsString()
		return intOfString(s)
	case ojson.KindNumber:
		text, _ := v.NumberText()
		if isInt(v) {
			return intOfIntegerText(text)
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, fmt.Errorf("invalid JSON number %q", text)
		}
		return intOfFloat(f)
	}
	return nil, fmt.Errorf("int() argument must be a string, a bytes-like object or a real number, not %s", ReprStr(TypeName(v)))
}

// intOfIntegerText converts JSON integer text (an optional '-' and digits) exactly.
func intOfIntegerText(text string) (*big.Int, error) {
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		return big.NewInt(n), nil
	}
	if digits := len(strings.TrimPrefix(text, "-")); digits > MaxStrDigits {
		return nil, errDigitLimit(digits)
	}
	n, ok := new(big.Int).SetString(text, 10)
	if !ok {
		return nil, fmt.Errorf("invalid JSON number %q", text)
	}
	return n, nil
}

// intOfFloat is int(f): truncation toward zero; NaN and the infinities raise.
func intOfFloat(f float64) (*big.Int, error) {
	switch {
	case math.IsNaN(f):
		return nil, errors.New("cannot convert float NaN to integer")
	case math.IsInf(f, 0):
		return nil, errors.New("cannot convert float infinity to integer")
	}
	n, _ := big.NewFloat(math.Trunc(f)).Int(nil)
	return n, nil
}

// intOfString is int(s) with base 10: whitespace around the number is skipped (unicode.IsSpace,
// which is int()'s set: unlike str.isspace() it excludes U+001C–U+001F); then an optional sign and
// decimal digits (any Unicode Nd digit), single underscores allowed between digits, leading zeros
// fine. More than [MaxStrDigits] digits raise.
func intOfString(s string) (*big.Int, error) {
	invalid := func() error {
		return fmt.Errorf("invalid literal for int() with base 10: %s", ReprStr(s))
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
		d, ok := decimalDigit(r)
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
		return nil, errDigitLimit(len(digits))
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

// errDigitLimit is CPython's ValueError for a conversion beyond [MaxStrDigits].
func errDigitLimit(digits int) error {
	return fmt.Errorf("exceeds the limit (%d digits) for integer string conversion: value has %d digits", MaxStrDigits, digits)
}

// decimalDigit returns the value of a Unicode decimal digit (general category Nd, which int()
// accepts in place of ASCII digits). Every Nd run in Unicode is a complete 0–9 sequence starting at
// a zero (the stability policy guarantees it), so the value is the offset within the run modulo 10.
func decimalDigit(r rune) (int, bool) {
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
