package fakemodel

import (
	"encoding/json"
	"fmt"
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
	responseMessages     bool // vLLM Responses "enable_response_messages"
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
