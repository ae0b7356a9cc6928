package demo

import (
	"fmt"
	"io"
)

// The dialects, by the names capture records use (SPEC §1.6).
const (
	dialectResponses = "responses"
	dialectChat      = "chat"
	dialectMessages  = "messages"
)

// dialects lists the dialects in the order rollouts cycle through them.
var dialects = [...]string{dialectResponses, dialectChat, dialectMessages}

// Models the agent asks for, one per dialect. The fake model answers any id; these name models
// that report reasoning the way the agent requests it.
const (
	responsesModel = "gpt-5-mini"
	chatModel      = "Qwen/Qwen3-8B"
	messagesModel  = "claude-sonnet-4-5"
)

// maxOutputTokens is the output limit of every call, far above what the fake model's answers need.
const maxOutputTokens = 2048

// conversation is the state of one episode in one dialect: the history sent with each call and
// the way that dialect's answers are read. It is not safe for concurrent use.
type conversation interface {
	// path is the API path under the "/v1" base URL, e.g. "/responses".
	path() string
	// request returns the body of the next call: the history so far under the system prompt,
	// the tool and the options, with tool_choice "none" once the history was compacted; for a
	// summarizing call (summary), under the summarizer's instructions and with tool_choice "none".
	request(stream, summary bool) any
	// compact replaces the history with one user message holding compactedPrefix + summary;
	// later requests forbid tool calls (the work they did is in the summary).
	compact(summary string)
	// readJSON reads a non-streamed answer into c and adds the assistant turn to the history.
	readJSON(r io.Reader, c *Call) error
	// readStream reads a streamed answer to its terminal event into c and adds the assistant turn
	// to the history.
	readStream(r io.Reader, c *Call) error
	// addToolResult adds the result of the tool call tc to the history.
	addToolResult(tc ToolCall, result string)
}

// newConversation starts the episode of t in dialect d.
func newConversation(d string, t task) (conversation, error) {
	switch d {
	case dialectResponses:
		return newResponsesConversation(t), nil
	case dialectChat:
		return newChatConversation(t), nil
	case dialectMessages:
		return newMessagesConversation(t), nil
	}
	return nil, fmt.Errorf("dialect %q: must be one of responses, chat, messages", d)
}

// instructions is the system prompt of a call: the summarizer's for a summarizing call.
func instructions(summary bool) string {
	if summary {
		return summarizerPrompt
	}
	return systemPrompt
}
