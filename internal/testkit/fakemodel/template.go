package fakemodel

import (
	"bytes"
	"encoding/json"
)

// The chat template: ChatML, as Qwen2.5 and Qwen3 render it, on the tokens of tokenizer.go.
//
// A conversation renders as
//
//	[<|endoftext|>]                                   only with add_special_tokens: true
//	<|im_start|>system\n# Tools\n<tools>\n{tool}…\n</tools><|im_end|>\n
//	                                                  only when the request offers tools
//	<|im_start|>ROLE\nCONTENT<|im_end|>\n             one per message
//	<|im_start|>assistant\n                           the generation prompt (add_generation_prompt,
//	                                                  default true)
//
// where a "tool" message renders as a user turn "<tool_response>\nCONTENT\n</tool_response>",
// and an assistant message as its content followed, per tool call, by
// "<tool_call>\n{"name": "NAME", "arguments": ARGUMENTS}\n</tool_call>" ("\n" between parts).
// Every part is tokenized on its own, with the special tokens between, so a message's tokens do
// not depend on its neighbours.
//
// A generation is the answer's tokens, then <|im_end|> (the end-of-turn token, counted as
// generated, as vLLM's token_ids carry it): reasoning as "<think>\nREASONING\n</think>\n\n",
// then the content, or the tool call rendered as above. So when the client appends the
// assistant message it received (content and tool calls as sent) and a new user message, the
// next prompt is exactly the previous prompt + the previous generation + "\n" +
// "<|im_start|>user\n…": prompt k+1 extends prompt k + generation k token by token, as a real
// chat template does.
//
// Two things break that prefix, as they do in life: the template drops the reasoning of
// earlier assistant turns (Qwen3's template does), so a turn that reasoned is re-rendered
// without its <think> block; and add_special_tokens: true (a vLLM request flag) prepends the
// BOS token, so switching it between turns re-tokenizes the whole history.

// chatTurn is one message as the template sees it.
type chatTurn struct {
	role    string
	content string
	calls   []templateCall
}

// templateCall is one tool call of an assistant message.
type templateCall struct {
	name      string
	arguments string // the JSON text as the client sent it
}

// genKind says what part of a generation a token belongs to.
type genKind int

const (
	genMarker    genKind = iota // <|im_end|>, <think>, </think> and the newlines around the reasoning
	genReasoning                // reasoning text
	genContent                  // visible content
	genCallName                 // the template text carrying the call's name (kinds from here on are a call's)
	genCallArgs                 // the call's arguments text
	genCallOther                // <tool_call>, </tool_call> and the template text after the arguments
)

// genToken is one generated token and its part.
type genToken struct {
	token
	kind genKind
}

// readTurns reads chat messages; a message that is not an object of the Chat API's member types
// (role a string, tool_calls[].function.arguments a string, …) is a 400.
func readTurns(raw json.RawMessage) ([]chatTurn, *apiError) {
	var messages []struct {
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		ToolCalls []struct {
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	}
	if err := json.Unmarshal(raw, &messages); err != nil {
		return nil, &apiError{status: 400, message: "messages: " + err.Error(), param: "messages"}
	}
	turns := make([]chatTurn, 0, len(messages))
	for _, m := range messages {
		t := chatTurn{role: m.Role, content: textOf(m.Content)}
		for _, c := range m.ToolCalls {
			t.calls = append(t.calls, templateCall{c.Function.Name, c.Function.Arguments})
		}
		turns = append(turns, t)
	}
	return turns, nil
}

// renderPrompt renders turns (and the offered tools, a JSON array or empty) as prompt tokens.
func renderPrompt(turns []chatTurn, tools json.RawMessage, bos, generationPrompt bool) []token {
	var out []token
	if bos {
		out = append(out, special(tokEndOfText))
	}
	open := func(role string) {
		out = append(out, special(tokIMStart))
		out = append(out, tokenize(role+"\n")...)
	}
	closeTurn := func() {
		out = append(out, special(tokIMEnd))
		out = append(out, tokenize("\n")...)
	}
	var list []json.RawMessage
	if json.Unmarshal(tools, &list) == nil && len(list) > 0 {
		open("system")
		out = append(out, tokenize("# Tools\n<tools>")...)
		for _, t := range list {
			var b bytes.Buffer
			if json.Compact(&b, t) == nil {
				out = append(out, tokenize("\n"+b.String())...)
			}
		}
		out = append(out, tokenize("\n</tools>")...)
		closeTurn()
	}
	for _, t := range turns {
		switch t.role {
		case "tool":
			open("user")
			out = append(out, tokenize("<tool_response>\n"+t.content+"\n</tool_response>")...)
		case "assistant":
			open("assistant")
			out = append(out, tokenize(t.content)...)
			for i, c := range t.calls {
				if i > 0 || t.content != "" {
					out = append(out, tokenize("\n")...)
				}
				for _, g := range callTokens(c) {
					out = append(out, g.token)
				}
			}
		default:
			open(t.role)
			out = append(out, tokenize(t.content)...)
		}
		closeTurn()
	}
	if generationPrompt {
		open("assistant")
	}
	return out
}

// callTokens are the tokens of one tool call block.
func callTokens(c templateCall) []genToken {
	out := []genToken{{special(tokToolCall), genCallOther}}
	out = appendKind(out, tokenize("\n{\"name\": \""+c.name+"\", \"arguments\": "), genCallName)
	out = appendKind(out, tokenize(c.arguments), genCallArgs)
	out = appendKind(out, tokenize("}\n"), genCallOther)
	return append(out, genToken{special(tokToolCallEnd), genCallOther})
}

// appendKind appends toks as generated tokens of kind k.
func appendKind(out []genToken, toks []token, k genKind) []genToken {
	for _, t := range toks {
		out = append(out, genToken{t, k})
	}
	return out
}

// generation is the full generation of a (before any output limit), ending with <|im_end|>.
func generation(a answer) []genToken {
	var out []genToken
	if a.reasons {
		out = append(out, genToken{special(tokThink), genMarker})
		out = appendKind(out, tokenize("\n"), genMarker)
		out = appendKind(out, tokenize(a.reasoning), genReasoning)
		out = appendKind(out, tokenize("\n"), genMarker)
		out = append(out, genToken{special(tokThinkEnd), genMarker})
		out = appendKind(out, tokenize("\n\n"), genMarker)
	}
	out = appendKind(out, tokenize(a.text), genContent)
	if a.call != nil {
		out = append(out, callTokens(templateCall{a.call.name, a.call.arguments})...)
	}
	return append(out, genToken{special(tokIMEnd), genMarker})
}
