package proxy

import "github.com/gymtrace/gymtrace/ojson"

// oneSample reports whether n, the "n" member of a token-captured request as json.loads reads it
// (absent: present false), asks for one sampled answer. The reference's adapter fails a call when
// `body_dict.get("n") not in (None, 1)` (docs/TOKENS.md §1.5 step 6, [VL-09]); gymtrace refuses
// it before forwarding (T3). Python's `in` compares with ==, so exactly the values equal to 1 or
// None pass:
//
//   - absent or null (None);
//   - the integer 1 (a JSON number without fraction or exponent is a Python int; 2, 0, -1 and
//     every integer beyond 64 bits are refused);
//   - a float equal to 1.0 (any other number is a float, read to the nearest double as json.loads
//     reads it: 1.0, 1e0, 10e-1 and 1.00000000000000001 pass; 1.5, 0.999, NaN and an overflow to
//     infinity do not);
//   - true (bool is a subclass of int and True == 1; false is 0 and refused).
//
// Strings ("1"), lists and objects never equal 1 and are refused.
func oneSample(n ojson.Value, present bool) bool {
	if !present {
		return true
	}
	switch n.Kind() {
	case ojson.KindNull:
		return true
	case ojson.KindBool:
		b, _ := n.AsBool()
		return b
	case ojson.KindNumber:
		if n.IsInteger() {
			t, _ := n.NumberText()
			return t == "1"
		}
		f, ok := n.Float64()
		return ok && f == 1
	}
	return false
}
