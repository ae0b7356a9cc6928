package demo

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// messagesConversation speaks Anthropic Messages (POST /v1/messages) with extended thinking and a
// prompt-cached tool definition. Assistant turns are sent back whole, thinking blocks with their
// signatures included, as the API requires for tool use with thinking.
type messagesConversation struct {
	messages  []messagesMessage
	compacted bool // the history was replaced by a summary: no more tool calls
}

func newMessagesConversation(t task) *messagesConversation {
	return &messagesConversation{messages: []messagesMessage{{Role: "user", Content: t.prompt}}}
}

// messagesMessage is one message; Content is a string or a list of blocks.
type messagesMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// messagesBlock is a content block the agent sends back: text, thinking, tool_use or tool_result.
type messagesBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  string          `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
}

type messagesCacheControl struct {
	Type string `json:"type"`
}

type messagesTool struct {
	Name         string                `json:"name"`
	Description  string                `json:"description"`
	InputSchema  json.RawMessage       `json:"input_schema"`
	CacheControl *messagesCacheControl `json:"cache_control,omitempty"`
}

type messagesThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type messagesRequest struct {
	Model      string              `json:"model"`
	MaxTokens  int                 `json:"max_tokens"`
	System     string              `json:"system"`
	Messages   []messagesMessage   `json:"messages"`
	Tools      []messagesTool      `json:"tools"`
	ToolChoice *messagesToolChoice `json:"tool_choice,omitempty"`
	Thinking   messagesThinking    `json:"thinking"`
	Stream     bool                `json:"stream,omitempty"`
}

func (*messagesConversation) path() string { return "/messages" }

// messagesToolChoice is the request's tool_choice, e.g. {"type": "none"}.
type messagesToolChoice struct {
	Type string `json:"type"`
}

// request is a request with the history so far under a system prompt (see conversation.request);
// tool_choice {"type": "none"} still offers the tool: the API requires tool definitions for a
// history holding tool_use blocks.
func (cv *messagesConversation) request(stream, summary bool) any {
	req := messagesRequest{
		Model:     messagesModel,
		MaxTokens: maxOutputTokens,
		System:    instructions(summary),
		Messages:  append([]messagesMessage(nil), cv.messages...),
		Tools: []messagesTool{{
			Name: toolName, Description: toolDescription, InputSchema: json.RawMessage(toolSchema),
			CacheControl: &messagesCacheControl{Type: "ephemeral"},
		}},
		Thinking: messagesThinking{Type: "enabled", BudgetTokens: 1024},
		Stream:   stream,
	}
	if summary || cv.compacted {
		req.ToolChoice = &messagesToolChoice{Type: "none"}
	}
	return req
}

// messagesUsage is the usage object of an Anthropic answer (message_delta carries output_tokens,
// and may repeat the others).
type messagesUsage struct {
	InputTokens              *int64 `json:"input_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
}

// merge takes the fields v carries.
func (u *messagesUsage) merge(v *messagesUsage) {
	if v == nil {
		return
	}
	u.InputTokens = cmp.Or(v.InputTokens, u.InputTokens)
	u.CacheCreationInputTokens = cmp.Or(v.CacheCreationInputTokens, u.CacheCreationInputTokens)
	u.CacheReadInputTokens = cmp.Or(v.CacheReadInputTokens, u.CacheReadInputTokens)
	u.OutputTokens = cmp.Or(v.OutputTokens, u.OutputTokens)
}

func (u *messagesUsage) usage() (Usage, error) {
	if u.InputTokens == nil || u.OutputTokens == nil {
		return Usage{}, errors.New("usage lacks input_tokens or output_tokens")
	}
	out := Usage{InputTokens: *u.InputTokens, OutputTokens: *u.OutputTokens, CacheCreationTokens: u.CacheCreationInputTokens}
	if u.CacheReadInputTokens != nil {
		out.CachedTokens = *u.CacheReadInputTokens
	}
	return out, nil
}

// incomingBlock is a content block of an answer.
type incomingBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

// finish fills c from the answer's blocks and adds the assistant turn to the history.
func (cv *messagesConversation) finish(blocks []incomingBlock, c *Call) {
	var text, thinking []string
	var back []messagesBlock
	for _, b := range blocks {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
			back = append(back, messagesBlock{Type: "text", Text: b.Text})
		case "thinking":
			thinking = append(thinking, b.Thinking)
			back = append(back, messagesBlock{Type: "thinking", Thinking: b.Thinking, Signature: b.Signature})
		case "tool_use":
			input := b.Input
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			c.ToolCalls = append(c.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: string(input)})
			back = append(back, messagesBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: input})
		}
	}
	c.Text, c.Reasoning = strings.Join(text, "\n"), strings.Join(thinking, "\n")
	cv.messages = append(cv.messages, messagesMessage{Role: "assistant", Content: back})
}

