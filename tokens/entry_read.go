package tokens

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// SchemaVersion is the TokenEntry schema this package writes and the newest it reads (TOKENS.md
// §2.2.1, the reference's TOKEN_ENTRY_RECORD_SCHEMA_VERSION). A TokenEntry built in Go must set it:
// the zero value 0 is a valid older version and is written as 0.
const SchemaVersion = 1

// The schema's member names (TOKENS.md §2.2.1).
const (
	keySchemaVersion      = "schema_version"
	keyRolloutID          = "rollout_id"
	keyModelCallID        = "model_call_id"
	keyModel              = "model"
	keyPromptTokenIDs     = "prompt_token_ids"
	keyGenerationTokenIDs = "generation_token_ids"
	keyGenerationLogProbs = "generation_log_probs"
	keyRoutedExperts      = "routed_experts"
	keyOutputItems        = "output_items"
	keyTokenItemIndex     = "token_item_index"
	keyCreatedAt          = "created_at"
)

// ParseEntry reads one line of a `<rollout_id>.tokens.jsonl` file (without or with its LF) the way
// the reference's readers do: orjson.loads, then TokenEntry.model_validate (TOKENS.md §2.2, §2.8).
// The JSON is read strictly (RFC 8259, UTF-8, no NaN/Infinity; duplicate keys collapse to the last
// value, as a dict holds them); a syntax error is an [*Error] of type JSONDecodeError. Fields are
// then parsed with pydantic's lax rules ([EntryFromValue]). One difference from orjson: an integer
// beyond the 64-bit range is a syntax error here, where orjson reads it as a float (a token id of that
// size fails either way).
func ParseEntry(line []byte) (TokenEntry, error) {
	if e, ok := parseEntryFast(line); ok {
		return e, nil
	}
	return parseEntryGeneral(line)
}

// parseEntryGeneral is [ParseEntry] over a parsed value, for every line.
func parseEntryGeneral(line []byte) (TokenEntry, error) {
	v, err := ojson.Parse(line)
	if err != nil {
		return TokenEntry{}, pyErr("JSONDecodeError", err.Error(), err)
	}
	return EntryFromValue(v.CollapseDuplicates())
}

// EntryFromValue is the reference's TokenEntry.model_validate(v) (TOKENS.md §2.2.1–2.2.2) over a
// parsed JSON value, in pydantic 2's lax mode:
//
//   - integer fields (the token ids, schema_version, token_item_index) accept JSON integers, floats
//     with no fractional part (8.0), booleans (true → 1) and numeric strings (" 7 ", "+7", "1_000",
//     "7.00"); 1.5 is refused (int_from_float), so is "1e2" (int_parsing);
//   - float fields (generation_log_probs, created_at) accept numbers, booleans and numeric strings
//     ("1.5", "1_0.5", "inf", "NaN");
//   - string fields accept strings only (model null is refused, [TE-18]);
//   - output_items must be a list of objects; routed_experts is any value (null = absent);
//   - members outside the schema are kept in Extra (extra="allow").
//
// Every field error is reported, in field order, in one [*ValidationError]; only when there is none
// do the model checks run (schema_version ≤ 1, equal generation lengths, token_item_index inside
// output_items; their "Value error, ..." messages are the reference's).
//
// Token ids, schema_version and token_item_index are int64 in [TokenEntry]: an integer in [2^63,
// 2^64), which the reference stores and writes (orjson writes unsigned 64-bit integers, [TE-13]), is
// refused here with an [*Error] naming the field (a deviation, docs/TOKENS.md §0 T7); one beyond
// that is refused with the reference's own serialization error "Integer exceeds 64-bit range"
// (TypeError, [TE-14]), which the reference raises only when the entry is written. Both match
// [ErrIntegerRange]. Neither can come from a real tokenizer.
func EntryFromValue(v ojson.Value) (TokenEntry, error) {
	p := entryParser{input: v}
	if v.Kind() != ojson.KindObject {
		p.fail(nil, "model_type", "Input should be a valid dictionary or instance of TokenEntry", v)
		return TokenEntry{}, &ValidationError{Errors: p.errs}
	}
	e := TokenEntry{SchemaVersion: SchemaVersion}
	if f, ok := v.Get(keySchemaVersion); ok {
		if n, ok := p.int(f, keySchemaVersion); ok {
			e.SchemaVersion = n
		}
	}
	e.RolloutID = p.str(v, keyRolloutID, true)
	e.ModelCallID = p.str(v, keyModelCallID, true)
	e.Model = p.str(v, keyModel, false)
	e.PromptTokenIDs = listOf(&p, v, keyPromptTokenIDs, p.int)
	e.GenerationTokenIDs = listOf(&p, v, keyGenerationTokenIDs, p.int)
	e.GenerationLogProbs = listOf(&p, v, keyGenerationLogProbs, p.float)
	if f, ok := v.Get(keyRoutedExperts); ok && !f.IsNull() {
		e.RoutedExperts = jsontext.Value(f.AppendJSON(nil))
	}
	e.OutputItems = p.objects(v, keyOutputItems)
	if f, ok := v.Get(keyTokenItemIndex); ok && !f.IsNull() {
		if n, ok := p.int(f, keyTokenItemIndex); ok {
			e.TokenItemIndex = &n
		}
	}
	if f, ok := v.Get(keyCreatedAt); ok {
		if x, ok := p.float(f, keyCreatedAt); ok {
			e.CreatedAt = x
		}
	}
	for _, m := range v.Members() {
		if !schemaKeys[m.Key] {
			if e.Extra == nil {
				e.Extra = map[string]jsontext.Value{}
			}
			e.Extra[m.Key] = jsontext.Value(m.Value.AppendJSON(nil))
		}
	}
	if len(p.errs) > 0 {
		return TokenEntry{}, &ValidationError{Errors: p.errs}
	}
	if p.rangeErr != nil {
		return TokenEntry{}, p.rangeErr
	}
	if err := e.validateModel(v); err != nil {
		return TokenEntry{}, err
	}
	return e, nil
}

