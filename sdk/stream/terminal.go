package stream

import (
	"bytes"

	"github.com/gymtrace/gymtrace/ojson"
)

// Terminal is the terminal state of an SSE stream (SPEC.md §4.2 with §0 D1, D2 and D8).
type Terminal uint8

// The terminal states. The zero value is TerminalNone.
const (
	// TerminalNone: no terminal event has been seen (yet). At the end of a clean body this is
	// SPEC §0 D5's stream_truncated.
	TerminalNone Terminal = iota
	// TerminalComplete: responses response.completed, chat [DONE] (or D8), messages message_stop.
	TerminalComplete
	// TerminalIncomplete: responses response.incomplete.
	TerminalIncomplete
	// TerminalError: responses response.failed or error, chat error event or in-band error
	// object, messages error.
	TerminalError
)

// String returns "complete", "incomplete", "error", or "" for TerminalNone (the vectors' null).
func (t Terminal) String() string {
	switch t {
	case TerminalComplete:
		return "complete"
	case TerminalIncomplete:
		return "incomplete"
	case TerminalError:
		return "error"
	}
	return ""
}

// The dialects of SPEC.md §1.6 (the capture middleware's captured_dialect).
const (
	DialectResponses = "responses" // OpenAI Responses API, /v1/responses
	DialectChat      = "chat"      // OpenAI Chat Completions, /v1/chat/completions
	DialectMessages  = "messages"  // Anthropic Messages, /v1/messages
)

// dialect is a validated dialect name.
type dialect uint8

const (
	dialectUnknown dialect = iota
	dialectResponses
	dialectChat
	dialectMessages
)

var dialects = map[string]dialect{
	DialectResponses: dialectResponses, DialectChat: dialectChat, DialectMessages: dialectMessages,
}

func parseDialect(s string) dialect { return dialects[s] }

// terminalByName maps an event name (or D1's data type) of dialect d to its state (SPEC §4.2).
func terminalByName(d dialect, name []byte) Terminal {
	switch d {
	case dialectResponses:
		switch string(name) {
		case "response.completed":
			return TerminalComplete
		case "response.incomplete":
			return TerminalIncomplete
		case "response.failed", "error":
			return TerminalError
		}
	case dialectChat:
		if string(name) == "error" {
			return TerminalError
		}
	case dialectMessages:
		switch string(name) {
		case "message_stop":
			return TerminalComplete
		case "error":
			return TerminalError
		}
	}
	return TerminalNone
}

// eventTerminal returns the terminal state one dispatched event gives in dialect d (SPEC §4.2, D1,
// D2); obj is its data as a JSON object (ok false when it is not one). The name is compared exactly
// (nothing trimmed beyond the decoder's one space). Responses and messages: by name, or, when the
// event has no "event" field at all, by the data object's "type" (D1). Chat: name "error" → error;
// a data line "[DONE]" → complete; a data line, or the whole data, that is an object with a
// non-null "error" member → error.
func eventTerminal(d dialect, ev *Event, obj ojson.Value, ok bool) Terminal {
	if t := terminalByName(d, ev.Name); t != TerminalNone {
		return t
	}
	switch d {
	case dialectResponses, dialectMessages:
		if ev.HasName || !ok {
			return TerminalNone
		}
		if typ, isStr := getString(obj, "type"); isStr {
			return terminalByName(d, []byte(typ))
		}
	case dialectChat:
		return chatDataTerminal(ev, obj, ok)
	}
	return TerminalNone
}

// chatDataTerminal applies the chat data rules of SPEC §4.2 to every data line of ev.
func chatDataTerminal(ev *Event, obj ojson.Value, ok bool) Terminal {
	if ev.DataLines == 0 {
		return TerminalNone
	}
	if ev.DataLines == 1 {
		switch {
		case string(ev.Data) == "[DONE]":
			return TerminalComplete
		case ok && hasErrorMember(obj):
			return TerminalError
		}
		return TerminalNone
	}
	// Several data lines: the reference checks each line; D2 framing also gives the joined data.
	for line := range bytes.SplitSeq(ev.Data, []byte("\n")) {
		if string(line) == "[DONE]" {
			return TerminalComplete
		}
	}
	if ok && hasErrorMember(obj) {
		return TerminalError
	}
	for line := range bytes.SplitSeq(ev.Data, []byte("\n")) {
		// Only a line that can spell the key "error" (directly or through an escape) can hold it.
		if bytes.Contains(line, []byte("error")) || bytes.Contains(line, []byte(`\u`)) {
			if v, ok := parseObject(line); ok && hasErrorMember(v) {
				return TerminalError
			}
		}
	}
	return TerminalNone
}

// hasErrorMember reports whether the object has an "error" member that is not null.
func hasErrorMember(obj ojson.Value) bool {
	v, ok := obj.Get("error")
	return ok && !v.IsNull()
}
