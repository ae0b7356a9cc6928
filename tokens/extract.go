package tokens

import (
	"strings"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// TokenFields are the members that carry token metadata on a served response (TOKENS.md §3.2,
// the reference's TOKEN_FIELDS); the first three are required on a carrier.
var TokenFields = [4]string{keyPromptTokenIDs, keyGenerationTokenIDs, keyGenerationLogProbs, keyRoutedExperts}

// TokenInfo is what [ExtractTokenFields] found on the one carrier: the four token fields' values
// as they are in the response (routed_experts null when absent). They are parsed into the entry's
// types only when the entry is built ([EntryFromResponse]).
type TokenInfo struct {
	PromptTokenIDs     ojson.Value
	GenerationTokenIDs ojson.Value
	GenerationLogProbs ojson.Value
	RoutedExperts      ojson.Value
}

// ExtractTokenFields is the reference's extract_token_fields (TOKENS.md §3.2) over a response
// object: the candidates are, in order, every object of payload.output and the message of every
// payload.choices[*] that has at least one of the three required fields not null. None → (nil, nil)
// ([EX-03], [EX-08]); more than one → ValueError "multiple response items carry token metadata"
// (checked before partiality, [EX-16]); a required field null or missing on the one candidate →
// ValueError "partial token metadata is missing: <names>" ([EX-05]). Empty lists count as present
// ([EX-09]). Python's iteration is followed exactly: a truthy non-list output or choices is iterated
// as Python would (a string's characters, an object's keys), and a number there, or a truthy choice
// that is not an object, is the TypeError / AttributeError Python raises. Errors are [*Error].
func ExtractTokenFields(payload ojson.Value) (*TokenInfo, error) {
	required := TokenFields[:3]
	carries := func(v ojson.Value) bool {
		if v.Kind() != ojson.KindObject {
			return false
		}
		for _, f := range required {
			if x, ok := v.Get(f); ok && !x.IsNull() {
				return true
			}
		}
		return false
	}
	var candidates []ojson.Value
	output, err := pyIter(member(payload, "output"))
	if err != nil {
		return nil, err
	}
	for _, item := range output {
		if carries(item) {
			candidates = append(candidates, item)
		}
	}
	messages, err := choiceMessages(payload)
	if err != nil {
		return nil, err
	}
	for _, m := range messages {
		if carries(m) {
			candidates = append(candidates, m)
		}
	}
	switch len(candidates) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, pyErr("ValueError", "multiple response items carry token metadata", nil)
	}
	src := candidates[0]
	var missing []string
	for _, f := range required {
		if x, ok := src.Get(f); !ok || x.IsNull() {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return nil, pyErr("ValueError", "partial token metadata is missing: "+strings.Join(missing, ", "), nil)
	}
	return &TokenInfo{
		PromptTokenIDs:     member(src, keyPromptTokenIDs),
		GenerationTokenIDs: member(src, keyGenerationTokenIDs),
		GenerationLogProbs: member(src, keyGenerationLogProbs),
		RoutedExperts:      member(src, keyRoutedExperts),
	}, nil
}

// ResponseToOutputItems is the reference's response_to_output_items (TOKENS.md §3.2): a non-empty
// output list gives its object elements; otherwise every choice's message that is an object gives
// a shallow copy with "type" defaulting to "message" and "role" to "assistant" (existing values and
// key order kept, the defaults appended) ([EX-02], [EX-14], [EX-15]). Python's iteration errors are
// as for [ExtractTokenFields].
func ResponseToOutputItems(payload ojson.Value) ([]ojson.Value, error) {
	if output := member(payload, "output"); output.Kind() == ojson.KindArray && output.Len() > 0 {
		items := []ojson.Value{}
		for _, item := range output.Elems() {
			if item.Kind() == ojson.KindObject {
				items = append(items, item)
			}
		}
		return items, nil
	}
	messages, err := choiceMessages(payload)
	if err != nil {
		return nil, err
	}
	items := []ojson.Value{}
	for _, m := range messages {
		if m.Kind() != ojson.KindObject {
			continue
		}
		item := m.Clone()
		for _, d := range [2][2]string{{"type", "message"}, {"role", "assistant"}} {
			if _, ok := item.Get(d[0]); !ok {
				item.Set(d[0], ojson.String(d[1]))
			}
		}
		items = append(items, item)
	}
	return items, nil
}

// StripTokenFields is the reference's strip_token_fields (TOKENS.md §3.2): the items without the
// four [TokenFields] (other members and their order kept) and the index of the one item whose
// generation_token_ids is not null (nil when none). More than one such item → ValueError "multiple
// output items carry token metadata" ([EX-06]).
func StripTokenFields(items []ojson.Value) ([]ojson.Value, *int, error) {
	var carrier *int
	stripped := make([]ojson.Value, 0, len(items))
	for i, item := range items {
		if g, ok := item.Get(keyGenerationTokenIDs); ok && !g.IsNull() {
			if carrier != nil {
				return nil, nil, pyErr("ValueError", "multiple output items carry token metadata", nil)
			}
			carrier = &i
		}
		var kept []ojson.Member
		for _, m := range item.Members() {
			if !isTokenField(m.Key) {
				kept = append(kept, m)
			}
		}
		stripped = append(stripped, ojson.Object(kept...))
	}
	return stripped, carrier, nil
}

func isTokenField(key string) bool {
	for _, f := range TokenFields {
		if key == f {
			return true
		}
	}
	return false
}

// member is payload.get(key) (null when absent or when payload is not an object).
func member(v ojson.Value, key string) ojson.Value {
	x, _ := v.Get(key)
	return x
}

// choiceMessages is `(choice or {}).get("message") or {}` for each choice of `payload.get("choices")
// or []`, with Python's errors for a choice that is truthy but not an object.
func choiceMessages(payload ojson.Value) ([]ojson.Value, error) {
	choices, err := pyIter(member(payload, "choices"))
	if err != nil {
		return nil, err
	}
	var out []ojson.Value
	for _, c := range choices {
		var m ojson.Value
		if python.Truthy(c) {
			if c.Kind() != ojson.KindObject {
				return nil, pyErr("AttributeError", python.ReprStr(python.TypeName(c))+" object has no attribute 'get'", nil)
			}
			m = member(c, "message")
		}
		if !python.Truthy(m) {
			m = ojson.Object()
		}
		out = append(out, m)
	}
	return out, nil
}

// pyIter is `for x in (v or [])`: a falsy v gives nothing, a list its elements, a string its
// characters, an object its keys; a number or true is Python's TypeError.
func pyIter(v ojson.Value) ([]ojson.Value, error) {
	if !python.Truthy(v) {
		return nil, nil
	}
	switch v.Kind() {
	case ojson.KindArray:
		return v.Elems(), nil
	case ojson.KindString:
		s, _ := v.AsString()
		var out []ojson.Value
		for _, r := range s {
			out = append(out, ojson.String(string(r)))
		}
		return out, nil
	case ojson.KindObject:
		var out []ojson.Value
		for _, m := range v.CollapseDuplicates().Members() {
			out = append(out, ojson.String(m.Key))
		}
		return out, nil
	}
	return nil, pyErr("TypeError", python.ReprStr(python.TypeName(v))+" object is not iterable", nil)
}
