package python

import (
	"strconv"

	"github.com/gymtrace/gymtrace/ojson"
)

// Truthy returns Python's bool(v) for a value [Loads] returned: None, False, 0, 0.0, "", [] and {}
// are false; everything else is true (the string "false" included, SPEC §1.4).
func Truthy(v ojson.Value) bool {
	switch v.Kind() {
	case ojson.KindBool:
		b, _ := v.AsBool()
		return b
	case ojson.KindNumber:
		text, _ := v.NumberText()
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			// Out of float64 range: an enormous integer or an overflowing float, never zero.
			return true
		}
		return f != 0
	case ojson.KindString, ojson.KindArray, ojson.KindObject:
		return !v.IsEmpty()
	}
	return false
}
