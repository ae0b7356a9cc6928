package tokens

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// CanonicalJSON returns e's line without its LF, exactly as the reference writes it (TOKENS.md
// §2.2.3, T7): orjson.dumps(entry.model_dump(mode="json"), OPT_SORT_KEYS) — compact, the keys of
// every object sorted by code point (the schema's members and the extras together, and recursively
// inside output_items, routed_experts and extras), strings escaped as orjson does (package ojson:
// only '"', '\\' and C0 controls; non-ASCII, U+2028/U+2029, '/', '<', '>' raw), floats in orjson's
// text ([ojson.AppendFloat]: 0 → 0.0, -3.2e-05 → -0.000032, 1e16 → 1e16), a NaN or infinite float
// as null (pydantic's JSON mode; the store refuses to write such an entry, T7), nil slices as [],
// nil RoutedExperts as null.
//
// It fails with the reference's TypeError "Integer exceeds 64-bit range" for an integer in
// output_items, routed_experts or an extra outside both 64-bit ranges ([ErrIntegerRange]); when an
// output item is not a JSON object or a value is not JSON; and when an Extra key is a schema field.
func (e TokenEntry) CanonicalJSON() ([]byte, error) {
	type member struct {
		key   string
		write func([]byte) ([]byte, error)
	}
	members := []member{
		{keyCreatedAt, func(b []byte) ([]byte, error) { return ojson.AppendFloat(b, e.CreatedAt), nil }},
		{keyGenerationLogProbs, func(b []byte) ([]byte, error) { return appendFloats(b, e.GenerationLogProbs), nil }},
		{keyGenerationTokenIDs, func(b []byte) ([]byte, error) { return appendInts(b, e.GenerationTokenIDs), nil }},
		{keyModel, func(b []byte) ([]byte, error) { return ojson.AppendString(b, e.Model), nil }},
		{keyModelCallID, func(b []byte) ([]byte, error) { return ojson.AppendString(b, e.ModelCallID), nil }},
		{keyOutputItems, e.appendOutputItems},
		{keyPromptTokenIDs, func(b []byte) ([]byte, error) { return appendInts(b, e.PromptTokenIDs), nil }},
		{keyRolloutID, func(b []byte) ([]byte, error) { return ojson.AppendString(b, e.RolloutID), nil }},
		{keyRoutedExperts, func(b []byte) ([]byte, error) {
			if e.RoutedExperts == nil {
				return append(b, "null"...), nil
			}
			return appendCanonicalRaw(b, e.RoutedExperts, keyRoutedExperts)
		}},
		{keySchemaVersion, func(b []byte) ([]byte, error) { return strconv.AppendInt(b, e.SchemaVersion, 10), nil }},
		{keyTokenItemIndex, func(b []byte) ([]byte, error) {
			if e.TokenItemIndex == nil {
				return append(b, "null"...), nil
			}
			return strconv.AppendInt(b, *e.TokenItemIndex, 10), nil
		}},
	}
	for k, raw := range e.Extra {
		if schemaKeys[k] {
			return nil, fmt.Errorf("token entry: extra member %q is a schema field", k)
		}
		members = append(members, member{k, func(b []byte) ([]byte, error) { return appendCanonicalRaw(b, raw, k) }})
	}
	slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
	out := make([]byte, 0, 256+12*(len(e.PromptTokenIDs)+2*len(e.GenerationTokenIDs)))
	out = append(out, '{')
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = ojson.AppendString(out, m.key)
		out = append(out, ':')
		var err error
		if out, err = m.write(out); err != nil {
			return nil, err
		}
	}
	return append(out, '}'), nil
}

// Line returns [TokenEntry.CanonicalJSON] followed by LF: the entry's line in the JSONL file.
func (e TokenEntry) Line() ([]byte, error) {
	b, err := e.CanonicalJSON()
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// EntryDigest is the reference's entry_digest: the lowercase hex SHA-256 of a canonical line
// without its LF (TOKENS.md §2.2.3), the value the state file indexes per model_call_id.
func EntryDigest(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}

func (e TokenEntry) appendOutputItems(b []byte) ([]byte, error) {
	b = append(b, '[')
	for i, raw := range e.OutputItems {
		if i > 0 {
			b = append(b, ',')
		}
		if jsontext.Value(raw).Kind() != '{' {
			return nil, fmt.Errorf("token entry: output_items[%d] is not a JSON object", i)
		}
		var err error
		if b, err = appendCanonicalRaw(b, raw, fmt.Sprintf("output_items[%d]", i)); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

func appendInts(b []byte, ns []int64) []byte {
	b = append(b, '[')
	for i, n := range ns {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, n, 10)
	}
	return append(b, ']')
}

func appendFloats(b []byte, fs []float64) []byte {
	b = append(b, '[')
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		b = ojson.AppendFloat(b, f)
	}
	return append(b, ']')
}

// appendCanonicalRaw appends the JSON text raw re-encoded canonically; what names the value in
// the error. raw is read as Python's json.loads reads it ([python.Loads]: duplicate keys collapse,
// integers of any size stay exact), as the reference holds such values in Python objects.
func appendCanonicalRaw(b []byte, raw jsontext.Value, what string) ([]byte, error) {
	v, err := python.Loads(raw)
	if err != nil {
		return nil, fmt.Errorf("token entry: %s is not JSON: %w", what, err)
	}
	return appendCanonical(b, v)
}

// appendCanonical appends v the way orjson.dumps(v, OPT_SORT_KEYS) writes it: object members
// sorted by key (recursively; duplicates collapsed to the last value), integers as their text
// (within the signed or unsigned 64-bit range, else the reference's TypeError), floats in orjson's
// text, strings per [ojson.AppendString]. It serves the token lines and the state file alike.
func appendCanonical(b []byte, v ojson.Value) ([]byte, error) {
	switch v.Kind() {
	case ojson.KindArray:
		b = append(b, '[')
		for i, el := range v.Elems() {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendCanonical(b, el); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case ojson.KindObject:
		members := slices.Clone(v.CollapseDuplicates().Members())
		slices.SortFunc(members, func(x, y ojson.Member) int { return strings.Compare(x.Key, y.Key) })
		b = append(b, '{')
		for i, m := range members {
			if i > 0 {
				b = append(b, ',')
			}
			b = ojson.AppendString(b, m.Key)
			b = append(b, ':')
			var err error
			if b, err = appendCanonical(b, m.Value); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case ojson.KindNumber:
		text, _ := v.NumberText()
		if v.IsInteger() {
			n, ok := new(big.Int).SetString(text, 10)
			if !ok || n.Sign() < 0 && !n.IsInt64() || n.Sign() >= 0 && !n.IsUint64() {
				return nil, errIntegerExceeds()
			}
			return n.Append(b, 10), nil
		}
		f, _ := v.Float64()
		if math.IsInf(f, 0) { // beyond float64: Python's json.loads reads inf, orjson writes null
			return append(b, "null"...), nil
		}
		return ojson.AppendFloat(b, f), nil
	}
	return v.AppendJSON(b), nil
}
