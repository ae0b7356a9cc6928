package python

import "github.com/gymtrace/gymtrace/internal/ojson"

// TypeName returns Python's type(v).__name__ for a value [Loads] returned: "NoneType", "bool",
// "int" (a number written without fraction or exponent), "float", "str", "list" or "dict".
func TypeName(v ojson.Value) string {
	switch v.Kind() {
	case ojson.KindNull:
		return "NoneType"
	case ojson.KindBool:
		return "bool"
	case ojson.KindNumber:
		if v.IsInteger() {
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
