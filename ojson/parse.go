package ojson

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// MaxDepth is the deepest nesting [Parse] and [Compact] accept: the number of arrays and objects
// open at once (a scalar has depth 0, [] has depth 1). It equals orjson's loads limit, so whatever
// gymtrace reads, Gym's reader reads too.
const MaxDepth = 1024

// SyntaxError describes invalid input: the byte offset where it was found and the rule broken.
type SyntaxError struct {
	Offset int    // byte offset into the input
	Msg    string // the rule, e.g. "invalid UTF-8 in string"
}

// Error implements error.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("ojson: %s at offset %d", e.Msg, e.Offset)
}

// errDepth is wrapped by the SyntaxError returned when nesting exceeds the limit.
var errDepth = errors.New("nesting too deep")

// mode selects the reader's rules.
type mode uint8

const (
	modeStrict mode = iota // RFC 8259 + SPEC D6, build a Value
	modePython             // Python json.loads, build a Value
)

type parser struct {
	data     []byte
	src      string // data as one string: strings and numbers without escapes are substrings of it
	shared   bool   // src aliases data instead of copying it ([ParseLazy]'s scalars)
	pos      int
	depth    int
	maxDepth int
	mode     mode
	// nonFinite (modePython only, [ParsePythonNonFinite]): NaN, Infinity, -Infinity and a float
	// that overflows float64 are numbers of that text, not null.
	nonFinite bool
	vstack    []Value       // elements of the arrays being read (exact-size slices are cut at the end)
	mstack    []Member      // members of the objects being read
	vals      *slab[Value]  // when set ([Parser]), arrays are cut from it instead of allocated
	mems      *slab[Member] // when set ([Parser]), objects' members are cut from it
}

// Parse reads one strict JSON value (SPEC §0 D6): RFC 8259 over UTF-8 (no byte order mark, no
// invalid UTF-8, no raw control characters or lone surrogate escapes in strings), no NaN or
// Infinity, integers within [math.MinInt64, math.MaxUint64], floats that do not overflow float64,
// nesting at most [MaxDepth], and nothing but whitespace after the value. Objects keep key order
// and duplicates; numbers keep their text. The result's strings share one copy of data (data
// itself is not retained). Errors are *SyntaxError.
func Parse(data []byte) (Value, error) {
	if v, ok := parseScalar(data); ok {
		return v, nil
	}
	return ParseDepth(data, MaxDepth)
}

// parseScalar is [Parse] of the two texts a member's raw value most often is, read without the
// parser's stacks: a string without escapes (every byte of its text >= 0x20, not '"' or '\\', and
// valid UTF-8) and an integer of at most 18 characters (which always fits int64). ok is false for
// every other text, which the parser then reads (and judges).
func parseScalar(data []byte) (Value, bool) {
	n := len(data)
	if n >= 2 && data[0] == '"' && data[n-1] == '"' {
		body := data[1 : n-1]
		ascii := true
		for i := skipPlain(body, 0); i < len(body); i++ {
			switch c := body[i]; {
			case c < 0x20 || c == '"' || c == '\\':
				return Value{}, false
			case c >= 0x80:
				ascii = false
			}
		}
		if !ascii && !utf8.Valid(body) {
			return Value{}, false
		}
		return String(string(body)), true
	}
	if n == 0 || n > 18 {
		return Value{}, false
	}
	digits := data
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || digits[0] == '0' && len(digits) > 1 {
		return Value{}, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return Value{}, false
		}
	}
	return Number(string(data)), true
}

// ParseDepth is [Parse] with a nesting limit of maxDepth instead of [MaxDepth].
func ParseDepth(data []byte, maxDepth int) (Value, error) {
	return parseWithPooledStacks(parser{data: data, maxDepth: maxDepth, mode: modeStrict})
}

