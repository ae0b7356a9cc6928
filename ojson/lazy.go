package ojson

import (
	"hash/maphash"
	"iter"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// ParseLazy reads data like [Parse] followed by [Value.CollapseDuplicates], but shares data's
// memory and builds no tree: data is validated by [Valid]'s pass, and every array and object in it
// stays its raw text until a method reads it. [Value.Get] and [Value.Elements] scan the text and
// build only the value they return (a scalar, or again a raw array or object), [Value.AppendJSON] re-encodes
// the text in one pass, and [Value.EncodedText] hands out the text itself when it already is the
// encoding. So reading a few fields of a large document allocates only those fields' decoded
// escaped strings, whatever the document holds (#14 finding 2: a tree costs 72 bytes per value,
// 36 times a `0,`). [Value.Elems], [Value.Members] and [Value.Len] of a raw object or array build
// its outer level (one [Value] per element or member, each again raw). Duplicate keys read as a
// Python dict holds them: the last value at the first position.
//
// The result shares data's memory: the caller must never modify data afterwards. Errors are
// *SyntaxError, as [Valid] finds them.
func ParseLazy(data []byte) (Value, error) {
	if _, _, err := compactText(nil, nil, data, MaxDepth, true); err != nil {
		return Value{}, err
	}
	s := unsafe.String(unsafe.SliceData(data), len(data))
	i := skipSpace(s, 0)
	return rawValue(s[i:valueEnd(s, i)]), nil
}

// A raw array or object (ParseLazy) is a Value of that kind with b set and s holding its text,
// which is validated strict JSON starting with '[' or '{' (a built one has b false and s empty).

// isRaw reports whether v is an array or object still held as text.
func (v Value) isRaw() bool { return v.b && (v.kind == KindArray || v.kind == KindObject) }

// rawValue returns the value of the validated JSON text s (no surrounding whitespace): an array or
// object as raw text, a scalar decoded (a string without escapes shares s's memory).
func rawValue(s string) Value {
	switch s[0] {
	case '{':
		return Value{kind: KindObject, b: true, s: s}
	case '[':
		return Value{kind: KindArray, b: true, s: s}
	}
	p := parser{data: stringBytes(s), src: s, shared: true, maxDepth: MaxDepth}
	v, _ := p.value() // validated by ParseLazy
	return v
}

// shallow returns raw v with its outer level built (elements or collapsed members, each raw
// again), for the methods that need a slice.
func (v Value) shallow() Value {
	var it rawIter
	it.start(v.s)
	if v.kind == KindArray {
		var vs []Value
		for _, e, ok := it.next(); ok; _, e, ok = it.next() {
			vs = append(vs, rawValue(e))
		}
		return Array(vs...)
	}
	var ms []Member
	for k, e, ok := it.next(); ok; k, e, ok = it.next() {
		ms = append(ms, Member{Key: rawKey(k), Value: rawValue(e)})
	}
	return Object(ms...).CollapseDuplicates()
}

// getRaw is [Value.Get] for a raw object: the last member named key.
func (v Value) getRaw(key string) (Value, bool) {
	var it rawIter
	it.start(v.s)
	var found string
	for k, e, ok := it.next(); ok; k, e, ok = it.next() {
		if keyIs(k, key) {
			found = e
		}
	}
	if found == "" {
		return Value{}, false
	}
	return rawValue(found), true
}

// IsEmpty reports whether v is an empty string, array or object (Len() == 0) without building a
// raw array or object ([ParseLazy]); false for the other kinds.
func (v Value) IsEmpty() bool {
	switch {
	case v.isRaw():
		c := v.s[skipSpace(v.s, 1)]
		return c == ']' || c == '}'
	case v.kind == KindString || v.kind == KindArray || v.kind == KindObject:
		return v.Len() == 0
	}
	return false
}

// Elements yields v's elements in order when v is an array, nothing otherwise. For a raw array
// ([ParseLazy]) each element is built only when yielded.
func (v Value) Elements() iter.Seq[Value] {
	return func(yield func(Value) bool) {
		if v.kind != KindArray {
			return
		}
		if !v.isRaw() {
			for _, e := range v.arr {
				if !yield(e) {
					return
				}
			}
			return
		}
		var it rawIter
		it.start(v.s)
		for _, e, ok := it.next(); ok; _, e, ok = it.next() {
			if !yield(rawValue(e)) {
				return
			}
		}
	}
}

// EncodedText returns the text of an array or object read by [ParseLazy] when it is exactly what
// [Value.AppendJSON] writes for it — compact, strings escaped as orjson escapes them, no duplicate
// keys at any depth — as a slice of the parsed data (never modify it); ok is false otherwise and
// for every other value.
func (v Value) EncodedText() (text []byte, ok bool) {
	if !v.isRaw() || !canonicalText(v.s) {
		return nil, false
	}
	return stringBytes(v.s), true
}

// appendRaw appends the encoding of the validated JSON text s (AppendJSON of its collapsed value),
// in one pass over s: nothing is built but, for an object with duplicate keys, its members' list.
func appendRaw(dst []byte, s string) []byte {
	dst, _ = appendRawAt(dst, s, 0, false)
	return dst
}

// PythonText returns what ParsePython(src).AppendJSON writes (json.loads, then orjson's encoding:
// compact, duplicate keys collapsed, floats as [AppendFloat] writes them, "-0" as 0) without
// building a tree when src is strict JSON: src's own bytes (never modify them) when it already is
// that text, else a new buffer of the text re-encoded in one pass; other text is parsed by
// ParsePython. Errors are ParsePython's *SyntaxError. A large JSON text held in a string (SPEC
// §3.6: a tool call's arguments) so costs at most the output.
func PythonText(src string) ([]byte, error) {
	b := stringBytes(src)
	if !Valid(b) {
		v, err := ParsePython([]byte(src))
		if err != nil {
			return nil, err
		}
		return v.AppendJSON(nil), nil
	}
	i := skipSpace(src, 0)
	text := src[i:valueEnd(src, i)]
	if end, ok := canonicalAt(text, 0, true); ok && end == len(text) {
		return stringBytes(text), nil
	}
	out, _ := appendRawAt(make([]byte, 0, len(src)), src, 0, true)
	return out, nil
}

// appendRawAt appends the encoding of the value at s[i] and returns the index past it; python
// writes numbers as ParsePython reads them.
func appendRawAt(dst []byte, s string, i int, python bool) ([]byte, int) {
	i = skipSpace(s, i)
	switch s[i] {
	case '"':
		end := stringEnd(s, i)
		return appendRawString(dst, s[i:end]), end
	case '[', '{':
		start, mark := i, len(dst)
		object := s[i] == '{'
		var keys keyList
		dst = append(dst, s[i])
		i = skipSpace(s, i+1)
		for n := 0; s[i] != ']' && s[i] != '}'; n++ {
			if n > 0 {
				dst = append(dst, ',')
			}
			if object {
				end := stringEnd(s, i)
				keys.add(s[i:end])
				dst = append(appendRawString(dst, s[i:end]), ':')
				i = skipSpace(s, end) + 1 // past ':'
			}
			dst, i = appendRawAt(dst, s, i, python)
			if i = skipSpace(s, i); s[i] == ',' {
				i = skipSpace(s, i+1)
			}
		}
		dst = append(dst, s[i])
		i++
		if object && keys.duplicates(s[start:i]) {
			return appendCollapsed(dst[:mark], s[start:i], python), i
		}
		return dst, i
	}
	end := valueEnd(s, i)
	if text := s[i:end]; python && (s[i] == '-' || s[i] >= '0' && s[i] <= '9') {
		return appendPythonNumber(dst, text), end
	}
	return append(dst, s[i:end]...), end // a number's text or a literal
}

// appendCollapsed appends the raw object s with its duplicate keys collapsed (each key at its
// first position with its last value).
func appendCollapsed(dst []byte, s string, python bool) []byte {
	type member struct{ key, value string }
	var ms []member
	index := make(map[string]int)
	var it rawIter
	it.start(s)
	for k, e, ok := it.next(); ok; k, e, ok = it.next() {
		key := rawKey(k)
		if i, dup := index[key]; dup {
			ms[i].value = e
			continue
		}
		index[key] = len(ms)
		ms = append(ms, member{key, e})
	}
	dst = append(dst, '{')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(AppendString(dst, m.key), ':')
		dst, _ = appendRawAt(dst, m.value, 0, python)
	}
	return append(dst, '}')
}

