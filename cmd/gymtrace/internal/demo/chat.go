package demo

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// chatConversation speaks OpenAI Chat Completions (POST /v1/chat/completions) as an agent in
// front of a vLLM-style server does: reasoning comes back as reasoning_content, streamed calls ask
// for the usage chunk with stream_options.include_usage.
type chatConversation struct {
	messages  []any
	compacted bool // the history was replaced by a summary: no more tool calls
}

func newChatConversation(t task) *chatConversation {
	return &chatConversation{messages: []any{chatMessage{Role: "user", Content: t.prompt}}}
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatAssistantMessage struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	ToolCalls []chatToolCall `json:"tool_calls,omitempty"`
}

type chatToolMessage struct {
	Role       string `json:"role"`
	ToolCallID string `json:"tool_call_id"`
	Content    string `json:"content"`
}

type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type chatStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatRequest struct {
	Model               string             `json:"model"`
	Messages            []any              `json:"messages"`
	Tools               []chatTool         `json:"tools"`
	ToolChoice          string             `json:"tool_choice,omitempty"`
	ReasoningEffort     string             `json:"reasoning_effort"`
	MaxCompletionTokens int                `json:"max_completion_tokens"`
	Stream              bool               `json:"stream,omitempty"`
	StreamOptions       *chatStreamOptions `json:"stream_options,omitempty"`
}

func (*chatConversation) path() string { return "/chat/completions" }

// request is a request with the history so far under a system message (see conversation.request);
// tool_choice "none" still offers the tool: the history may hold its calls.
func (cv *chatConversation) request(stream, summary bool) any {
	var tool chatTool
	tool.Type = "function"
	tool.Function.Name, tool.Function.Description = toolName, toolDescription
	tool.Function.Parameters = json.RawMessage(toolSchema)
	req := chatRequest{
		Model:               chatModel,
		Messages:            append([]any{chatMessage{Role: "system", Content: instructions(summary)}}, cv.messages...),
		Tools:               []chatTool{tool},
		ReasoningEffort:     "low",
		MaxCompletionTokens: maxOutputTokens,
		Stream:              stream,
	}
	if stream {
		req.StreamOptions = &chatStreamOptions{IncludeUsage: true}
	}
	if summary || cv.compacted {
		req.ToolChoice = "none"
	}
	return req
}

// chatUsage is the usage object of a Chat answer.
type chatUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (u *chatUsage) usage() Usage {
	return Usage{
		InputTokens:     u.PromptTokens,
		OutputTokens:    u.CompletionTokens,
		ReasoningTokens: int64Ptr(u.CompletionTokensDetails.ReasoningTokens),
		CachedTokens:    u.PromptTokensDetails.CachedTokens,
	}
}

// finish adds the assistant turn of c (choice 0) to the history.
func (cv *chatConversation) finish(c *Call) {
	msg := chatAssistantMessage{Role: "assistant"}
	if c.Text != "" {
		msg.Content = &c.Text
	}
	for _, tc := range c.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, chatToolCall{ID: tc.ID, Type: "function", Function: chatFunction{Name: tc.Name, Arguments: tc.Arguments}})
	}
	cv.messages = append(cv.messages, msg)
}

func (cv *chatConversation) readJSON(r io.Reader, c *Call) error {
	var o struct {
		ID      string `json:"id"`
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content          string         `json:"content"` // null reads as ""
				ReasoningContent string         `json:"reasoning_content"`
				Reasoning        string         `json:"reasoning"` // vLLM's name since it dropped reasoning_content
				ToolCalls        []chatToolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage *chatUsage `json:"usage"`
	}
	if err := readJSON(r, &o); err != nil {
		return err
	}
	if len(o.Choices) == 0 || o.Usage == nil {
		return fmt.Errorf("chat completion %s has no choices or no usage", o.ID)
	}
	ch := o.Choices[0]
	c.ResponseID, c.Model, c.FinishReason = o.ID, o.Model, ch.FinishReason
	c.Text, c.Reasoning = ch.Message.Content, cmp.Or(ch.Message.ReasoningContent, ch.Message.Reasoning)
	for _, tc := range ch.Message.ToolCalls {
		c.ToolCalls = append(c.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	c.Usage = o.Usage.usage()
	cv.finish(c)
	return nil
}

// readStream reads chat.completion.chunk events until "data: [DONE]", accumulating choice 0's
// content, reasoning_content and tool calls (by tool index), its finish_reason and the usage chunk.
func (cv *chatConversation) readStream(r io.Reader, c *Call) error {
	var text, reasoning strings.Builder
	type partial struct {
		id, name string
		args     strings.Builder
	}
	calls := map[int]*partial{}
	var usage *chatUsage
	err := readEvents(r, maxSSEEvent, "data: [DONE]", func(ev sseEvent) (bool, error) {
		if ev.data == "[DONE]" {
			return true, nil
		}
		var chunk struct {
			ID      string          `json:"id"`
			Model   string          `json:"model"`
			Error   json.RawMessage `json:"error"`
			Choices []struct {
				Index int `json:"index"`
				Delta struct {
					Content          string `json:"content"` // null reads as ""
					ReasoningContent string `json:"reasoning_content"`
					Reasoning        string `json:"reasoning"` // vLLM's name since it dropped reasoning_content
					ToolCalls        []struct {
						Index    int    `json:"index"`
						ID       string `json:"id"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *chatUsage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(ev.data), &chunk); err != nil {
			return false, fmt.Errorf("chunk: %w", err)
		}
		if len(chunk.Error) > 0 && string(chunk.Error) != "null" {
			return false, fmt.Errorf("stream error: %s", chunk.Error)
		}
		c.ResponseID, c.Model = chunk.ID, chunk.Model
		if chunk.Usage != nil {
			usage = chunk.Usage
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			text.WriteString(ch.Delta.Content)
			reasoning.WriteString(cmp.Or(ch.Delta.ReasoningContent, ch.Delta.Reasoning))
			for _, d := range ch.Delta.ToolCalls {
				p := calls[d.Index]
				if p == nil {
					p = &partial{}
					calls[d.Index] = p
				}
				p.id, p.name = cmp.Or(d.ID, p.id), cmp.Or(d.Function.Name, p.name)
				p.args.WriteString(d.Function.Arguments)
			}
			if ch.FinishReason != nil {
				c.FinishReason = *ch.FinishReason
			}
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	if usage == nil {
		return errors.New("stream has no usage chunk (stream_options.include_usage was set)")
	}
	c.Text, c.Reasoning, c.Usage = text.String(), reasoning.String(), usage.usage()
	for _, i := range slices.Sorted(maps.Keys(calls)) {
		p := calls[i]
		c.ToolCalls = append(c.ToolCalls, ToolCall{ID: p.id, Name: p.name, Arguments: p.args.String()})
	}
	cv.finish(c)
	return nil
}

func (cv *chatConversation) addToolResult(tc ToolCall, result string) {
	cv.messages = append(cv.messages, chatToolMessage{Role: "tool", ToolCallID: tc.ID, Content: result})
}

func (cv *chatConversation) compact(summary string) {
	cv.messages = []any{chatMessage{Role: "user", Content: compactedPrefix + summary}}
	cv.compacted = true
}
