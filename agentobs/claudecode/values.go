package claudecode

import (
	"math"
	"strings"
	"time"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// This file reads transcript values as the reference's helpers do (SPEC §6.4 "Helpers"). Values
// come from [python.Loads]; the Python built-ins they apply are internal/python's.

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
				return python.Dumps(v)
			}
		}
		var b strings.Builder
		for _, e := range elems {
			if t, ok := e.Get("text"); ok && python.Truthy(t) {
				b.WriteString(python.Str(t))
			}
		}
		return b.String()
	}
	return python.Dumps(v)
}

// timestampOf is the reference's ts(v) (SPEC §6.4 Helpers): a JSON number (not a boolean) as a
// float; a string parsed by Python's datetime.fromisoformat after replacing every "Z" with
// "+00:00", then .timestamp(); anything else, an invalid string or a non-finite result → nil.
// Naive date-times (no UTC offset) are read in loc, as Python reads them in the machine's local
// time zone (SPEC §9 #14).
func timestampOf(v ojson.Value, present bool, loc *time.Location) *float64 {
	if !present {
		return nil
	}
	switch v.Kind() {
	case ojson.KindNumber:
		// An integer too large for float64 overflows to ±Inf, which is not finite: nil, as the
		// SPEC's "non-finite → null" says (the reference's float() would raise OverflowError).
		f, ok := v.Float64()
		if !ok || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil
		}
		return &f
	case ojson.KindString:
		s, _ := v.AsString()
		f, ok := python.ISOTimestamp(strings.ReplaceAll(s, "Z", "+00:00"), loc)
		if !ok {
			return nil
		}
		return &f
	}
	return nil
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