// schemaKeys are the members that are not extras.
var schemaKeys = map[string]bool{
	keySchemaVersion: true, keyRolloutID: true, keyModelCallID: true, keyModel: true, keyPromptTokenIDs: true,
	keyGenerationTokenIDs: true, keyGenerationLogProbs: true, keyRoutedExperts: true, keyOutputItems: true,
	keyTokenItemIndex: true, keyCreatedAt: true,
}

// Validate runs the reference's model checks on e (TOKENS.md §2.2.2): schema_version at most
// [SchemaVersion], as many log probs as generated tokens, token_item_index inside output_items. The
// error is a [*ValidationError] with the reference's message.
func (e TokenEntry) Validate() error { return e.validateModel(ojson.Null()) }

func (e TokenEntry) validateModel(input ojson.Value) error {
	var msg string
	switch {
	case e.SchemaVersion > SchemaVersion:
		msg = fmt.Sprintf("token record is schema_version %d, but this reader understands up to %d. Upgrade the reader, or point it at records written by a writer it matches.", e.SchemaVersion, SchemaVersion)
	case len(e.GenerationTokenIDs) != len(e.GenerationLogProbs):
		msg = fmt.Sprintf("generation_token_ids and generation_log_probs must have the same length (got %d and %d)", len(e.GenerationTokenIDs), len(e.GenerationLogProbs))
	case e.TokenItemIndex != nil && (*e.TokenItemIndex < 0 || *e.TokenItemIndex >= int64(len(e.OutputItems))):
		msg = fmt.Sprintf("token_item_index %d is outside output_items of length %d", *e.TokenItemIndex, len(e.OutputItems))
	default:
		return nil
	}
	return &ValidationError{Errors: []FieldError{{Loc: []any{}, Type: "value_error", Msg: "Value error, " + msg, Input: input}}}
}

// entryParser collects the field errors of one model_validate.
type entryParser struct {
	input    ojson.Value
	errs     []FieldError
	rangeErr error // the first integer-range refusal (reported only when validation passes)
}

func (p *entryParser) fail(loc []any, typ, msg string, input ojson.Value) {
	if loc == nil {
		loc = []any{}
	}
	p.errs = append(p.errs, FieldError{Loc: loc, Type: typ, Msg: msg, Input: input})
}

// required reports field's value, or records pydantic's "Field required" error.
func (p *entryParser) required(v ojson.Value, key string) (ojson.Value, bool) {
	f, ok := v.Get(key)
	if !ok {
		p.fail([]any{key}, "missing", "Field required", p.input)
	}
	return f, ok
}

