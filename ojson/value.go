package ojson

import (
	"slices"
	"strconv"
)

// Kind is the JSON type of a [Value].
type Kind uint8

// The JSON kinds. The zero [Value] is KindNull.
const (
	KindNull Kind = iota
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

// String returns the kind's lowercase name ("null", "bool", "number", "string", "array",
// "object").
func (k Kind) String() string {
	switch k {
	case KindNull:
		return "null"
	case KindBool:
		return "bool"
	case KindNumber:
		return "number"
	case KindString:
		return "string"
	case KindArray:
		return "array"
	case KindObject:
		return "object"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one JSON value. Objects keep their members in order, duplicates included; numbers keep
// their text. The zero Value is null.
//
// A Value shares its arrays and members with copies of it (like a slice); use [Value.Clone] before
// mutating a value that others hold.
type Value struct {
	kind Kind
	b    bool
	s    string // string value, or number text
	arr  []Value
	obj  []Member
}

// Member is one object member: a key and its value.
type Member struct {
	Key   string
	Value Value
}

// Null returns the JSON null.
func Null() Value { return Value{} }

// Bool returns a JSON boolean.
func Bool(b bool) Value { return Value{kind: KindBool, b: b} }

// String returns a JSON string holding s. Invalid UTF-8 in s is written as U+FFFD by
// [Value.AppendJSON].
func String(s string) Value { return Value{kind: KindString, s: s} }

// Number returns a JSON number written as text. The text is not checked: it must be an RFC 8259
// number (use [ValidNumber] when it comes from outside).
func Number(text string) Value { return Value{kind: KindNumber, s: text} }

// Int returns a JSON integer.
func Int(i int64) Value { return Value{kind: KindNumber, s: strconv.FormatInt(i, 10)} }

// Float returns a JSON number holding f written as [AppendFloat] does (orjson, SPEC §0 D6). A NaN
// or infinite f gives null, as orjson writes it.
func Float(f float64) Value {
	b := AppendFloat(nil, f)
	if string(b) == "null" {
		return Null()
	}
	return Value{kind: KindNumber, s: string(b)}
}

// Array returns a JSON array of vs (the slice is used, not copied).
func Array(vs ...Value) Value {
	if vs == nil {
		vs = []Value{}
	}
	return Value{kind: KindArray, arr: vs}
}

// Object returns a JSON object of ms in order (the slice is used, not copied). Duplicate keys are
// kept; [Value.Get] finds the last.
func Object(ms ...Member) Value {
	if ms == nil {
		ms = []Member{}
	}
	return Value{kind: KindObject, obj: ms}
}

// Kind returns v's JSON type.
func (v Value) Kind() Kind { return v.kind }

// IsNull reports whether v is null.
func (v Value) IsNull() bool { return v.kind == KindNull }

// AsBool returns v's boolean and whether v is a boolean.
func (v Value) AsBool() (bool, bool) { return v.b, v.kind == KindBool }

// AsString returns v's string and whether v is a string.
func (v Value) AsString() (string, bool) {
	if v.kind != KindString {
		return "", false
	}
	return v.s, true
}

// NumberText returns v's number text as written and whether v is a number.
func (v Value) NumberText() (string, bool) {
	if v.kind != KindNumber {
		return "", false
	}
	return v.s, true
}

// IsInteger reports whether v is a number written without fraction or exponent (the reference's
// int/float distinction, vectors/README.md).
func (v Value) IsInteger() bool {
	return v.kind == KindNumber && isIntegerText(v.s)
}

// Int64 returns v as an int64 when v is a number written as an integer (no '.', no exponent) that
// fits in int64; ok is false otherwise.
func (v Value) Int64() (int64, bool) {
	if !v.IsInteger() {
		return 0, false
	}
	i, err := strconv.ParseInt(v.s, 10, 64)
	if err != nil {
		return 0, false
	}
	return i, true
}

// Float64 returns v as the nearest float64 when v is a number (integer or not); ok is false for
// other kinds and for numbers that overflow float64.
func (v Value) Float64() (float64, bool) {
	if v.kind != KindNumber {
		return 0, false
	}
	f, err := strconv.ParseFloat(v.s, 64)
	if err != nil {
		return 0, false
	}
	return f, true
}

// Elems returns v's elements when v is an array, else nil. The slice is v's own, or for a raw
// array ([ParseLazy]) built anew: iterate [Value.Elements] instead to build none.
func (v Value) Elems() []Value {
	if v.kind != KindArray {
		return nil
	}
	if v.isRaw() {
		return v.shallow().arr
	}
	return v.arr
}

// Members returns v's members in order when v is an object, else nil. The slice is v's own, or for
// a raw object ([ParseLazy]) built anew (duplicates collapsed).
func (v Value) Members() []Member {
	if v.kind != KindObject {
		return nil
	}
	if v.isRaw() {
		return v.shallow().obj
	}
	return v.obj
}

// Len returns the number of elements (array), members (object) or bytes (string); 0 otherwise.
// For a raw array or object ([ParseLazy]) it builds the outer level ([Value.IsEmpty] does not).
func (v Value) Len() int {
	if v.isRaw() {
		v = v.shallow()
	}
	switch v.kind {
	case KindArray:
		return len(v.arr)
	case KindObject:
		return len(v.obj)
	case KindString:
		return len(v.s)
	}
	return 0
}

// Get returns the value of the LAST member named key (Python json.loads semantics for duplicate
// keys) and whether there is one. It returns false when v is not an object.
func (v Value) Get(key string) (Value, bool) {
	if v.kind != KindObject {
		return Value{}, false
	}
	if v.isRaw() {
		return v.getRaw(key)
	}
	for i := len(v.obj) - 1; i >= 0; i-- {
		if v.obj[i].Key == key {
			return v.obj[i].Value, true
		}
	}
	return Value{}, false
}

// Pick returns an object of the members of object v named one of keys, the last of each name, in
// the order of keys; a v that is not an object gives an empty object. [Value.Get] of a picked key
// gives what it gives on v. It reads a raw object ([ParseLazy]) once where each Get would read it
// again, building only the picked values.
func (v Value) Pick(keys ...string) Value {
	found := make([]Value, len(keys))
	seen := make([]bool, len(keys))
	switch {
	case v.kind != KindObject:
	case v.isRaw():
		var it rawIter
		it.start(v.s)
		for k, e, ok := it.next(); ok; k, e, ok = it.next() {
			if i := slices.Index(keys, rawKey(k)); i >= 0 {
				found[i], seen[i] = rawValue(e), true
			}
		}
	default:
		for _, m := range v.obj {
			if i := slices.Index(keys, m.Key); i >= 0 {
				found[i], seen[i] = m.Value, true
			}
		}
	}
	out := make([]Member, 0, len(keys))
	for i, key := range keys {
		if seen[i] {
			out = append(out, Member{Key: key, Value: found[i]})
		}
	}
	return Object(out...)
}

// Set replaces the value of the last member named key in place, or appends the member when there
// is none. It panics when v is not an object (a programming error, like writing to a nil map).
func (v *Value) Set(key string, val Value) {
	if v.kind != KindObject {
		panic("ojson: Set on a " + v.kind.String() + " value")
	}
	if v.isRaw() {
		*v = v.shallow()
	}
	for i := len(v.obj) - 1; i >= 0; i-- {
		if v.obj[i].Key == key {
			v.obj[i].Value = val
			return
		}
	}
	v.obj = append(v.obj, Member{Key: key, Value: val})
}

// Clone returns a deep copy of v (a raw array or object, [ParseLazy], is never modified: it is
// returned as it is).
func (v Value) Clone() Value {
	if v.isRaw() {
		return v
	}
	switch v.kind {
	case KindArray:
		arr := make([]Value, len(v.arr))
		for i, e := range v.arr {
			arr[i] = e.Clone()
		}
		v.arr = arr
	case KindObject:
		obj := make([]Member, len(v.obj))
		for i, m := range v.obj {
			obj[i] = Member{Key: m.Key, Value: m.Value.Clone()}
		}
		v.obj = obj
	}
	return v
}

// Equal reports whether v and w are the same JSON value: same kinds, same strings, same number
// TEXT (1.0 and 1 differ), same elements and the same members in the same order.
func (v Value) Equal(w Value) bool {
	if v.isRaw() {
		v = v.shallow()
	}
	if w.isRaw() {
		w = w.shallow()
	}
	if v.kind != w.kind {
		return false
	}
	switch v.kind {
	case KindNull:
		return true
	case KindBool:
		return v.b == w.b
	case KindNumber, KindString:
		return v.s == w.s
	case KindArray:
		if len(v.arr) != len(w.arr) {
			return false
		}
		for i := range v.arr {
			if !v.arr[i].Equal(w.arr[i]) {
				return false
			}
		}
		return true
	case KindObject:
		if len(v.obj) != len(w.obj) {
			return false
		}
		for i := range v.obj {
			if v.obj[i].Key != w.obj[i].Key || !v.obj[i].Value.Equal(w.obj[i].Value) {
				return false
			}
		}
		return true
	}
	return false
}

// String returns v encoded by [Value.AppendJSON], for debugging and tests.
func (v Value) String() string { return string(v.AppendJSON(nil)) }

// isIntegerText reports whether a valid number text has no fraction and no exponent.
func isIntegerText(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '.', 'e', 'E':
			return false
		}
	}
	return s != ""
}

// CollapseDuplicates returns v with duplicate object keys collapsed the way a Python dict built
// from them would be (json.loads, orjson.loads): each key keeps the position of its first
// occurrence and the value of its last, at every depth. v itself is not modified; parts without
// duplicates are shared, not copied.
func (v Value) CollapseDuplicates() Value {
	if v.isRaw() {
		return v // read collapsed (ParseLazy)
	}
	switch v.kind {
	case KindArray:
		var out []Value
		for i, e := range v.arr {
			c := e.CollapseDuplicates()
			if out == nil && !sameBacking(c, e) {
				out = append(make([]Value, 0, len(v.arr)), v.arr[:i]...)
			}
			if out != nil {
				out = append(out, c)
			}
		}
		if out != nil {
			v.arr = out
		}
		return v
	case KindObject:
		dup := hasDuplicateKeys(v.obj)
		var out []Member
		if dup {
			index := make(map[string]int, len(v.obj))
			out = make([]Member, 0, len(v.obj))
			for _, m := range v.obj {
				if i, ok := index[m.Key]; ok {
					out[i].Value = m.Value
					continue
				}
				index[m.Key] = len(out)
				out = append(out, m)
			}
			for i := range out {
				out[i].Value = out[i].Value.CollapseDuplicates()
			}
			v.obj = out
			return v
		}
		for i, m := range v.obj {
			c := m.Value.CollapseDuplicates()
			if out == nil && !sameBacking(c, m.Value) {
				out = append(make([]Member, 0, len(v.obj)), v.obj[:i]...)
			}
			if out != nil {
				out = append(out, Member{Key: m.Key, Value: c})
			}
		}
		if out != nil {
			v.obj = out
		}
		return v
	}
	return v
}

// hasDuplicateKeys reports whether two members share a key (pairwise for small objects, which
// are the common case, to avoid a map allocation).
func hasDuplicateKeys(ms []Member) bool {
	if len(ms) <= 16 {
		for i := 1; i < len(ms); i++ {
			for j := 0; j < i; j++ {
				if ms[i].Key == ms[j].Key {
					return true
				}
			}
		}
		return false
	}
	seen := make(map[string]struct{}, len(ms))
	for _, m := range ms {
		if _, ok := seen[m.Key]; ok {
			return true
		}
		seen[m.Key] = struct{}{}
	}
	return false
}

// sameBacking reports whether CollapseDuplicates returned its input unchanged (same slices).
func sameBacking(a, b Value) bool {
	switch a.kind {
	case KindArray:
		return len(a.arr) == len(b.arr) && (len(a.arr) == 0 || &a.arr[0] == &b.arr[0])
	case KindObject:
		return len(a.obj) == len(b.obj) && (len(a.obj) == 0 || &a.obj[0] == &b.obj[0])
	}
	return true
}

// SizeHint estimates the length in bytes of v's JSON text ([Value.AppendJSON]) from its string,
// key and number lengths, plus an eighth for escapes, without scanning any text: a capacity that
// lets a large value be written into one buffer instead of one grown step by step. For a raw
// array or object ([ParseLazy]) it is the length of its text, which its encoding never exceeds.
func (v Value) SizeHint() int {
	if v.isRaw() {
		return len(v.s) // its encoding is never longer than its text
	}
	n := v.sizeHint()
	return n + n/8
}

func (v Value) sizeHint() int {
	if v.isRaw() {
		return len(v.s)
	}
	switch v.kind {
	case KindString:
		return len(v.s) + 2
	case KindArray:
		n := 2
		for _, e := range v.arr {
			n += e.sizeHint() + 1
		}
		return n
	case KindObject:
		n := 2
		for _, m := range v.obj {
			n += len(m.Key) + 4 + m.Value.sizeHint()
		}
		return n
	}
	return len(v.s) + 5 // a number's text, or true/false/null
}
