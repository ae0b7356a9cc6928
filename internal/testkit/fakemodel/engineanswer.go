package fakemodel

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
)

// engineAnswer is a tokenized answer of the vLLM and SGLang engines.
type engineAnswer struct {
	tr       tokenRequest
	prompt   []token
	choices  []engineChoice
	seed     [32]byte
	noInline bool // a vLLM release without return_token_ids ([WithoutInlineTokenIDs])
	// maxTokens is a Responses answer's sampling limit (max_output_tokens, else what is left of
	// the context), echoed as max_output_tokens.
	maxTokens int
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
func planEngine(r *request, cfg *config) (*engineAnswer, *apiError) {
	maxLen := cfg.modelLen()
	tr, err := readTokenRequest(r)
	if err != nil {
		return nil, err
	}
	noInline := cfg.noInlineIDs && r.engine == EngineVLLM
	if noInline {
		tr.returnTokenIDs = false // an unknown member, which vLLM ignores
	}
	turns, err := readTurns(r.fields["messages"])
	if err != nil {
		return nil, err
	}
	e := &engineAnswer{tr: tr, seed: sha256.Sum256(r.seed()), noInline: noInline}
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