// ParsePython reads text the way Python's json.loads reads a str, for the places the reference
// parses and re-serializes (SPEC §3.6 args): surrounding whitespace allowed; NaN, Infinity and
// -Infinity accepted and returned as null (orjson writes them so); floats re-written as orjson
// writes them, [AppendFloat] ("1.50" → 1.5, "1e2" → 100.0, "1e16" → 1e16, "1e-05" → 0.00001,
// overflow → null); integers of any size kept exact ("-0" → 0); duplicate keys collapsed
// Python-dict style (first position, last value); lone surrogate escapes and invalid UTF-8 become
// U+FFFD. Raw control characters in strings are rejected (json.loads strict=True). Nesting is
// limited to [MaxDepth]. Errors are *SyntaxError.
// Callers use internal/python.Loads, which is this function.
func ParsePython(data []byte) (Value, error) {
	return parseWithPooledStacks(parser{data: data, maxDepth: MaxDepth, mode: modePython})
}

// ParsePythonNonFinite is [ParsePython] except that a non-finite float stays the float it is in
// Python instead of becoming null: the literals NaN, Infinity and -Infinity, and a float literal
// beyond the float64 range (1e400, which json.loads reads as inf), are numbers whose text is
// "NaN", "Infinity" or "-Infinity" ([Value.Float64] reads them as NaN or ±Inf). Such a value is
// for reading: its text is not RFC 8259. Callers use internal/python.LoadsNonFinite.
func ParsePythonNonFinite(data []byte) (Value, error) {
	return parseWithPooledStacks(parser{data: data, maxDepth: MaxDepth, mode: modePython, nonFinite: true})
}

// ValidNumber reports whether s is an RFC 8259 number (any size).
func ValidNumber(s string) bool {
	p := parser{data: []byte(s), mode: modePython}
	end, ok := p.scanNumber(0)
	return ok && end == len(s)
}

func (p *parser) fail(msg string) error {
	return &SyntaxError{Offset: p.pos, Msg: msg}
}

func (p *parser) document() (Value, error) {
	if p.shared {
		p.src = unsafe.String(unsafe.SliceData(p.data), len(p.data))
	} else {
		p.src = string(p.data)
	}
	p.skipWS()
	v, err := p.value()
	if err != nil {
		return Value{}, err
	}
	p.skipWS()
	if p.pos != len(p.data) {
		return Value{}, p.fail("data after the top-level value")
	}
	return v, nil
}

func (p *parser) skipWS() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() (Value, error) {
	if p.pos >= len(p.data) {
		return Value{}, p.fail("unexpected end of input")
	}
	switch c := p.data[p.pos]; c {
	case '{':
		return p.object()
	case '[':
		return p.array()
	case '"':
		s, err := p.str()
		if err != nil {
			return Value{}, err
		}
		return String(s), nil
	case 't':
		return p.literal("true", Bool(true))
	case 'f':
		return p.literal("false", Bool(false))
	case 'n':
		return p.literal("null", Null())
	case 'N':
		if p.mode == modePython {
			return p.literal("NaN", p.nonFiniteValue("NaN"))
		}
	case 'I':
		if p.mode == modePython {
			return p.literal("Infinity", p.nonFiniteValue("Infinity"))
		}
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			if c == '-' && p.mode == modePython && p.hasPrefix("-Infinity") {
				return p.literal("-Infinity", p.nonFiniteValue("-Infinity"))
			}
			return p.number()
		}
	}
	return Value{}, p.fail(fmt.Sprintf("invalid character %q looking for a value", p.data[p.pos]))
}

// nonFiniteValue is what Python mode reads for the non-finite float named lit ("NaN",
// "Infinity", "-Infinity"): null, as orjson writes it, or with nonFinite the number of that text.
func (p *parser) nonFiniteValue(lit string) Value {
	if p.nonFinite {
		return Number(lit)
	}
	return Null()
}

func (p *parser) hasPrefix(lit string) bool {
	return len(p.data)-p.pos >= len(lit) && string(p.data[p.pos:p.pos+len(lit)]) == lit
}