func (cv *messagesConversation) readJSON(r io.Reader, c *Call) error {
	var o struct {
		ID         string          `json:"id"`
		Model      string          `json:"model"`
		Content    []incomingBlock `json:"content"`
		StopReason string          `json:"stop_reason"`
		Usage      messagesUsage   `json:"usage"`
	}
	if err := readJSON(r, &o); err != nil {
		return err
	}
	u, err := o.Usage.usage()
	if err != nil {
		return fmt.Errorf("message %s: %w", o.ID, err)
	}
	c.ResponseID, c.Model, c.FinishReason, c.Usage = o.ID, o.Model, o.StopReason, u
	cv.finish(o.Content, c)
	return nil
}

// readStream reads message_start, content_block_start/delta/stop, message_delta and message_stop
// events, rebuilding the content blocks by index (tool input from its partial_json deltas).
func (cv *messagesConversation) readStream(r io.Reader, c *Call) error {
	var (
		blocks  []incomingBlock
		partial = map[int]string{} // tool_use input JSON by block index
		usage   messagesUsage
		started bool
	)
	return readEvents(r, maxSSEEvent, "message_stop", func(ev sseEvent) (bool, error) {
		var e struct {
			Type    string `json:"type"`
			Message *struct {
				ID    string        `json:"id"`
				Model string        `json:"model"`
				Usage messagesUsage `json:"usage"`
			} `json:"message"`
			Index        int            `json:"index"`
			ContentBlock *incomingBlock `json:"content_block"`
			Delta        *struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				Thinking    string `json:"thinking"`
				Signature   string `json:"signature"`
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
			Usage *messagesUsage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(ev.data), &e); err != nil {
			return false, fmt.Errorf("event %q: %w", ev.name, err)
		}
		if ev.name != "" && ev.name != e.Type {
			return false, fmt.Errorf("event name %q but data type %q", ev.name, e.Type)
		}
		switch e.Type {
		case "message_start":
			if e.Message == nil {
				return false, errors.New("message_start without message")
			}
			started = true
			c.ResponseID, c.Model = e.Message.ID, e.Message.Model
			usage.merge(&e.Message.Usage)
		case "content_block_start":
			if e.ContentBlock == nil || e.Index != len(blocks) {
				return false, fmt.Errorf("content_block_start with index %d, want %d", e.Index, len(blocks))
			}
			blocks = append(blocks, *e.ContentBlock)
			if e.ContentBlock.Type == "tool_use" {
				partial[e.Index] = ""
			}
		case "content_block_delta":
			if e.Delta == nil || e.Index < 0 || e.Index >= len(blocks) {
				return false, fmt.Errorf("content_block_delta for unknown block %d", e.Index)
			}
			b := &blocks[e.Index]
			switch e.Delta.Type {
			case "text_delta":
				b.Text += e.Delta.Text
			case "thinking_delta":
				b.Thinking += e.Delta.Thinking
			case "signature_delta":
				b.Signature += e.Delta.Signature
			case "input_json_delta":
				if p, ok := partial[e.Index]; ok {
					partial[e.Index] = p + e.Delta.PartialJSON
				}
			}
		case "content_block_stop":
			if p, ok := partial[e.Index]; ok && e.Index < len(blocks) {
				blocks[e.Index].Input = nil
				if p != "" {
					if !json.Valid([]byte(p)) {
						return false, fmt.Errorf("tool_use input %q is not JSON", p)
					}
					blocks[e.Index].Input = json.RawMessage(p)
				}
			}
		case "message_delta":
			if e.Delta != nil {
				c.FinishReason = e.Delta.StopReason
			}
			usage.merge(e.Usage)
		case "error":
			return false, fmt.Errorf("stream error event: %s", ev.data)
		case "message_stop":
			if !started {
				return false, errors.New("message_stop before message_start")
			}
			u, err := usage.usage()
			if err != nil {
				return false, err
			}
			c.Usage = u
			cv.finish(blocks, c)
			return true, nil
		}
		return false, nil
	})
}

func (cv *messagesConversation) addToolResult(tc ToolCall, result string) {
	block := messagesBlock{Type: "tool_result", ToolUseID: tc.ID, Content: result}
	// Tool results of one assistant turn go together in one user message.
	if n := len(cv.messages); n > 0 && cv.messages[n-1].Role == "user" {
		if blocks, ok := cv.messages[n-1].Content.([]messagesBlock); ok {
			cv.messages[n-1].Content = append(blocks, block)
			return
		}
	}
	cv.messages = append(cv.messages, messagesMessage{Role: "user", Content: []messagesBlock{block}})
}

func (cv *messagesConversation) compact(summary string) {
	cv.messages = []messagesMessage{{Role: "user", Content: compactedPrefix + summary}}
	cv.compacted = true
}
