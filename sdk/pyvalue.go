package sdk

// Python value emulation for the rollout-id rules of SPEC §1.2 and the config gates of §1.4.
//
// The reference builds ids with Python's str() and int() and reads its configuration with Python's
// truthiness, so the same JSON values must give the same results here. Values are what
// encoding/json produces with Decoder.UseNumber (nil, bool, string, json.Number, []any,
// map[string]any), plus json.RawMessage, our key-ordered JSON objects (orderedDict), Go's integer and
// float kinds, and slices and string-keyed maps of them. A json.Number whose text has a fraction or an
// exponent is a Python float; any other number text is a Python int (vectors/README.md).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gymtrace/gymtrace/internal/pyrepr"
)

// pyMaxStrDigits is CPython's default limit (3.11+) on the number of digits converted between an int
// and its decimal text; longer conversions raise ValueError.
const pyMaxStrDigits = 4300

// pyMaxDepth bounds the nesting the emulation walks, so hostile or cyclic values end in an error
// instead of exhausting the stack.
const pyMaxDepth = 10000

var errPyTooDeep = errors.New("value nested too deeply")

// orderedDict is a JSON object decoded with its key order kept, as a Python dict holds it: a
// repeated key keeps its first position and takes its last value.
type orderedDict struct {
	keys []string
	vals map[string]any
}

func (d *orderedDict) set(k string, v any) {
	if d.vals == nil {
		d.vals = make(map[string]any)
	}
	if _, ok := d.vals[k]; !ok {
		d.keys = append(d.keys, k)
	}
	d.vals[k] = v
}

// decodeOrderedJSON decodes one JSON value the way Python's json.loads does, keeping object key order
// (objects become *orderedDict, numbers json.Number). Trailing non-space data is an error.
func decodeOrderedJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeOrderedValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after JSON value")
	}
	return v, nil
}