func (p *parser) literal(lit string, v Value) (Value, error) {
	if !p.hasPrefix(lit) {
		return Value{}, p.fail("invalid literal, expected " + lit)
	}
	p.pos += len(lit)
	return v, nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > p.maxDepth {
		return &SyntaxError{Offset: p.pos, Msg: fmt.Sprintf("%v (limit %d)", errDepth, p.maxDepth)}
	}
	return nil
}

func (p *parser) array() (Value, error) {
	if err := p.enter(); err != nil {
		return Value{}, err
	}
	p.pos++ // '['
	base := len(p.vstack)
	p.skipWS()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
	} else {
		for {
			p.skipWS()
			v, err := p.value()
			if err != nil {
				return Value{}, err
			}
			p.vstack = append(p.vstack, v)
			if done, err := p.next(']', "array"); err != nil {
				return Value{}, err
			} else if done {
				break
			}
		}
	}
	p.depth--
	return Array(popFrom(&p.vstack, base, p.vals)...), nil
}

func (p *parser) object() (Value, error) {
	if err := p.enter(); err != nil {
		return Value{}, err
	}
	p.pos++ // '{'
	base := len(p.mstack)
	var index map[string]int // modePython: key → position in p.mstack
	p.skipWS()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
	} else {
		for {
			p.skipWS()
			if p.pos >= len(p.data) || p.data[p.pos] != '"' {
				return Value{}, p.fail("expected a string object key")
			}
			key, err := p.str()
			if err != nil {
				return Value{}, err
			}
			p.skipWS()
			if p.pos >= len(p.data) || p.data[p.pos] != ':' {
				return Value{}, p.fail("expected ':' after object key")
			}
			p.pos++
			p.skipWS()
			v, err := p.value()
			if err != nil {
				return Value{}, err
			}
			switch p.mode {
			case modeStrict:
				p.mstack = append(p.mstack, Member{Key: key, Value: v})
			case modePython:
				if i, dup := index[key]; dup {
					p.mstack[i].Value = v
				} else {
					if index == nil {
						index = make(map[string]int)
					}
					index[key] = len(p.mstack)
					p.mstack = append(p.mstack, Member{Key: key, Value: v})
				}
			}
			if done, err := p.next('}', "object"); err != nil {
				return Value{}, err
			} else if done {
				break
			}
		}
	}
	p.depth--
	return Object(popFrom(&p.mstack, base, p.mems)...), nil
}

// next reads what follows an element of an array or object (after optional whitespace): the
// closing byte (done) or a ','. Anything else, or the end of the
// input, is a syntax error naming the container (in: "array" or "object").
func (p *parser) next(closing byte, in string) (done bool, err error) {
	p.skipWS()
	if p.pos >= len(p.data) {
		return false, p.fail("unexpected end of input in " + in)
	}
	c := p.data[p.pos]
	p.pos++
	if c == closing {
		return true, nil
	}
	if c != ',' {
		p.pos--
		return false, p.fail("expected ',' or '" + string(closing) + "' in " + in)
	}
	return false, nil
}

// popFrom returns a copy of (*stack)[base:] and truncates the stack to base, zeroing the popped
// entries so the shared stack does not keep them alive. The copy is cut from sl when sl is not nil,
// else allocated.
func popFrom[T any](stack *[]T, base int, sl *slab[T]) []T {
	s := *stack
	var out []T
	if sl != nil {
		out = sl.take(len(s) - base)
	} else {
		out = make([]T, len(s)-base)
	}
	copy(out, s[base:])
	clear(s[base:])
	*stack = s[:base]
	return out
}

