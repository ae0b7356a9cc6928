package demo

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// responsesConversation speaks the OpenAI Responses API (POST /v1/responses) statelessly: store
// is false and every call sends the whole input list, as an agent that keeps its own history does.
type responsesConversation struct {
	input     []any
	compacted bool // the history was replaced by a summary: no more tool calls
}

func newResponsesConversation(t task) *responsesConversation {
	return &responsesConversation{input: []any{
		responsesMessage{Type: "message", Role: "user", Content: t.prompt},
	}}
}

type responsesMessage struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content string `json:"content"`
}

type responsesFunctionCall struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type responsesFunctionCallOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

type responsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

type responsesReasoning struct {
	Effort  string `json:"effort"`
	Summary string `json:"summary"`
}

type responsesRequest struct {
	Model           string             `json:"model"`
	Instructions    string             `json:"instructions"`
	Input           []any              `json:"input"`
	Tools           []responsesTool    `json:"tools"`
	ToolChoice      string             `json:"tool_choice,omitempty"`
	Reasoning       responsesReasoning `json:"reasoning"`
	MaxOutputTokens int                `json:"max_output_tokens"`
	Store           bool               `json:"store"`
	Stream          bool               `json:"stream,omitempty"`
}

func (*responsesConversation) path() string { return "/responses" }

// request is a request with the history so far under instructions (see conversation.request);
// tool_choice "none" still offers the tool: the history may hold its calls.
func (cv *responsesConversation) request(stream, summary bool) any {
	req := responsesRequest{
		Model:        responsesModel,
		Instructions: instructions(summary),
		Input:        append([]any(nil), cv.input...),
		Tools: []responsesTool{{
			Type: "function", Name: toolName, Description: toolDescription,
			Parameters: json.RawMessage(toolSchema), Strict: true,
		}},
		Reasoning:       responsesReasoning{Effort: "low", Summary: "auto"},
		MaxOutputTokens: maxOutputTokens,
		Stream:          stream,
	}
	if summary || cv.compacted {
		req.ToolChoice = "none"
	}
	return req
}

// responsesObject is the part of a Responses "response" object the agent reads.
type responsesObject struct {
	ID                string `json:"id"`
	Model             string `json:"model"`
	Status            string `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Output []struct {
		ID        string `json:"id"`
		Type      string `json:"type"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
		Summary   []struct {
			Text string `json:"text"`
		} `json:"summary"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"output"`
	Usage *struct {
		InputTokens        int64 `json:"input_tokens"`
		InputTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokens        int64 `json:"output_tokens"`
		OutputTokensDetails struct {
			ReasoningTokens int64 `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
	} `json:"usage"`
}

// apply fills c from a finished response and adds its function calls to the history.
func (cv *responsesConversation) apply(o *responsesObject, c *Call) error {
	if o.Status != "completed" && o.Status != "incomplete" {
		return fmt.Errorf("response %s has status %q", o.ID, o.Status)
	}
	c.ResponseID, c.Model = o.ID, o.Model
	if o.IncompleteDetails != nil {
		c.FinishReason = o.IncompleteDetails.Reason
	}
	var text, reasoning []string
	for _, it := range o.Output {
		switch it.Type {
		case "reasoning":
			for _, s := range it.Summary {
				if s.Text != "" {
					reasoning = append(reasoning, s.Text)
				}
			}
		case "function_call":
			c.ToolCalls = append(c.ToolCalls, ToolCall{ID: it.CallID, Name: it.Name, Arguments: it.Arguments})
			cv.input = append(cv.input, responsesFunctionCall{Type: "function_call", CallID: it.CallID, Name: it.Name, Arguments: it.Arguments})
		case "message":
			for _, p := range it.Content {
				if p.Type == "output_text" {
					text = append(text, p.Text)
				}
			}
		}
	}
	c.Text, c.Reasoning = strings.Join(text, ""), strings.Join(reasoning, "\n")
	if o.Usage == nil {
		return fmt.Errorf("response %s has no usage", o.ID)
	}
	c.Usage = Usage{
		InputTokens:     o.Usage.InputTokens,
		OutputTokens:    o.Usage.OutputTokens,
		ReasoningTokens: int64Ptr(o.Usage.OutputTokensDetails.ReasoningTokens),
		CachedTokens:    o.Usage.InputTokensDetails.CachedTokens,
	}
	return nil
}

func (cv *responsesConversation) readJSON(r io.Reader, c *Call) error {
	var o responsesObject
	if err := readJSON(r, &o); err != nil {
		return err
	}
	return cv.apply(&o, c)
}

// readStream reads response.* events until response.completed or response.incomplete, checking
// that the text and argument deltas add up to the final response.
func (cv *responsesConversation) readStream(r io.Reader, c *Call) error {
	var text strings.Builder
	args := map[string]string{} // by item_id
	return readEvents(r, maxSSEEvent, "response.completed", func(ev sseEvent) (bool, error) {
		var e struct {
			Type     string           `json:"type"`
			ItemID   string           `json:"item_id"`
			Delta    string           `json:"delta"`
			Message  string           `json:"message"`
			Response *responsesObject `json:"response"`
		}
		if err := json.Unmarshal([]byte(ev.data), &e); err != nil {
			return false, fmt.Errorf("event %q: %w", ev.name, err)
		}
		if ev.name != "" && ev.name != e.Type {
			return false, fmt.Errorf("event name %q but data type %q", ev.name, e.Type)
		}
		switch e.Type {
		case "response.output_text.delta":
			text.WriteString(e.Delta)
		case "response.function_call_arguments.delta":
			args[e.ItemID] += e.Delta
		case "response.failed", "error":
			return false, fmt.Errorf("stream error event %s: %s", e.Type, ev.data)
		case "response.completed", "response.incomplete":
			if e.Response == nil {
				return false, fmt.Errorf("%s event without response", e.Type)
			}
			if err := cv.apply(e.Response, c); err != nil {
				return false, err
			}
			if text.String() != c.Text {
				return false, fmt.Errorf("streamed text %q differs from the final response's %q", text.String(), c.Text)
			}
			if len(args) != len(c.ToolCalls) {
				return false, fmt.Errorf("%d function calls streamed, %d in the final response", len(args), len(c.ToolCalls))
			}
			for _, it := range e.Response.Output {
				if a, ok := args[it.ID]; it.Type == "function_call" && (!ok || a != it.Arguments) {
					return false, fmt.Errorf("streamed arguments of %s differ from the final response's %q", it.ID, it.Arguments)
				}
			}
			return true, nil
		}
		return false, nil
	})
}

func (cv *responsesConversation) addToolResult(tc ToolCall, result string) {
	cv.input = append(cv.input, responsesFunctionCallOutput{Type: "function_call_output", CallID: tc.ID, Output: result})
}

func (cv *responsesConversation) compact(summary string) {
	cv.input = []any{responsesMessage{Type: "message", Role: "user", Content: compactedPrefix + summary}}
	cv.compacted = true
}
