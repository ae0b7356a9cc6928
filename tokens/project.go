package tokens

import (
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// ProjectChainToOutputItems is the reference's project_chain_to_output_items (TOKENS.md §3.5): the
// chain's calls as Responses output items whose prompts are contiguous. The running sequence starts
// at the root prompt; each link adds its interstitial (from the second link on), puts the sequence
// as prompt_token_ids on its carrier item, then adds its generation.
//
// A link's items are copies of the entry's output_items. The carrier is the item at
// token_item_index when that is a valid index, else every item with a non-null inline
// generation_token_ids (older records), else the last item. On each carrier are set, in this
// order, prompt_token_ids, generation_token_ids, generation_log_probs and, when the entry's is not
// null, routed_experts (a member already there keeps its position, a new one is appended). An entry
// without output items gives one item {"type":"message", prompt_token_ids, generation_token_ids,
// generation_log_probs[, routed_experts]}.
//
// The prompt arrays of the items are prefixes of one sequence and share its elements, so a long
// rollout costs memory for its whole sequence once, not for every prompt: clone an item's value
// before editing its arrays in place. The error is a TypeError [*Error] when an
// output item or routed_experts is not valid JSON or an item is not a JSON object.
func ProjectChainToOutputItems(chain Chain) ([]ojson.Value, error) {
	var items []ojson.Value
	total := len(chain.RootPrompt)
	for k, link := range chain.Links {
		if k > 0 {
			total += len(link.Interstitial)
		}
		total += len(link.Entry.GenerationTokenIDs)
	}
	cum := tokenValues(make([]ojson.Value, 0, total), chain.RootPrompt) // the whole sequence, cut for each prompt
	for k, link := range chain.Links {
		if k > 0 {
			cum = tokenValues(cum, link.Interstitial)
		}
		e := link.Entry
		prompt := ojson.Array(cum[:len(cum):len(cum)]...)
		carried, err := carrierMembers(e, prompt)
		if err != nil {
			return nil, err
		}
		linkItems := make([]ojson.Value, len(e.OutputItems))
		for i, raw := range e.OutputItems {
			v, err := ojson.Parse(raw)
			if err != nil || v.Kind() != ojson.KindObject {
				return nil, pyErr("TypeError", "output item "+strconv.Itoa(i)+" of model call "+e.ModelCallID+" is not a JSON object", nil)
			}
			linkItems[i] = v
		}
		if len(linkItems) == 0 {
			items = append(items, ojson.Object(append([]ojson.Member{{Key: "type", Value: ojson.String("message")}}, carried...)...))
		} else {
			for _, i := range carrierIndexes(e, linkItems) {
				for _, m := range carried {
					linkItems[i].Set(m.Key, m.Value)
				}
			}
			items = append(items, linkItems...)
		}
		cum = tokenValues(cum, e.GenerationTokenIDs)
	}
	if items == nil {
		items = []ojson.Value{}
	}
	return items, nil
}

// carrierMembers returns the token members a carrier of e's generation gets, prompt first.
func carrierMembers(e *TokenEntry, prompt ojson.Value) ([]ojson.Member, error) {
	lps := make([]ojson.Value, len(e.GenerationLogProbs))
	for i, lp := range e.GenerationLogProbs {
		lps[i] = ojson.Float(lp)
	}
	ms := []ojson.Member{
		{Key: keyPromptTokenIDs, Value: prompt},
		{Key: keyGenerationTokenIDs, Value: ojson.Array(tokenValues(nil, e.GenerationTokenIDs)...)},
		{Key: keyGenerationLogProbs, Value: ojson.Array(lps...)},
	}
	if len(e.RoutedExperts) > 0 {
		re, err := ojson.Parse(e.RoutedExperts)
		if err != nil {
			return nil, pyErr("TypeError", "routed_experts of model call "+e.ModelCallID+" is not valid JSON", nil)
		}
		if !re.IsNull() {
			ms = append(ms, ojson.Member{Key: keyRoutedExperts, Value: re})
		}
	}
	return ms, nil
}

// carrierIndexes returns which of items carry e's generation (TOKENS.md §3.5); items is not empty.
func carrierIndexes(e *TokenEntry, items []ojson.Value) []int {
	if i := e.TokenItemIndex; i != nil && *i >= 0 && *i < int64(len(items)) {
		return []int{int(*i)}
	}
	var inline []int
	for i, it := range items {
		if g, ok := it.Get(keyGenerationTokenIDs); ok && !g.IsNull() {
			inline = append(inline, i)
		}
	}
	if len(inline) > 0 {
		return inline
	}
	return []int{len(items) - 1}
}

// tokenValues appends tokens to dst as JSON integers.
func tokenValues(dst []ojson.Value, tokens []int64) []ojson.Value {
	dst = slices.Grow(dst, len(tokens))
	for _, t := range tokens {
		dst = append(dst, ojson.Int(t))
	}
	return dst
}

// ProjectMainChainResponse is the reference's project_main_chain_response (TOKENS.md §3.5): the
// main chain of out (the chain "main", else the first) as a Responses object, key order
// {"id":"proj-<rolloutID>","model":model,"object":"response","output":[...],"usage":
// {"input_tokens":<prompt length of the first token-bearing item>,"output_tokens":<generated
// tokens of the token-bearing items>}} (token-bearing: generation_token_ids not null).
//
// The errors are ValueError [*Error]s: "capture produced no safe trainable chain" (no chains),
// "per_request produced multiple trajectories for a single-response delivery" (per_request with
// other than one chain), "capture produced no trainable generated tokens" (no item with a
// non-empty generation_token_ids); and those of [ProjectChainToOutputItems].
func ProjectMainChainResponse(rolloutID string, out BuildOutput, model string) (ojson.Value, error) {
	if len(out.Chains) == 0 {
		return ojson.Value{}, pyErr("ValueError", "capture produced no safe trainable chain", nil)
	}
	if out.Notes.Builder == BuilderPerRequest && len(out.Chains) != 1 {
		return ojson.Value{}, pyErr("ValueError", "per_request produced multiple trajectories for a single-response delivery", nil)
	}
	main := out.Chains[0]
	for _, c := range out.Chains {
		if c.ChainID == MainChainID {
			main = c
			break
		}
	}
	output, err := ProjectChainToOutputItems(main)
	if err != nil {
		return ojson.Value{}, err
	}
	trainable, first := false, true
	var nIn, nOut int
	for _, it := range output {
		g, ok := it.Get(keyGenerationTokenIDs)
		if !ok || g.IsNull() {
			continue
		}
		trainable = trainable || python.Truthy(g)
		if first {
			first = false
			p, _ := it.Get(keyPromptTokenIDs)
			if nIn, err = pyLen(p, keyPromptTokenIDs); err != nil {
				return ojson.Value{}, err
			}
		}
		n, err := pyLen(g, keyGenerationTokenIDs)
		if err != nil {
			return ojson.Value{}, err
		}
		nOut += n
	}
	if !trainable {
		return ojson.Value{}, pyErr("ValueError", "capture produced no trainable generated tokens", nil)
	}
	return ojson.Object(
		ojson.Member{Key: "id", Value: ojson.String("proj-" + rolloutID)},
		ojson.Member{Key: "model", Value: ojson.String(model)},
		ojson.Member{Key: "object", Value: ojson.String("response")},
		ojson.Member{Key: "output", Value: ojson.Array(output...)},
		ojson.Member{Key: "usage", Value: ojson.Object(
			ojson.Member{Key: "input_tokens", Value: ojson.Int(int64(nIn))},
			ojson.Member{Key: "output_tokens", Value: ojson.Int(int64(nOut))},
		)},
	), nil
}

// pyLen is Python's len(v) for an item member named key: elements, members or characters; other
// values are a TypeError [*Error], as len() raises.
func pyLen(v ojson.Value, key string) (int, error) {
	switch v.Kind() {
	case ojson.KindArray, ojson.KindObject:
		return v.Len(), nil
	case ojson.KindString:
		s, _ := v.AsString()
		return utf8.RuneCountInString(s), nil
	}
	return 0, pyErr("TypeError", key+": object of type '"+python.TypeName(v)+"' has no len()", nil)
}

// contiguityMessage is the reference's AssertionError text (TOKENS.md §3.5).
const contiguityMessage = "projection is not prefix-contiguous: an output item's prompt_token_ids does not extend the tokens seen so far"

// AssertPrefixContiguity is the reference's assert_prefix_contiguity (TOKENS.md §3.5): every
// object item of response.output with a non-null generation_token_ids must have a
// prompt_token_ids (missing or empty: []) that starts with the previous such item's prompt +
// generation. Tokens compare as Python's == does (1, 1.0 and true are equal). A violation is an
// AssertionError [*Error] with the reference's message; a prompt that is a string fails it
// too (Python's "" != []). A missing output, or one that is a string or an object, has no items to
// check. An output that is null, a number or a boolean, a prompt of another non-list kind, or a
// generation that is not a list is a TypeError [*Error] (the reference fails on these too,
// with messages of its own).
func AssertPrefixContiguity(response ojson.Value) error {
	output, ok := response.Get("output")
	if !ok {
		return nil
	}
	switch output.Kind() {
	case ojson.KindArray:
	case ojson.KindString, ojson.KindObject: // iterates characters or keys: no item is an object
		return nil
	default:
		return pyErr("TypeError", "'"+python.TypeName(output)+"' object is not iterable", nil)
	}
	var seenPrompt, seenGen []ojson.Value // the tokens seen so far: the last prompt + generation
	for _, it := range output.Elems() {
		if it.Kind() != ojson.KindObject {
			continue
		}
		gen, ok := it.Get(keyGenerationTokenIDs)
		if !ok || gen.IsNull() {
			continue
		}
		prompt, _ := it.Get(keyPromptTokenIDs)
		var p []ojson.Value
		switch {
		case !python.Truthy(prompt):
		case prompt.Kind() == ojson.KindArray:
			p = prompt.Elems()
		case prompt.Kind() == ojson.KindString:
			return pyErr("AssertionError", contiguityMessage, nil)
		default:
			return pyErr("TypeError", "'"+python.TypeName(prompt)+"' object is not subscriptable", nil)
		}
		if len(p) < len(seenPrompt)+len(seenGen) || !pyEqualTokens(p, seenPrompt) || !pyEqualTokens(p[len(seenPrompt):], seenGen) {
			return pyErr("AssertionError", contiguityMessage, nil)
		}
		if gen.Kind() != ojson.KindArray {
			return pyErr("TypeError", keyGenerationTokenIDs+" is a "+python.TypeName(gen)+", not a list", nil)
		}
		seenPrompt, seenGen = p, gen.Elems()
	}
	return nil
}

// pyEqualTokens reports whether p starts with want, tokens compared by [pyEqual]; p is at least as
// long as want. Two cuts of one sequence (the projection's prompts) are equal without a look.
func pyEqualTokens(p, want []ojson.Value) bool {
	if len(want) == 0 || &p[0] == &want[0] {
		return true
	}
	for i := range want {
		if !pyEqual(p[i], want[i]) {
			return false
		}
	}
	return true
}

// pyEqual is Python's == for two token values: numbers (and booleans, as 0 and 1) by value,
// everything else as the same JSON value.
func pyEqual(a, b ojson.Value) bool {
	if a.Equal(b) { // the same text: the projection's own tokens
		return true
	}
	x, xok := pyNumber(a)
	y, yok := pyNumber(b)
	if xok && yok {
		if xi, ok := a.Int64(); ok {
			if yi, ok := b.Int64(); ok {
				return xi == yi
			}
		}
		return x == y
	}
	return false
}

// pyNumber returns v as a number when it is a number or a boolean.
func pyNumber(v ojson.Value) (float64, bool) {
	if b, ok := v.AsBool(); ok {
		if b {
			return 1, true
		}
		return 0, true
	}
	return v.Float64()
}
