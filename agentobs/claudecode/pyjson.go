package claudecode

import (
	"slices"
	"strings"
	"unicode"

	"github.com/gymtrace/gymtrace/internal/ojson"
	"github.com/gymtrace/gymtrace/internal/pyrepr"
)

// This file holds the few Python built-ins the reference extractor applies to transcript values
// (SPEC §6.4 "Helpers"): json.dumps(v, ensure_ascii=False, sort_keys=True), str(v), its text(v)
// helper, str.strip() and str.lower(). Values come from [ojson.ParsePython], so numbers already
// carry Python's repr (ints exact, floats shortest round-trip with ".0" or an exponent).

// appendPyDumps appends json.dumps(v, ensure_ascii=False, sort_keys=True): separators ", " and
// ": ", object members sorted by key (code point order), strings escaped as Python's encoder does
// with ensure_ascii=False (only '"', '\\' and C0 controls; \b \f \n \r \t short, others \u00xx) —
// the same set orjson escapes, so [ojson.AppendString] writes them.
func appendPyDumps(dst []byte, v ojson.Value) []byte {
	switch v.Kind() {
	case ojson.KindArray:
		dst = append(dst, '[')
		for i, e := range v.Elems() {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendPyDumps(dst, e)
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
			dst = appendPyDumps(dst, m.Value)
		}
		return append(dst, '}')
	default:
		// null, true, false, numbers (Python repr text) and strings encode as orjson does.
		return v.AppendJSON(dst)
	}
}

// pyDumps returns appendPyDumps as a string.
func pyDumps(v ojson.Value) string { return string(appendPyDumps(nil, v)) }

// pyStr returns Python's str(v) for a json.loads value: a string as-is, anything else its repr
// (pyrepr.Value: True/False/None, numbers, lists and dicts in insertion order).
func pyStr(v ojson.Value) string {
	if s, ok := v.AsString(); ok {
		return s
	}
	return pyrepr.Value(v)
}

// textOf is the reference's text(v) (SPEC §6.4 Helpers): a string as-is; a list whose elements
// are all objects with "type" "text" → the concatenation of str(text or "") (an empty list gives
// ""); null (or a missing key) → ""; anything else → json.dumps(v, ensure_ascii=False,
// sort_keys=True).
func textOf(v ojson.Value, present bool) string {
	if !present {
		return ""
	}
	switch v.Kind() {
	case ojson.KindString:
		s, _ := v.AsString()
		return s
	case ojson.KindNull:
		return ""
	case ojson.KindArray:
		elems := v.Elems()
		for _, e := range elems {
			if !isTyped(e, "text") {
				return pyDumps(v)
			}
		}
		var b strings.Builder
		for _, e := range elems {
			if t, ok := e.Get("text"); ok && t.Truthy() {
				b.WriteString(pyStr(t))
			}
		}
		return b.String()
	}
	return pyDumps(v)
}

// isTyped reports whether v is an object whose "type" is the string typ.
func isTyped(v ojson.Value, typ string) bool {
	t, ok := v.Get("type")
	if !ok {
		return false
	}
	s, ok := t.AsString()
	return ok && s == typ
}

// pyIsSpace reports Python's str.isspace() for one code point: Unicode White_Space plus the
// information separators U+001C–U+001F, which Python counts and Go's unicode.IsSpace does not.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// pyStrip is Python's str.strip() with no argument.
func pyStrip(s string) string { return strings.TrimFunc(s, pyIsSpace) }

// pyLower is Python's str.lower() as far as comparing with ASCII words goes: Go's simple case
// mapping, except U+0130 (İ), whose full lowercase mapping is "i\u0307" (two code points), so
// that "FAİLED" does not become "failed" as it would with strings.ToLower.
func pyLower(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "\u0130", "i\u0307"))
}

// nonEmptyString returns v's string when v is a non-empty string.
func nonEmptyString(v ojson.Value, present bool) (string, bool) {
	if !present {
		return "", false
	}
	s, ok := v.AsString()
	return s, ok && s != ""
}

// isTrue reports whether v is the JSON literal true (Python "is True").
func isTrue(v ojson.Value, present bool) bool {
	b, ok := v.AsBool()
	return present && ok && b
}
