package fakemodel

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gymtrace/gymtrace/internal/ojson"
)

// tokenRequest is what a vLLM or SGLang Chat request says about tokens and choices.
type tokenRequest struct {
	logprobs             bool // "logprobs"
	topLogprobs          int  // "top_logprobs" (0 when absent or null; -1 = vLLM's "all", served as maxTopLogprobs)
	asTokenIDs           bool // vLLM "return_tokens_as_token_ids": log-prob tokens as "token_id:<n>"
	returnTokenIDs       bool // "return_token_ids"
	returnPromptTokenIDs bool // SGLang "return_prompt_token_ids"
	routedExperts        bool // SGLang "return_routed_experts"
	addSpecialTokens     bool // "add_special_tokens" (vLLM chat default false): prepend the BOS token
	generationPrompt     bool // "add_generation_prompt" (default true)
	n                    int  // "n" (default 1)
	includeUsage         bool // stream_options.include_usage with the engine's default
}

// maxTopLogprobs is the most top_logprobs entries served (vLLM's default --max-logprobs 20, over
// which vLLM answers 400), and what top_logprobs: -1 (vLLM's "whole vocabulary") gets.
const maxTopLogprobs = 20

// readTokenRequest reads and validates the token members of r as r.engine does.
func readTokenRequest(r *request) (tokenRequest, *apiError) {
	t := tokenRequest{generationPrompt: true, n: 1}
	bools := []struct {
		key string
		dst *bool
	}{
		{"logprobs", &t.logprobs}, {"return_tokens_as_token_ids", &t.asTokenIDs},
		{"return_token_ids", &t.returnTokenIDs}, {"return_prompt_token_ids", &t.returnPromptTokenIDs},
		{"return_routed_experts", &t.routedExperts}, {"add_special_tokens", &t.addSpecialTokens},
		{"add_generation_prompt", &t.generationPrompt},
	}
	for _, b := range bools {
		if raw := r.fields[b.key]; present(raw) && json.Unmarshal(raw, b.dst) != nil {
			return t, &apiError{status: 400, message: fmt.Sprintf("%s: Input should be a valid boolean", b.key), param: b.key}
		}
	}
	if n, ok := intField(r.fields["top_logprobs"]); !ok {
		return t, &apiError{status: 400, message: "top_logprobs: Input should be a valid integer", param: "top_logprobs"}
	} else {
		t.topLogprobs = n
	}
	if n, ok := intField(r.fields["n"]); !ok {
		return t, &apiError{status: 400, message: "n: Input should be a valid integer", param: "n"}
	} else if present(r.fields["n"]) {
		t.n = n
	}
	switch {
	case t.topLogprobs < -1:
		return t, &apiError{status: 400, message: "`top_logprobs` must be a positive value or -1.", param: "top_logprobs"}
	case t.topLogprobs != 0 && !t.logprobs:
		return t, &apiError{status: 400, message: "when using `top_logprobs`, `logprobs` must be set to true.", param: "top_logprobs"}
	case t.topLogprobs > maxTopLogprobs && r.engine == EngineVLLM:
		return t, &apiError{status: 400, message: fmt.Sprintf("Requested sample logprobs of %d, which is greater than max allowed: %d", t.topLogprobs, maxTopLogprobs), param: "top_logprobs"}
	case r.engine == EngineVLLM && badMaxTokens(r) != "":
		k := badMaxTokens(r)
		n, _ := intField(r.fields[k])
		return t, &apiError{status: 400, message: fmt.Sprintf("%s must be at least 1, got %d.", k, n), param: k}
	case t.n < 1:
		return t, &apiError{status: 400, message: fmt.Sprintf("n must be at least 1, got %d.", t.n), param: "n"}
	case t.n > 16:
		return t, &apiError{status: 400, message: fmt.Sprintf("fakemodel: n is %d; at most 16 choices are served", t.n), param: "n"}
	case present(r.fields["stream_options"]) && !r.stream:
		return t, &apiError{status: 400, message: "Stream options can only be defined when `stream=True`.", param: "stream_options"}
	}
	if t.topLogprobs == -1 {
		t.topLogprobs = maxTopLogprobs
	}
	if raw, ok := r.fields["top_logprobs"]; ok && !present(raw) && r.engine == EngineVLLM {
		// vLLM computes log probs only when "logprobs" is true AND top_logprobs is not None:
		// an explicit "top_logprobs": null turns them off (TOKENS.md §1.5 step 3 removes it).
		t.logprobs = false
	}
	var so struct {
		IncludeUsage *bool `json:"include_usage"`
	}
	if present(r.fields["stream_options"]) && json.Unmarshal(r.fields["stream_options"], &so) == nil {
		// vLLM's StreamOptions defaults include_usage to true, SGLang's to false.
		t.includeUsage = so.IncludeUsage == nil && r.engine == EngineVLLM || so.IncludeUsage != nil && *so.IncludeUsage
	}
	return t, nil
}

