package e2e

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"
)

// callResult is what one model call produced, in the terms of a ModelCallRecord (SPEC.md §3.2):
// built once from what the client received (via the SDK's types) and once from the capture
// record's stored response (independently, by the SPEC's shape rules), and compared.
type callResult struct {
	Dialect         string
	Stream          bool
	Model           string
	ResponseID      string
	FinishReason    *string // stop_reason / choices[0].finish_reason / incomplete_details.reason
	Text            string  // the visible answer
	TokensIn        *int64
	TokensOut       *int64
	TokensTotal     *int64
	TokensReasoning *int64 // nil = unknown (Anthropic)
	CachedTokens    *int64
	CacheCreation   *int64 // Anthropic cache_creation_input_tokens
	ToolCalls       []toolCall
	Reasoning       *string // reasoning_content (§3.6)
}

// toolCall is a ModelCallRecord tool call (SPEC.md §3.6 key order: call_id, name, arguments).
type toolCall struct {
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments any    `json:"arguments"`
}

func ptr[T any](v T) *T { return &v }

// decodeJSON decodes JSON text with numbers kept as json.Number (as records are compared).
func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v), "JSON: %s", s)
	return v
}

// fromResponse is the result of a Responses API answer as the openai-go client sees it.
func fromResponse(t *testing.T, r responses.Response, stream bool) callResult {
	t.Helper()
	res := callResult{
		Dialect:         "responses",
		Stream:          stream,
		Model:           string(r.Model),
		ResponseID:      r.ID,
		Text:            r.OutputText(),
		TokensIn:        ptr(r.Usage.InputTokens),
		TokensOut:       ptr(r.Usage.OutputTokens),
		TokensTotal:     ptr(r.Usage.TotalTokens),
		TokensReasoning: ptr(r.Usage.OutputTokensDetails.ReasoningTokens),
		CachedTokens:    ptr(r.Usage.InputTokensDetails.CachedTokens),
		ToolCalls:       []toolCall{},
	}
	if reason := string(r.IncompleteDetails.Reason); reason != "" {
		res.FinishReason = &reason
	}
	var summaries []string
	for _, item := range r.Output {
		switch item.Type {
		case "function_call":
			fc := item.AsFunctionCall()
			id := fc.CallID
			if id == "" {
				id = fc.ID
			}
			res.ToolCalls = append(res.ToolCalls, toolCall{id, fc.Name, decodeJSON(t, fc.Arguments)})
		case "reasoning":
			for _, s := range item.AsReasoning().Summary {
				if s.Text != "" {
					summaries = append(summaries, s.Text)
				}
			}
		}
	}
	if len(summaries) > 0 {
		res.Reasoning = ptr(strings.Join(summaries, "\n"))
	}
	return res
}

// fromChat is the result of a Chat Completions answer as the openai-go client sees it;
// reasoning is the reasoning_content the client collected ("" = none).
func fromChat(t *testing.T, c openai.ChatCompletion, stream bool, reasoning string) callResult {
	t.Helper()
	require.NotEmpty(t, c.Choices)
	res := callResult{
		Dialect:         "chat",
		Stream:          stream,
		Model:           c.Model,
		ResponseID:      c.ID,
		FinishReason:    ptr(c.Choices[0].FinishReason),
		Text:            c.Choices[0].Message.Content,
		TokensIn:        ptr(c.Usage.PromptTokens),
		TokensOut:       ptr(c.Usage.CompletionTokens),
		TokensTotal:     ptr(c.Usage.TotalTokens),
		TokensReasoning: ptr(c.Usage.CompletionTokensDetails.ReasoningTokens),
		CachedTokens:    ptr(c.Usage.PromptTokensDetails.CachedTokens),
		ToolCalls:       []toolCall{},
	}
	for _, ch := range c.Choices {
		for _, tc := range ch.Message.ToolCalls {
			res.ToolCalls = append(res.ToolCalls, toolCall{tc.ID, tc.Function.Name, decodeJSON(t, tc.Function.Arguments)})
		}
	}
	if reasoning != "" {
		res.Reasoning = &reasoning
	}
	return res
}

// chatReasoning returns the vLLM-style reasoning_content extra field of a message or delta
// ("" when absent).
func chatReasoning(t *testing.T, raw string) string {
	t.Helper()
	if raw == "" || raw == "null" {
		return ""
	}
	var s string
	require.NoError(t, json.Unmarshal([]byte(raw), &s))
	return s
}

// fromMessage is the result of an Anthropic Messages answer as anthropic-sdk-go sees it.
func fromMessage(t *testing.T, m anthropic.Message, stream bool) callResult {
	t.Helper()
	u := m.Usage
	in := u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens // SPEC §3.5 cache fold
	res := callResult{
		Dialect:       "messages",
		Stream:        stream,
		Model:         string(m.Model),
		ResponseID:    m.ID,
		FinishReason:  ptr(string(m.StopReason)),
		TokensIn:      ptr(in),
		TokensOut:     ptr(u.OutputTokens),
		TokensTotal:   ptr(in + u.OutputTokens),
		CachedTokens:  ptr(u.CacheReadInputTokens),
		CacheCreation: ptr(u.CacheCreationInputTokens),
		ToolCalls:     []toolCall{},
	}
	var texts, thinking []string
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "thinking":
			thinking = append(thinking, b.Thinking)
		case "tool_use":
			input := string(bytes.TrimSpace(b.Input))
			if input == "" {
				input = "{}"
			}
			res.ToolCalls = append(res.ToolCalls, toolCall{b.ID, b.Name, decodeJSON(t, input)})
		}
	}
	res.Text = strings.Join(texts, "")
	if r := strings.Join(thinking, "\n"); r != "" {
		res.Reasoning = &r
	}
	return res
}
