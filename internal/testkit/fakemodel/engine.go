package fakemodel

import "fmt"

// Engine names the server software the fake answers as. The default, [EngineOpenAI], is the
// behaviour the Server has always had (OpenAI's and Anthropic's own APIs); [EngineVLLM] and
// [EngineSGLang] change the Chat Completions answer (JSON and stream), add the tokenize
// endpoint and the token-id members of those servers; [EngineVLLM] answers /v1/responses in vLLM's
// shapes too; /v1/messages stays as it is (see doc.go, "Engines").
type Engine string

// The engines.
const (
	EngineOpenAI Engine = "openai" // OpenAI / Anthropic shapes, no token ids (the default)
	EngineVLLM   Engine = "vllm"   // vLLM's OpenAI-compatible server
	EngineSGLang Engine = "sglang" // SGLang's OpenAI-compatible server
)

// ParseEngine returns the Engine named s ("openai", "vllm" or "sglang"; "" is "openai"), or an
// error naming the accepted values. It is the knob for a command-line flag or a JSON config.
func ParseEngine(s string) (Engine, error) {
	switch e := Engine(s); e {
	case "":
		return EngineOpenAI, nil
	case EngineOpenAI, EngineVLLM, EngineSGLang:
		return e, nil
	}
	return "", fmt.Errorf("fakemodel: unknown engine %q (want openai, vllm or sglang)", s)
}

// defaultMaxModelLen is the context length (prompt + generation tokens) of the vLLM and SGLang
// engines unless [WithMaxModelLen] says otherwise: 32768, as Qwen2.5/Qwen3 models serve it.
const defaultMaxModelLen = 32768

// WithEngine makes the Server answer as e (default [EngineOpenAI]). An unknown e is treated as
// [EngineOpenAI]; use [ParseEngine] to validate a name first.
func WithEngine(e Engine) Option {
	return func(c *config) {
		switch e {
		case EngineVLLM, EngineSGLang:
			c.engine = e
		default:
			c.engine = EngineOpenAI
		}
	}
}

// WithMaxModelLen sets the context length of the vLLM and SGLang engines: a chat request whose
// prompt has n ≥ max tokens, or whose max_tokens/max_completion_tokens m exceeds max − n, is
// answered with HTTP 400 and the engine's "maximum context length" error. Default 32768; a
// value < 1 restores the default. No effect on [EngineOpenAI].
func WithMaxModelLen(max int) Option {
	return func(c *config) { c.maxModelLen = max }
}

// WithoutInlineTokenIDs makes the vLLM engine a release before v0.10.2, which has no
// "return_token_ids" (added by vllm-project/vllm PR #22587): the member is ignored, as vLLM
// ignores unknown members, and answers carry neither prompt_token_ids nor token_ids, not even as
// null. Token ids then come only from log probs with "return_tokens_as_token_ids" and from
// /tokenize (TOKENS.md §1.5). No effect on the other engines.
func WithoutInlineTokenIDs() Option {
	return func(c *config) { c.noInlineIDs = true }
}

// modelLen is the configured context length.
func (c *config) modelLen() int {
	if c.maxModelLen < 1 {
		return defaultMaxModelLen
	}
	return c.maxModelLen
}