// badMaxTokens names the output limit member of r that is present and below 1 (vLLM refuses
// it), or returns "".
func badMaxTokens(r *request) string {
	for _, k := range []string{"max_completion_tokens", "max_tokens"} {
		if n, _ := intField(r.fields[k]); present(r.fields[k]) && n < 1 {
			return k
		}
	}
	return ""
}

// engineAnswer is a tokenized answer of the vLLM and SGLang engines.
type engineAnswer struct {
	tr      tokenRequest
	prompt  []token
	choices []engineChoice
	seed    [32]byte
}

// engineChoice is one choice: its generated tokens (cut by the output limit) and their reading.
type engineChoice struct {
	gen       []genToken
	reasoning string    // the reasoning text ("" = none)
	content   string    // the visible text
	call      *toolCall // the complete tool call, nil = none
	finish    string    // "stop", "length" or "tool_calls"
}

// completionTokens is the number of generated tokens of all choices.
func (e *engineAnswer) completionTokens() int {
	n := 0
	for _, c := range e.choices {
		n += len(c.gen)
	}
	return n
}

// contextError is the 400 an engine answers for a context that does not fit: vLLM's messages
// (its serving and renderer code), or SGLang's (its tokenizer manager's request validation).
func contextError(engine Engine, maxLen, promptLen, maxTokens int) *apiError {
	switch {
	case engine == EngineSGLang && promptLen >= maxLen:
		return &apiError{status: 400, message: fmt.Sprintf(
			"The input (%d tokens) is longer than the model's context length (%d tokens).", promptLen, maxLen)}
	case engine == EngineSGLang:
		return &apiError{status: 400, message: fmt.Sprintf(
			"Requested token count exceeds the model's maximum context length of %d tokens. You requested a total of %d tokens: %d tokens from the input messages and %d tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.",
			maxLen, promptLen+maxTokens, promptLen, maxTokens)}
	case promptLen >= maxLen:
		return &apiError{status: 400, param: "input_tokens", message: fmt.Sprintf(
			"This model's maximum context length is %d tokens. However, your request has %d input tokens. Please reduce the length of the input messages.",
			maxLen, promptLen)}
	}
	return &apiError{status: 400, param: "max_tokens", message: fmt.Sprintf(
		"'max_tokens' or 'max_completion_tokens' is too large: %d. This model's maximum context length is %d tokens and your request has %d input tokens (%d > %d - %d).",
		maxTokens, maxLen, promptLen, maxTokens, maxLen, promptLen)}
}

// planEngine tokenizes the prompt of r, checks it against the context length and generates every
// choice: the answer of plan without its output limit, as tokens, cut at the limit (max_tokens,
// else what is left of the context).
func planEngine(r *request, maxLen int) (*engineAnswer, *apiError) {
	tr, err := readTokenRequest(r)
	if err != nil {
		return nil, err
	}
	turns, err := readTurns(r.fields["messages"])
	if err != nil {
		return nil, err
	}
	e := &engineAnswer{tr: tr, seed: sha256.Sum256(r.seed())}
	e.prompt = renderPrompt(turns, r.fields["tools"], tr.addSpecialTokens, tr.generationPrompt)
	if len(e.prompt) >= maxLen || r.maxOutput > maxLen-len(e.prompt) {
		return nil, contextError(r.engine, maxLen, len(e.prompt), r.maxOutput)
	}
	limit := maxLen - len(e.prompt)
	if r.maxOutput > 0 {
		limit = r.maxOutput
	}
	full := *r
	full.maxOutput = 0
	a := plan(&full)
	for range tr.n {
		e.choices = append(e.choices, readGeneration(a, generation(a), limit))
	}
	return e, nil
}

