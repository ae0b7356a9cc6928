package python

import "github.com/gymtrace/gymtrace/ojson"

// TypeName returns Python's type(v).__name__ for a value [Loads] returned: "NoneType", "bool",
// "int" (a number written without fraction or exponent), "float", "str", "list" or "dict".
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

// Inf returns Python's float inf (-inf when negative), which JSON cannot write: a reader that
// meets a float beyond float64 (json.loads gives inf) holds it as this value, and the functions of
// this package treat it as a float.
func Inf(negative bool) ojson.Value {
	if negative {
		return ojson.Number("-inf")
	}
	return ojson.Number("inf")
}

// isInt reports whether the number v is a Python int: written without fraction or exponent, and
// not a non-finite float ([Inf], or the NaN, Infinity and -Infinity that [LoadsNonFinite] reads).
func isInt(v ojson.Value) bool {
	text, _ := v.NumberText()
	switch text {
	case "inf", "-inf", "NaN", "Infinity", "-Infinity":
		return false
	}
	return v.IsInteger()
}