// str reads a string starting at the opening quote.
//
// A string without escapes and with valid UTF-8 (the common case) is a substring of p.src: nothing
// is decoded or allocated. Otherwise the decoded string is built in one buffer sized for the raw
// text, copying runs of plain bytes whole. strSlow in the tests is the byte-by-byte reference this
// must equal.
func (p *parser) str() (string, error) {
	p.pos++ // '"'
	i := p.plainEnd(p.pos)
	if i < len(p.data) && p.data[i] == '"' {
		from := p.pos
		p.pos = i + 1
		return p.src[from:i], nil
	}
	var b strings.Builder
	// The decoded text is at most as long as the raw text, except where modePython replaces a
	// one-byte invalid sequence by U+FFFD (the builder then grows).
	b.Grow(p.rawStringEnd(i) - p.pos)
	b.Write(p.data[p.pos:i])
	p.pos = i
	for {
		if p.pos >= len(p.data) {
			return "", p.fail("unexpected end of input in string")
		}
		switch c := p.data[p.pos]; {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c < 0x20:
			return "", p.fail(fmt.Sprintf("control character %#02x in string", c))
		case c == '\\':
			r, err := p.escape()
			if err != nil {
				return "", err
			}
			b.WriteRune(r)
		default:
			// plainEnd stops at a byte >= 0x80 only where the UTF-8 is invalid.
			if p.mode != modePython {
				return "", p.fail("invalid UTF-8 in string")
			}
			p.pos += invalidLen(p.data[p.pos:])
			b.WriteRune(utf8.RuneError)
		}
		j := p.plainEnd(p.pos)
		b.Write(p.data[p.pos:j])
		p.pos = j
	}
}