// readGeneration cuts gen at limit tokens and reads its parts back: a cut tool call is not
// parsed (its text joins the content, as a tool parser leaves unparsable text).
func readGeneration(a answer, gen []genToken, limit int) engineChoice {
	c := engineChoice{gen: gen, finish: "stop"}
	if len(gen) > limit {
		c.gen, c.finish = gen[:limit], "length"
	}
	complete := a.call != nil && c.finish != "length"
	var reasoning, content strings.Builder
	for _, g := range c.gen {
		switch {
		case g.kind == genReasoning:
			reasoning.WriteString(g.text)
		case g.kind == genContent:
			content.WriteString(g.text)
		case !complete && g.kind >= genCallName:
			content.WriteString(g.text)
		}
	}
	c.reasoning, c.content = reasoning.String(), content.String()
	if complete {
		c.call, c.finish = a.call, "tool_calls"
	}
	return c
}

// streamKind is the kind a streamed chunk treats g of c as: a cut call's tokens are content.
func (c engineChoice) streamKind(g genToken) genKind {
	if c.call == nil && g.kind >= genCallName {
		return genContent
	}
	return g.kind
}

// pyFloat is f as Python's json and pydantic write it (shortest round trip, "-1.0" not "-1").
func pyFloat(f float64) json.RawMessage { return json.RawMessage(ojson.AppendFloat(nil, f)) }

// logprob is the deterministic log probability of the i-th generated token of choice c:
// −k/10000 for the k in [1, 20000] this returns, derived from the request and the position.
func (e *engineAnswer) logprob(c, i int) int {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(c))
	binary.BigEndian.PutUint64(b[8:], uint64(i))
	h := sha256.Sum256(append(e.seed[:], b[:]...))
	return 1 + int(binary.BigEndian.Uint64(h[:8])%20000)
}

// alternatives are the pieces the top_logprobs lists offer after the sampled token.
var alternatives = tokenize(" the a , . and to of I\n is in it that for you was with on as")

// ranked is one entry of a top_logprobs list.
type ranked struct {
	tok token
	lp  float64
}

// sampled returns the log probability of token g at position i of choice c and, when
// top_logprobs asks for k > 0, the k-entry list: g first, then alternatives, each 1.25 lower
// than the one before (every value a multiple of 0.0001, so its decimal text is short).
func (e *engineAnswer) sampled(c, i int, g token) (float64, []ranked) {
	k := e.logprob(c, i)
	lp := -float64(k) / 10000
	if e.tr.topLogprobs <= 0 {
		return lp, nil
	}
	top := []ranked{{g, lp}}
	for _, alt := range alternatives {
		if len(top) == e.tr.topLogprobs {
			break
		}
		if alt.id != g.id {
			top = append(top, ranked{alt, -float64(k+12500*len(top)) / 10000})
		}
	}
	return lp, top
}

// logprobsObject is {"content": [entry…]} for tokens [from, to) of choice c, or nil when the
// request did not ask for log probs; entry shapes one token's entry in the engine's way.
func (e *engineAnswer) logprobsObject(c, from, to int, entry func(g token, lp float64, top []ranked) obj) any {
	if !e.tr.logprobs {
		return nil
	}
	content := arr{}
	for i := from; i < to; i++ {
		g := e.choices[c].gen[i].token
		lp, top := e.sampled(c, i, g)
		content = append(content, entry(g, lp, top))
	}
	return obj{{"content", content}}
}

// byteList is b as a JSON array of integers ([] for none).
func byteList(b []byte) arr {
	out := arr{}
	for _, x := range b {
		out = append(out, int(x))
	}
	return out
}

// routedExperts is SGLang's sglext.routed_experts for the prompt and generation: base64 of
// little-endian int32 expert ids, two layers × two experts per token (deterministic).
func (e *engineAnswer) routedExperts() string {
	n := len(e.prompt) + len(e.choices[0].gen)
	b := make([]byte, 0, n*16)
	for i := range n * 4 {
		b = binary.LittleEndian.AppendUint32(b, uint32((i*7+int(e.seed[i%32]))%64))
	}
	return base64.StdEncoding.EncodeToString(b)
}
