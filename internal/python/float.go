package python

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gymtrace/gymtrace/ojson"
)

// ReprFloat is Python's repr() (and str()) of a float: the shortest text that round-trips, positional
// with a trailing ".0" when the decimal exponent is in [-4, 16), else scientific with a signed
// exponent of at least two digits ("1e+16", "1.5e-05"); "inf", "-inf", "nan".
func ReprFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	sign := ""
	if math.Signbit(f) {
		sign = "-"
		f = -f
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d[.ddd]e±XX
	mant, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	decpt := exp + 1 // value = 0.digits × 10^decpt
	if decpt <= -4 || decpt > 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		es := "+"
		if exp < 0 {
			es = "-"
			exp = -exp
		}
		return fmt.Sprintf("%s%se%s%02d", sign, m, es, exp)
	}
	switch {
	case decpt <= 0:
		return sign + "0." + strings.Repeat("0", -decpt) + digits
	case decpt >= len(digits):
		return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
	default:
		return sign + digits[:decpt] + "." + digits[decpt:]
	}
}

// reprNumber is Python's repr of a json.loads number (str() and json.dumps write the same): an
// integer's exact text, a float's [ReprFloat] ("1e+16", "1e-05", "100.0"). [Loads] keeps a float's
// value, not Python's text of it (the capture writes floats as orjson does, SPEC §0 D6).
func reprNumber(v ojson.Value) string {
	text, _ := v.NumberText()
	if isInt(v) {
		return text
	}
	f, _ := v.Float64()
	return ReprFloat(f)
}
