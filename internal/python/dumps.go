package python

import (
	"slices"
	"strings"

	"github.com/gymtrace/gymtrace/ojson"
)

// Dumps returns json.dumps(v, ensure_ascii=False, sort_keys=True) for a value [Loads] returned:
// separators ", " and ": ", object members sorted by key in code point order, numbers as Python
// writes them (an integer's text, a float's repr), strings escaped as Python's encoder does with
// ensure_ascii=False (only '"', '\\' and C0 controls; \b \f \n \r \t short, the others \u00xx).
func Dumps(v ojson.Value) string { return string(appendDumps(nil, v)) }

// appendDumps appends [Dumps] of v to dst.
func appendDumps(dst []byte, v ojson.Value) []byte {
	switch v.Kind() {
	case ojson.KindArray:
		dst = append(dst, '[')
		for i, e := range v.Elems() {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendDumps(dst, e)
		}
		return append(dst, ']')
	case ojson.KindObject:
		members := slices.Clone(v.Members())
		slices.SortStableFunc(members, func(a, b ojson.Member) int { return strings.Compare(a.Key, b.Key) })
		dst = append(dst, '{')
		for i, m := range members {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = ojson.AppendString(dst, m.Key)
			dst = append(dst, ": "...)
			dst = appendDumps(dst, m.Value)
		}
		return append(dst, '}')
	case ojson.KindNumber:
		return append(dst, reprNumber(v)...)
	default:
		// null, true, false are their text; Python escapes strings exactly as orjson does, which
		// is how ojson writes them.
		return v.AppendJSON(dst)
	}
}