// pythonNumberKept reports whether appendPythonNumber writes the valid number text unchanged,
// allocating nothing.
func pythonNumberKept(text string) bool {
	if isIntegerText(text) {
		return text != "-0"
	}
	f, _ := strconv.ParseFloat(text, 64) // validated: finite
	var buf [32]byte
	return string(AppendFloat(buf[:0], f)) == text
}

// appendPythonNumber appends the valid number text as ParsePython reads it: an integer as
// written ("-0" as 0), any other number as the float it denotes ([AppendFloat]).
func appendPythonNumber(dst []byte, text string) []byte {
	if isIntegerText(text) {
		if text == "-0" {
			text = "0"
		}
		return append(dst, text...)
	}
	f, _ := strconv.ParseFloat(text, 64) // validated: finite
	return AppendFloat(dst, f)
}

// appendRawString appends the raw JSON string s (quotes included, validated) encoded like
// [AppendString] writes its value, rewriting only the escapes orjson writes otherwise.
func appendRawString(dst []byte, s string) []byte {
	start := 0
	for i := nextEscape(s, 1); i < len(s)-1; i = nextEscape(s, i) {
		var r rune
		n := 2
		switch s[i+1] {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			i += 2
			continue
		case '/':
			r = '/'
		case 'u':
			r, n = rune(hex4(s[i+2:])), 6
			if r >= 0xD800 && r < 0xDC00 { // a pair (validated)
				r, n = utf16.DecodeRune(r, rune(hex4(s[i+8:]))), 12
			}
		}
		dst = append(dst, s[start:i]...)
		if r < 0x20 || r == '"' || r == '\\' {
			dst = AppendStringBody(dst, string(byte(r)))
		} else {
			dst = utf8.AppendRune(dst, r)
		}
		i += n
		start = i
	}
	return append(dst, s[start:]...)
}