func (p *entryParser) str(v ojson.Value, key string, required bool) string {
	f, ok := v.Get(key)
	if !ok {
		if required {
			p.fail([]any{key}, "missing", "Field required", p.input)
		}
		return ""
	}
	s, ok := f.AsString()
	if !ok {
		p.fail([]any{key}, "string_type", "Input should be a valid string", f)
	}
	return s
}

// list returns the elements of a required list field, or records its error.
func (p *entryParser) list(v ojson.Value, key string, required bool) ([]ojson.Value, bool) {
	var f ojson.Value
	if required {
		var ok bool
		if f, ok = p.required(v, key); !ok {
			return nil, false
		}
	} else {
		var ok bool
		if f, ok = v.Get(key); !ok {
			return nil, false
		}
	}
	if f.Kind() != ojson.KindArray {
		p.fail([]any{key}, "list_type", "Input should be a valid list", f)
		return nil, false
	}
	return f.Elems(), true
}

// listOf parses the required list field key with conv per element.
func listOf[T any](p *entryParser, v ojson.Value, key string, conv func(ojson.Value, ...any) (T, bool)) []T {
	elems, ok := p.list(v, key, true)
	if !ok {
		return nil
	}
	out := make([]T, 0, len(elems))
	for i, el := range elems {
		x, _ := conv(el, key, i)
		out = append(out, x)
	}
	return out
}

func (p *entryParser) objects(v ojson.Value, key string) []jsontext.Value {
	elems, ok := p.list(v, key, false)
	if !ok {
		return nil
	}
	out := make([]jsontext.Value, 0, len(elems))
	for i, el := range elems {
		if el.Kind() != ojson.KindObject {
			p.fail([]any{key, i}, "dict_type", "Input should be a valid dictionary", el)
			continue
		}
		out = append(out, jsontext.Value(el.AppendJSON(nil)))
	}
	return out
}

// int is pydantic's lax int for one value at loc; ok is false when an error was recorded.
func (p *entryParser) int(v ojson.Value, loc ...any) (int64, bool) {
	if n, ok := v.Int64(); ok { // the common case: a JSON integer that fits
		return n, true
	}
	n, typ, msg := laxInt(v)
	if typ != "" {
		p.fail(loc, typ, msg, v)
		return 0, false
	}
	if !n.IsInt64() {
		if p.rangeErr == nil {
			p.rangeErr = intRangeError(n, loc)
		}
		return 0, false
	}
	return n.Int64(), true
}

func (p *entryParser) float(v ojson.Value, loc ...any) (float64, bool) {
	x, typ, msg := laxFloat(v)
	if typ != "" {
		p.fail(loc, typ, msg, v)
		return 0, false
	}
	return x, true
}

// maxUint64 is 2^64-1, the largest integer orjson writes.
var maxUint64 = new(big.Int).SetUint64(math.MaxUint64)

// intRangeError refuses an integer the int64 fields cannot hold: beyond both 64-bit ranges it is
// the reference's own serialization error; in [2^63, 2^64) it is gymtrace's refusal.
func intRangeError(n *big.Int, loc []any) error {
	if n.Sign() < 0 || n.Cmp(maxUint64) > 0 {
		return errIntegerExceeds()
	}
	return pyErr("ValueError", fmt.Sprintf("%s is %s, outside the signed 64-bit range of token ids and indices in gymtrace (the reference accepts up to 2^64-1; docs/TOKENS.md §0 T7)",
		locText(loc), n), ErrIntegerRange)
}

// locText writes a location as field[i].
func locText(loc []any) string {
	var b strings.Builder
	for _, l := range loc {
		switch l := l.(type) {
		case string:
			b.WriteString(l)
		case int:
			b.WriteString("[" + strconv.Itoa(l) + "]")
		}
	}
	return b.String()
}

const (
	msgIntType       = "Input should be a valid integer"
	msgIntParsing    = "Input should be a valid integer, unable to parse string as an integer"
	msgIntFromFloat  = "Input should be a valid integer, got a number with a fractional part"
	msgIntSize       = "Unable to parse input string as an integer, exceeded maximum size"
	msgFloatType     = "Input should be a valid number"
	msgFloatParsing  = "Input should be a valid number, unable to parse string as a number"
	twoTo63          = 9223372036854775808.0
	maxIntTextDigits = 4300 // CPython's int()/str() digit limit, which pydantic's big-int parsing meets too
)

