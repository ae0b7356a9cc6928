package fakemodel

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
)

// messagesIDs are the ids of one Anthropic Messages answer.
type messagesIDs struct{ message, toolUse, signature string }

func newMessagesIDs(g ids) messagesIDs {
	s1 := sha256.Sum256(append(g.seed[:], "signature/1"...))
	s2 := sha256.Sum256(append(g.seed[:], "signature/2"...))
	return messagesIDs{
		message:   g.alnum("msg_01", "message", 22),
		toolUse:   g.alnum("toolu_01", "tool_use", 22),
		signature: base64.StdEncoding.EncodeToString(append(s1[:], s2[:]...)),
	}
}

// stopReason is the Anthropic stop_reason of a.
func stopReason(a answer) string {
	switch {
	case a.truncated:
		return "max_tokens"
	case a.call != nil:
		return "tool_use"
	}
	return "end_turn"
}

// messagesUsage is the Anthropic usage object with the given output_tokens.
func messagesUsage(a answer, outputTokens int) obj {
	return obj{
		{"input_tokens", a.inputTokens},
		{"cache_creation_input_tokens", a.cacheWrite},
		{"cache_read_input_tokens", a.cachedTokens},
		{"cache_creation", obj{{"ephemeral_5m_input_tokens", a.cacheWrite}, {"ephemeral_1h_input_tokens", 0}}},
		{"output_tokens", outputTokens},
		{"service_tier", "standard"},
	}
}

// messagesText is the visible text block of a: the preamble before a tool call, or the answer.
func messagesText(a answer) string {
	if a.call != nil {
		return a.preamble
	}
	return a.text
}

// anthropicMessage is the non-streamed Anthropic Messages answer.
func anthropicMessage(r *request, a answer, g ids) obj {
	id := newMessagesIDs(g)
	content := arr{}
	if a.reasoning != "" {
		content = append(content, obj{{"type", "thinking"}, {"thinking", a.reasoning}, {"signature", id.signature}})
	}
	if t := messagesText(a); t != "" {
		content = append(content, obj{{"type", "text"}, {"text", t}})
	}
	if a.call != nil {
		content = append(content, obj{{"type", "tool_use"}, {"id", id.toolUse}, {"name", a.call.name}, {"input", json.RawMessage(a.call.arguments)}})
	}
	return obj{
		{"id", id.message},
		{"type", "message"},
		{"role", "assistant"},
		{"model", r.model},
		{"content", content},
		{"stop_reason", stopReason(a)},
		{"stop_sequence", nil},
		{"usage", messagesUsage(a, a.outputTokens)},
	}
}

// messagesEvents is the full event sequence of a streamed Anthropic Messages answer.
func messagesEvents(e *encoder, r *request, a answer, g ids) []event {
	id := newMessagesIDs(g)
	var events []event
	add := func(typ string, o obj) {
		events = append(events, event{typ, e.enc(append(obj{{"type", typ}}, o...))})
	}
	add("message_start", obj{{"message", obj{
		{"id", id.message},
		{"type", "message"},
		{"role", "assistant"},
		{"model", r.model},
		{"content", arr{}},
		{"stop_reason", nil},
		{"stop_sequence", nil},
		{"usage", messagesUsage(a, 1)},
	}}})
	index := 0
	pinged := false
	block := func(start obj, deltas []obj) {
		add("content_block_start", obj{{"index", index}, {"content_block", start}})
		if !pinged {
			add("ping", nil)
			pinged = true
		}
		for _, d := range deltas {
			add("content_block_delta", obj{{"index", index}, {"delta", d}})
		}
		add("content_block_stop", obj{{"index", index}})
		index++
	}
	if a.reasoning != "" {
		var deltas []obj
		for _, d := range chunks(a.reasoning, 16) {
			deltas = append(deltas, obj{{"type", "thinking_delta"}, {"thinking", d}})
		}
		deltas = append(deltas, obj{{"type", "signature_delta"}, {"signature", id.signature}})
		block(obj{{"type", "thinking"}, {"thinking", ""}, {"signature", ""}}, deltas)
	}
	if t := messagesText(a); t != "" {
		var deltas []obj
		for _, d := range chunks(t, 12) {
			deltas = append(deltas, obj{{"type", "text_delta"}, {"text", d}})
		}
		block(obj{{"type", "text"}, {"text", ""}}, deltas)
	}
	if a.call != nil {
		deltas := []obj{{{"type", "input_json_delta"}, {"partial_json", ""}}}
		for _, d := range chunks(a.call.arguments, 8) {
			deltas = append(deltas, obj{{"type", "input_json_delta"}, {"partial_json", d}})
		}
		block(obj{{"type", "tool_use"}, {"id", id.toolUse}, {"name", a.call.name}, {"input", obj{}}}, deltas)
	}
	if !pinged {
		add("ping", nil)
	}
	add("message_delta", obj{
		{"delta", obj{{"stop_reason", stopReason(a)}, {"stop_sequence", nil}}},
		{"usage", obj{{"output_tokens", a.outputTokens}}},
	})
	add("message_stop", nil)
	return events
}