// hex4 is the value of the four hex digits starting s (validated).
func hex4(s string) uint16 {
	var r uint16
	for _, c := range []byte(s[:4]) {
		switch {
		case c <= '9':
			c -= '0'
		case c >= 'a':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | uint16(c)
	}
	return r
}

// canonicalText reports whether the validated JSON text s is what AppendJSON writes for its
// collapsed value.
func canonicalText(s string) bool {
	end, ok := canonicalAt(s, 0, false)
	return ok && end == len(s)
}

// canonicalAt checks the value at s[i] like canonicalText and returns the index past it; python
// also requires every number to be written as ParsePython reads it.
func canonicalAt(s string, i int, python bool) (end int, ok bool) {
	switch s[i] {
	case ' ', '\t', '\n', '\r':
		return 0, false
	case '"':
		end := stringEnd(s, i)
		return end, canonicalString(s[i:end])
	case '[', '{':
		start := i
		object := s[i] == '{'
		var keys keyList
		for i++; s[i] != ']' && s[i] != '}'; {
			if object {
				if s[i] != '"' {
					return 0, false // whitespace
				}
				end := stringEnd(s, i)
				if !canonicalString(s[i:end]) || s[end] != ':' {
					return 0, false
				}
				keys.add(s[i:end])
				i = end + 1
			}
			if i, ok = canonicalAt(s, i, python); !ok {
				return 0, false
			}
			switch s[i] {
			case ',':
				i++
			case ']', '}':
			default:
				return 0, false // whitespace
			}
		}
		i++
		return i, !object || !keys.duplicates(s[start:i])
	}
	end = valueEnd(s, i)
	if text := s[i:end]; python && (s[i] == '-' || s[i] >= '0' && s[i] <= '9') {
		return end, pythonNumberKept(text)
	}
	return end, true // a number's text or a literal
}

// canonicalString reports whether the raw JSON string s (quotes included, validated) is what
// [AppendString] writes for its value: its only escapes are \" \\ \b \f \n \r \t and \u00XX
// (lowercase hex) for the other control characters.
func canonicalString(s string) bool {
	for i := nextEscape(s, 1); i < len(s)-1; i = nextEscape(s, i) {
		switch s[i+1] {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			c := s[i+2 : i+6]
			if c[0] != '0' || c[1] != '0' || (c[2] != '0' && c[2] != '1') || !isLowerHex(c[3]) {
				return false
			}
			switch c {
			case "0008", "0009", "000a", "000c", "000d":
				return false // written in short form
			}
			i += 6
		default:
			return false // \/
		}
	}
	return true
}

// nextEscape returns the index of the first backslash at or after i in the raw JSON string s
// (quotes included, validated), or len(s)-1 (its closing quote) when there is none.
func nextEscape(s string, i int) int {
	if j := strings.IndexByte(s[i:len(s)-1], '\\'); j >= 0 {
		return i + j
	}
	return len(s) - 1
}

func isLowerHex(c byte) bool { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') }

// keyList notes the raw keys of one object while it is read, for [keyList.duplicates].
type keyList struct {
	small [16]string // the first 16 keys
	n     int        // the number of keys
}

func (l *keyList) add(k string) {
	if l.n < len(l.small) {
		l.small[l.n] = k
	}
	l.n++
}

// keySeed hashes object keys for [keyList.duplicates].
var keySeed = maphash.MakeSeed()

// duplicates reports whether two of the noted keys of the raw object obj are equal (after
// decoding escapes). Up to 16 keys are compared pairwise; more are read again from obj and
// hashed (8 bytes a key), and only a hash seen twice makes it compare the keys themselves.
func (l *keyList) duplicates(obj string) bool {
	if l.n <= len(l.small) {
		for i := 1; i < l.n; i++ {
			for j := range i {
				if rawKeysEqual(l.small[i], l.small[j]) {
					return true
				}
			}
		}
		return false
	}
	hashes := make([]uint64, 0, l.n)
	var it rawIter
	it.start(obj)
	for k, _, ok := it.next(); ok; k, _, ok = it.next() {
		hashes = append(hashes, maphash.String(keySeed, rawKey(k)))
	}
	slices.Sort(hashes)
	for i := 1; i < len(hashes); i++ {
		if hashes[i] == hashes[i-1] {
			return len(rawValue(obj).shallow().obj) < l.n
		}
	}
	return false
}

// rawKey returns the decoded value of the raw JSON string k (quotes included).
func rawKey(k string) string {
	if strings.IndexByte(k, '\\') < 0 {
		return k[1 : len(k)-1]
	}
	s, _ := rawValue(k).AsString()
	return s
}

// keyIs reports whether the raw JSON string k decodes to key.
func keyIs(k, key string) bool {
	if strings.IndexByte(k, '\\') < 0 {
		return len(k) == len(key)+2 && k[1:len(k)-1] == key
	}
	return rawKey(k) == key
}

// rawKeysEqual reports whether the raw JSON strings a and b decode to the same string.
func rawKeysEqual(a, b string) bool {
	if strings.IndexByte(a, '\\') < 0 && strings.IndexByte(b, '\\') < 0 {
		return a == b
	}
	return rawKey(a) == rawKey(b)
}

// rawIter steps through the members or elements of a raw array or object (validated text).
type rawIter struct {
	s      string
	i      int  // where the next member or element starts, or the closing bracket
	object bool // s is an object
	spaced bool // whitespace was skipped between tokens
}

func (it *rawIter) start(s string) {
	*it = rawIter{s: s, object: s[0] == '{'}
	it.i = it.skip(1)
}

// skip returns the index of the first non-space byte at or after i, noting skipped space.
func (it *rawIter) skip(i int) int {
	j := skipSpace(it.s, i)
	if j != i {
		it.spaced = true
	}
	return j
}

// next returns the next member's raw key and raw value (key empty for an array's element), or
// ok false at the end.
func (it *rawIter) next() (key, value string, ok bool) {
	s, i := it.s, it.i
	if s[i] == ']' || s[i] == '}' {
		return "", "", false
	}
	if it.object {
		end := stringEnd(s, i)
		key = s[i:end]
		i = it.skip(it.skip(end) + 1) // past ':'
	}
	end := valueEnd(s, i)
	value = s[i:end]
	i = it.skip(end)
	if s[i] == ',' {
		i = it.skip(i + 1)
	}
	it.i = i
	return key, value, true
}

// skipSpace returns the index of the first non-whitespace byte of s at or after i.
func skipSpace(s string, i int) int {
	for i < len(s) && isJSONSpace(s[i]) {
		i++
	}
	return i
}

// stringEnd returns the index just past the JSON string starting at s[i]: the first quote after
// it that an even number of backslashes precedes (strings.IndexByte finds the quotes many bytes at
// a time), or len(s) when there is none (text not yet validated).
func stringEnd(s string, i int) int {
	for i++; ; {
		k := strings.IndexByte(s[i:], '"')
		if k < 0 {
			return len(s)
		}
		q := i + k
		n := 0
		for k := q - 1; k >= i && s[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}

// valueEnd returns the index just past the JSON value starting at s[i] (validated text).
func valueEnd(s string, i int) int {
	switch s[i] {
	case '"':
		return stringEnd(s, i)
	case '{', '[':
		depth := 0
		for {
			switch s[i] {
			case '"':
				i = stringEnd(s, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
	}
	for i < len(s) && !isSpaceOrDelim(s[i]) && s[i] != ']' && s[i] != '}' {
		i++
	}
	return i
}