// laxInt is pydantic 2's lax int: it returns the integer, or the error type and message.
func laxInt(v ojson.Value) (*big.Int, string, string) {
	switch v.Kind() {
	case ojson.KindBool:
		if b, _ := v.AsBool(); b {
			return big.NewInt(1), "", ""
		}
		return big.NewInt(0), "", ""
	case ojson.KindNumber:
		text, _ := v.NumberText()
		if v.IsInteger() {
			n, ok := new(big.Int).SetString(text, 10)
			if !ok {
				return nil, "int_parsing", msgIntParsing
			}
			return n, "", ""
		}
		f, _ := v.Float64()
		switch {
		case math.IsInf(f, 0) || math.IsNaN(f):
			return nil, "finite_number", "Input should be a finite number"
		case f != math.Trunc(f):
			return nil, "int_from_float", msgIntFromFloat
		case math.Abs(f) >= twoTo63:
			return nil, "int_parsing_size", msgIntSize
		}
		return big.NewInt(int64(f)), "", ""
	case ojson.KindString:
		s, _ := v.AsString()
		if n, ok := intOfText(python.Strip(s)); ok {
			return n, "", ""
		}
		return nil, "int_parsing", msgIntParsing
	}
	return nil, "int_type", msgIntType
}

// intOfText parses pydantic's integer strings: an optional sign, decimal digits with single
// underscores between them, and optionally "." followed by zeros only ("7.00").
func intOfText(s string) (*big.Int, bool) {
	if whole, frac, ok := strings.Cut(s, "."); ok {
		if frac == "" || strings.Trim(frac, "0") != "" {
			return nil, false
		}
		s = whole
	}
	sign := ""
	if s != "" && (s[0] == '+' || s[0] == '-') {
		sign, s = s[:1], s[1:]
	}
	digits, ok := digitsWithUnderscores(s)
	if !ok || len(digits) > maxIntTextDigits {
		return nil, false
	}
	n, ok := new(big.Int).SetString(sign+digits, 10)
	return n, ok
}

// digitsWithUnderscores returns s's ASCII digits when s is one or more of them with single
// underscores between digits.
func digitsWithUnderscores(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			b.WriteByte(c)
		case c == '_' && i > 0 && i+1 < len(s) && isDigit(s[i-1]) && isDigit(s[i+1]):
		default:
			return "", false
		}
	}
	return b.String(), true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// laxFloat is pydantic 2's lax float: it returns the float, or the error type and message.
func laxFloat(v ojson.Value) (float64, string, string) {
	switch v.Kind() {
	case ojson.KindBool:
		if b, _ := v.AsBool(); b {
			return 1, "", ""
		}
		return 0, "", ""
	case ojson.KindNumber:
		text, _ := v.NumberText()
		f, err := strconv.ParseFloat(text, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, "float_parsing", msgFloatParsing
		}
		return f, "", ""
	case ojson.KindString:
		s, _ := v.AsString()
		if f, ok := floatOfText(python.Strip(s)); ok {
			return f, "", ""
		}
		return 0, "float_parsing", msgFloatParsing
	}
	return 0, "float_type", msgFloatType
}

// floatOfText parses pydantic's float strings: a decimal number (digits may be grouped by single
// underscores, in the exponent too), or inf / infinity / nan in any case, with an optional sign.
// Hexadecimal and other Go-only forms are refused. Out-of-range values become ±Inf or 0.
func floatOfText(s string) (float64, bool) {
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 {
		return 0, false
	}
	switch strings.ToLower(body) {
	case "inf", "infinity", "nan":
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	}
	var b strings.Builder
	digits, dot, exp := 0, false, false
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case isDigit(c):
			digits++
			b.WriteByte(c)
		case c == '_' && i > 0 && i+1 < len(body) && isDigit(body[i-1]) && isDigit(body[i+1]):
		case c == '.' && !dot && !exp:
			dot = true
			b.WriteByte(c)
		case (c == 'e' || c == 'E') && !exp && digits > 0:
			exp, digits = true, 0
			b.WriteByte('e')
			if i+1 < len(body) && (body[i+1] == '+' || body[i+1] == '-') {
				i++
				b.WriteByte(body[i])
			}
		default:
			return 0, false
		}
	}
	if digits == 0 {
		return 0, false
	}
	f, err := strconv.ParseFloat(s[:len(s)-len(body)]+b.String(), 64)
	return f, err == nil || errors.Is(err, strconv.ErrRange)
}