// plainEnd returns the offset of the first byte at or after i that ends a run of plain string
// text: '"', '\\', a control character below U+0020, the start of an invalid UTF-8 sequence, or
// len(p.data).
func (p *parser) plainEnd(i int) int {
	d := p.data
	for i < len(d) {
		if i = skipPlain(d, i); i >= len(d) {
			break
		}
		c := d[i]
		if c < utf8.RuneSelf {
			if c == '"' || c == '\\' || c < 0x20 {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(d[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return i
}

// rawStringEnd returns the offset of the quote that closes the string whose text continues at i
// (escaped characters skipped), or len(p.data) when there is none. It does not validate.
func (p *parser) rawStringEnd(i int) int {
	d := p.data
	for i < len(d) {
		switch d[i] {
		case '"':
			return i
		case '\\':
			i += 2
			continue
		}
		i++
	}
	return len(d)
}

// escape decodes the backslash escape at p.pos, moves past it and returns its character: in
// modePython a lone surrogate escape gives U+FFFD; otherwise it is an error.
func (p *parser) escape() (rune, error) {
	if p.pos+1 >= len(p.data) {
		return 0, p.fail("unexpected end of input in string escape")
	}
	c := p.data[p.pos+1]
	var r byte
	switch c {
	case '"', '\\', '/':
		r = c
	case 'b':
		r = '\b'
	case 'f':
		r = '\f'
	case 'n':
		r = '\n'
	case 'r':
		r = '\r'
	case 't':
		r = '\t'
	case 'u':
		return p.unicodeEscape()
	default:
		p.pos++
		return 0, p.fail(fmt.Sprintf("invalid escape '\\%c' in string", c))
	}
	p.pos += 2
	return rune(r), nil
}

func (p *parser) hex4(at int) (rune, bool) {
	if at+4 > len(p.data) {
		return 0, false
	}
	var r rune
	for _, c := range p.data[at : at+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

func (p *parser) unicodeEscape() (rune, error) {
	r, ok := p.hex4(p.pos + 2)
	if !ok {
		return 0, p.fail("invalid \\u escape in string")
	}
	switch {
	case utf16.IsSurrogate(r) && r < 0xDC00:
		// High surrogate: must be followed by \u low surrogate.
		if p.pos+7 < len(p.data) && p.data[p.pos+6] == '\\' && p.data[p.pos+7] == 'u' {
			if r2, ok := p.hex4(p.pos + 8); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
				p.pos += 12
				return utf16.DecodeRune(r, r2), nil
			}
		}
		if p.mode != modePython {
			return 0, p.fail("lone surrogate escape in string")
		}
		p.pos += 6
		return utf8.RuneError, nil
	case utf16.IsSurrogate(r):
		if p.mode != modePython {
			return 0, p.fail("lone surrogate escape in string")
		}
		p.pos += 6
		return utf8.RuneError, nil
	}
	p.pos += 6
	return r, nil
}

// scanNumber checks the RFC 8259 number grammar from i and returns the end offset.
func (p *parser) scanNumber(i int) (int, bool) {
	d := p.data
	if i < len(d) && d[i] == '-' {
		i++
	}
	if i >= len(d) {
		return i, false
	}
	switch {
	case d[i] == '0':
		i++
	case d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		return i, false
	}
	if i < len(d) && d[i] == '.' {
		i++
		start := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == start {
			return i, false
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		start := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == start {
			return i, false
		}
	}
	return i, true
}

func (p *parser) number() (Value, error) {
	end, ok := p.scanNumber(p.pos)
	if !ok {
		p.pos = end
		return Value{}, p.fail("invalid number")
	}
	text := p.data[p.pos:end]
	isInt := isIntegerText(string(text))
	switch p.mode {
	case modeStrict:
		if isInt {
			if !fits64(text) {
				return Value{}, p.fail(fmt.Sprintf("integer %s outside the 64-bit range", shownNumber(text)))
			}
		} else if _, err := strconv.ParseFloat(string(text), 64); err != nil {
			return Value{}, p.fail(fmt.Sprintf("number %s overflows float64", shownNumber(text)))
		}
		p.pos = end
		return Number(p.src[p.pos-len(text) : p.pos]), nil
	}
	// modePython
	p.pos = end
	if isInt {
		s := p.src[end-len(text) : end]
		if s == "-0" {
			s = "0"
		}
		return Number(s), nil
	}
	f, _ := strconv.ParseFloat(string(text), 64) // grammar checked; overflow gives ±Inf
	switch {
	case math.IsInf(f, 1):
		return p.nonFiniteValue("Infinity"), nil
	case math.IsInf(f, -1):
		return p.nonFiniteValue("-Infinity"), nil
	}
	return Float(f), nil
}

// maxShownNumber bounds the number text an error message quotes.
const maxShownNumber = 40

// shownNumber is a number text as an error quotes it: whole up to maxShownNumber bytes, else its
// first 32 bytes and its length, so a hostile 10 MiB number makes a short message.
func shownNumber(text []byte) string {
	if len(text) <= maxShownNumber {
		return string(text)
	}
	return fmt.Sprintf("%s… (%d bytes)", text[:32], len(text))
}

// fits64 reports whether an integer text is within [MinInt64, MaxUint64].
func fits64(text []byte) bool {
	if text[0] == '-' {
		_, err := strconv.ParseInt(string(text), 10, 64)
		return err == nil
	}
	_, err := strconv.ParseUint(string(text), 10, 64)
	return err == nil
}

// depthError is the error for a container opened at offset at beyond the nesting limit.
func depthError(at, limit int) error {
	return &SyntaxError{Offset: at, Msg: fmt.Sprintf("%v (limit %d)", errDepth, limit)}
}

// numberRangeError checks a number text (valid per RFC 8259) against SPEC §0 D6's ranges: an
// integer within [math.MinInt64, math.MaxUint64], a float that does not overflow float64. It
// returns the rule broken, or "".
func numberRangeError(text []byte) string {
	if len(text) < 19 && isIntegerText(string(text)) {
		return "" // at most 18 characters: within the int64 range, no need to parse (the usual case)
	}
	return numberRangeErrorParsed(text)
}

// numberRangeErrorParsed is [numberRangeError] by parsing the text.
func numberRangeErrorParsed(text []byte) string {
	if isIntegerText(string(text)) {
		if !fits64(text) {
			return fmt.Sprintf("integer %s outside the 64-bit range", shownNumber(text))
		}
	} else if _, err := strconv.ParseFloat(string(text), 64); err != nil {
		return fmt.Sprintf("number %s overflows float64", shownNumber(text))
	}
	return ""
}