func decodeOrderedValue(dec *json.Decoder, depth int) (any, error) {
	if depth > pyMaxDepth {
		return nil, errPyTooDeep
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // nil, bool, string or json.Number
	}
	switch delim {
	case '[':
		list := []any{}
		for dec.More() {
			v, err := decodeOrderedValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return list, nil
	case '{':
		d := &orderedDict{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, ok := kt.(string)
			if !ok {
				return nil, fmt.Errorf("object key %v is not a string", kt)
			}
			v, err := decodeOrderedValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			d.set(k, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return d, nil
	default:
		return nil, fmt.Errorf("unexpected JSON delimiter %q", rune(delim))
	}
}

// pyMapping reports whether v is a Python Mapping for our purposes and returns a lookup over it:
// map[string]any, *orderedDict, map[string]json.RawMessage (values decoded on demand), or any other
// Go map whose key kind is string. The lookup returns (nil, nil) for a missing key.
func pyMapping(v any) (get func(key string) (any, error), ok bool) {
	switch m := v.(type) {
	case map[string]any:
		return func(k string) (any, error) { return m[k], nil }, true
	case *orderedDict:
		if m == nil {
			return nil, false
		}
		return func(k string) (any, error) { return m.vals[k], nil }, true
	case map[string]json.RawMessage:
		return func(k string) (any, error) {
			raw, ok := m[k]
			if !ok {
				return nil, nil
			}
			return decodeOrderedJSON(raw)
		}, true
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Map || rv.Type().Key().Kind() != reflect.String {
		return nil, false
	}
	if rv.IsNil() {
		// A nil map is still a (empty) mapping.
		return func(string) (any, error) { return nil, nil }, true
	}
	return func(k string) (any, error) {
		e := rv.MapIndex(reflect.ValueOf(k).Convert(rv.Type().Key()))
		if !e.IsValid() {
			return nil, nil
		}
		return e.Interface(), nil
	}, true
}

// jsonNumberKind classifies JSON number text: isFloat when it has a fraction or an exponent.
// ok is false when s is not a JSON number (RFC 8259 grammar).
func jsonNumberKind(s string) (isFloat, ok bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false, false
	}
	if i < len(s) && s[i] == '.' {
		isFloat = true
		i++
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		isFloat = true
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false, false
		}
	}
	return isFloat, i == len(s)
}

// pyNumber converts JSON number text as Python's json module does: an int (exact, any size up to
// pyMaxStrDigits digits) or a float (out-of-range magnitudes become ±inf, as float() gives).
func pyNumber(n json.Number) (i *big.Int, f float64, isFloat bool, err error) {
	s := string(n)
	isFloat, ok := jsonNumberKind(s)
	if !ok {
		return nil, 0, false, fmt.Errorf("invalid JSON number %q", s)
	}
	if isFloat {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, 0, false, fmt.Errorf("invalid JSON number %q: %w", s, err)
		}
		return nil, f, true, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return big.NewInt(n), 0, false, nil
	}
	digits := len(strings.TrimPrefix(s, "-"))
	if digits > pyMaxStrDigits {
		return nil, 0, false, fmt.Errorf("exceeds the limit (%d digits) for integer string conversion: value has %d digits", pyMaxStrDigits, digits)
	}
	i, ok = new(big.Int).SetString(s, 10)
	if !ok {
		return nil, 0, false, fmt.Errorf("invalid JSON number %q", s)
	}
	return i, 0, false, nil
}

// pyStr is Python's str(v): a string is itself, everything else its repr.
func pyStr(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	var b strings.Builder
	if err := pyReprTo(&b, v, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

// pyRepr is Python's repr(v). A Go map other than *orderedDict has no key order, so its keys are
// written sorted; decode with decodeOrderedJSON to keep the sender's order.
func pyRepr(v any) (string, error) {
	var b strings.Builder
	if err := pyReprTo(&b, v, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func pyReprTo(b *strings.Builder, v any, depth int) error {
	if depth > pyMaxDepth {
		return errPyTooDeep
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case string:
		b.WriteString(pyrepr.Str(x))
	case json.Number:
		if isFloat, ok := jsonNumberKind(string(x)); ok && !isFloat && len(x) <= pyMaxStrDigits {
			// JSON integer text is already canonical (no leading zeros), except "-0".
			if x == "-0" {
				x = "0"
			}
			b.WriteString(string(x))
			return nil
		}
		i, f, isFloat, err := pyNumber(x)
		if err != nil {
			return err
		}
		if isFloat {
			b.WriteString(pyrepr.Float(f))
		} else {
			b.WriteString(i.String())
		}
	case float64:
		b.WriteString(pyrepr.Float(x))
	case float32:
		b.WriteString(pyrepr.Float(float64(x)))
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		n, _ := goInteger(x)
		b.WriteString(n.String())
	case *big.Int:
		if x == nil {
			b.WriteString("None")
		} else {
			b.WriteString(x.String())
		}
	case json.RawMessage:
		d, err := decodeOrderedJSON(x)
		if err != nil {
			return err
		}
		return pyReprTo(b, d, depth+1)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := pyReprTo(b, e, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case *orderedDict:
		if x == nil {
			b.WriteString("None")
			return nil
		}
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pyrepr.Str(k))
			b.WriteString(": ")
			if err := pyReprTo(b, x.vals[k], depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return pyReprReflect(b, v, depth)
	}
	return nil
}

// pyReprReflect covers slices, arrays and string-keyed maps of other Go types.
func pyReprReflect(b *strings.Builder, v any, depth int) error {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i := range rv.Len() {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := pyReprTo(b, rv.Index(i).Interface(), depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		keys := make([]string, 0, rv.Len())
		byKey := make(map[string]reflect.Value, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			k := it.Key().String()
			keys = append(keys, k)
			byKey[k] = it.Value()
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pyrepr.Str(k))
			b.WriteString(": ")
			if err := pyReprTo(b, byKey[k].Interface(), depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	}
	return fmt.Errorf("unsupported value type %T", v)
}

// pyTypeName is the Python type name of a decoded JSON value, for TypeError texts.
func pyTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case string:
		return "str"
	case float32, float64:
		return "float"
	case *orderedDict, map[string]any:
		return "dict"
	case []any:
		return "list"
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.Slice, reflect.Array:
		return "list"
	case reflect.Map:
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}

// pyInt is Python's int(v) for the values above: bool → 0/1, int → itself, float → truncated toward
// zero (inf and nan raise), str → parsed as int(str) does (pyParseIntString). Anything else (None,
// list, dict) raises TypeError.
func pyInt(v any) (*big.Int, error) {
	switch x := v.(type) {
	case bool:
		if x {
			return big.NewInt(1), nil
		}
		return big.NewInt(0), nil
	case string:
		return pyParseIntString(x)
	case json.Number:
		i, f, isFloat, err := pyNumber(x)
		if err != nil {
			return nil, err
		}
		if isFloat {
			return pyIntFromFloat(f)
		}
		return i, nil
	case float64:
		return pyIntFromFloat(x)
	case float32:
		return pyIntFromFloat(float64(x))
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		n, _ := goInteger(x)
		return n, nil
	case *big.Int:
		if x != nil {
			return new(big.Int).Set(x), nil
		}
	case json.RawMessage:
		d, err := decodeOrderedJSON(x)
		if err != nil {
			return nil, err
		}
		return pyInt(d)
	}
	return nil, fmt.Errorf("int() argument must be a string, a bytes-like object or a real number, not %s", pyrepr.Str(pyTypeName(v)))
}

func pyIntFromFloat(f float64) (*big.Int, error) {
	switch {
	case math.IsNaN(f):
		return nil, errors.New("cannot convert float NaN to integer")
	case math.IsInf(f, 0):
		return nil, errors.New("cannot convert float infinity to integer")
	}
	i, _ := big.NewFloat(math.Trunc(f)).Int(nil)
	return i, nil
}

// pyIntSpace reports whether int() skips r around the digits: ASCII space, \t, \n, \v, \f, \r, and
// the non-ASCII White_Space characters (U+0085, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029,
// U+202F, U+205F, U+3000). The ASCII separators U+001C–U+001F, which str.isspace() accepts, are not
// skipped by int(). This is exactly unicode.IsSpace.
func pyIntSpace(r rune) bool { return unicode.IsSpace(r) }

// pyDecimal returns the value of a Unicode decimal digit (general category Nd, which Python's int()
// accepts in place of ASCII digits). Every Nd run in Unicode is a complete 0–9 sequence starting at
// a zero (the stability policy guarantees it), so the value is the offset within the run modulo 10.
func pyDecimal(r rune) (int, bool) {
	if r >= '0' && r <= '9' {
		return int(r - '0'), true
	}
	if r < 0x80 || !unicode.Is(unicode.Nd, r) {
		return 0, false
	}
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10, true
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10, true
		}
	}
	return 0, false
}

// pyParseIntString is Python's int(s) with base 10: surrounding whitespace (Python's definition) is
// ignored; then an optional sign and decimal digits (any Unicode Nd digit), with single underscores
// allowed between digits; leading zeros are fine. More than pyMaxStrDigits digits raise, as CPython's
// default conversion limit does. The error text is Python's.
func pyParseIntString(s string) (*big.Int, error) {
	invalid := func() error {
		return fmt.Errorf("invalid literal for int() with base 10: %s", pyrepr.Str(s))
	}
	t := strings.TrimFunc(s, pyIntSpace)
	var digits []byte
	neg := false
	i := 0
	if i < len(t) && (t[i] == '+' || t[i] == '-') {
		neg = t[i] == '-'
		i++
	}
	prevUnderscore := false
	for i < len(t) {
		r, size := utf8.DecodeRuneInString(t[i:])
		i += size
		if r == '_' {
			if len(digits) == 0 || prevUnderscore {
				return nil, invalid()
			}
			prevUnderscore = true
			continue
		}
		d, ok := pyDecimal(r)
		if !ok {
			return nil, invalid()
		}
		digits = append(digits, byte('0'+d))
		prevUnderscore = false
	}
	if len(digits) == 0 || prevUnderscore {
		return nil, invalid()
	}
	if len(digits) > pyMaxStrDigits {
		return nil, fmt.Errorf("exceeds the limit (%d digits) for integer string conversion: value has %d digits", pyMaxStrDigits, len(digits))
	}
	n, ok := new(big.Int).SetString(string(digits), 10)
	if !ok {
		return nil, invalid()
	}
	if neg {
		n.Neg(n)
	}
	return n, nil
}

// pyTruthy is Python's bool(v): None, False, zero numbers and empty strings, lists and mappings are
// false; everything else (including the string "false" and NaN) is true.
func pyTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case json.Number:
		i, f, isFloat, err := pyNumber(x)
		if err != nil {
			return x != ""
		}
		if isFloat {
			return f != 0
		}
		return i.Sign() != 0
	case float64:
		return x != 0
	case float32:
		return x != 0
	case *orderedDict:
		return x != nil && len(x.keys) > 0
	case json.RawMessage:
		d, err := decodeOrderedJSON(x)
		if err != nil {
			return len(x) > 0
		}
		return pyTruthy(d)
	case *big.Int:
		return x != nil && x.Sign() != 0
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Bool:
		return rv.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int() != 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return rv.Uint() != 0
	case reflect.Float32, reflect.Float64:
		return rv.Float() != 0
	case reflect.String, reflect.Slice, reflect.Map, reflect.Array:
		return rv.Len() > 0
	case reflect.Pointer, reflect.Interface, reflect.Func, reflect.Chan:
		return !rv.IsNil()
	}
	return true
}

// goInteger converts a value of one of Go's built-in integer types to a big.Int; ok is false for
// any other type (named integer types included).
func goInteger(v any) (n *big.Int, ok bool) {
	switch x := v.(type) {
	case int:
		return big.NewInt(int64(x)), true
	case int8:
		return big.NewInt(int64(x)), true
	case int16:
		return big.NewInt(int64(x)), true
	case int32:
		return big.NewInt(int64(x)), true
	case int64:
		return big.NewInt(x), true
	case uint:
		return new(big.Int).SetUint64(uint64(x)), true
	case uint8:
		return new(big.Int).SetUint64(uint64(x)), true
	case uint16:
		return new(big.Int).SetUint64(uint64(x)), true
	case uint32:
		return new(big.Int).SetUint64(uint64(x)), true
	case uint64:
		return new(big.Int).SetUint64(x), true
	}
	return nil, false
}
