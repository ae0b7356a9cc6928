package fakemodel

// chatIDs are the ids of one Chat Completions answer.
type chatIDs struct{ completion, fingerprint string }

func newChatIDs(g ids) chatIDs {
	return chatIDs{completion: g.alnum("chatcmpl-", "chat.completion", 29), fingerprint: g.hex("fp_", "fingerprint", 10)}
}

// chatCallID is the tool call id of the answer's one choice (index 0 in the salt).
func chatCallID(g ids) string { return g.alnum("call_", "call_id/0", 24) }

// chatFinishReason is the finish_reason of every choice of a.
func chatFinishReason(a answer) string {
	switch {
	case a.truncated:
		return "length"
	case a.call != nil:
		return "tool_calls"
	}
	return "stop"
}

// chatUsage is the usage object of a Chat answer.
func chatUsage(a answer) obj {
	return obj{
		{"prompt_tokens", a.inputTokens},
		{"completion_tokens", a.outputTokens},
		{"total_tokens", a.inputTokens + a.outputTokens},
		{"prompt_tokens_details", obj{{"cached_tokens", a.cachedTokens}, {"audio_tokens", 0}}},
		{"completion_tokens_details", obj{
			{"reasoning_tokens", a.reasoningTokens},
			{"audio_tokens", 0},
			{"accepted_prediction_tokens", 0},
			{"rejected_prediction_tokens", 0},
		}},
	}
}

// chatCompletion is the non-streamed Chat Completions answer.
func chatCompletion(r *request, a answer, g ids) obj {
	id := newChatIDs(g)
	var content any
	if a.text != "" {
		content = a.text
	}
	msg := obj{{"role", "assistant"}, {"content", content}}
	if a.reasoning != "" {
		msg = msg.with("reasoning_content", a.reasoning)
	}
	if a.call != nil {
		msg = msg.with("tool_calls", arr{obj{
			{"id", chatCallID(g)},
			{"type", "function"},
			{"function", obj{{"name", a.call.name}, {"arguments", a.call.arguments}}},
		}})
	}
	msg = append(msg, member{"refusal", nil}, member{"annotations", arr{}})
	choices := arr{obj{{"index", 0}, {"message", msg}, {"logprobs", nil}, {"finish_reason", chatFinishReason(a)}}}
	return obj{
		{"id", id.completion},
		{"object", "chat.completion"},
		{"created", created},
		{"model", r.model},
		{"choices", choices},
		{"usage", chatUsage(a)},
		{"service_tier", "default"},
		{"system_fingerprint", id.fingerprint},
	}
}

// chatEvents is the full event sequence of a streamed Chat Completions answer: the deltas, the
// usage chunk when stream_options.include_usage is set, then [DONE].
func chatEvents(e *encoder, r *request, a answer, g ids) []event {
	id := newChatIDs(g)
	chunk := func(choices arr, usage any) event {
		o := obj{
			{"id", id.completion},
			{"object", "chat.completion.chunk"},
			{"created", created},
			{"model", r.model},
			{"service_tier", "default"},
			{"system_fingerprint", id.fingerprint},
			{"choices", choices},
		}
		if r.includeUsage {
			o = o.with("usage", usage)
		}
		return event{"", e.enc(o)}
	}
	// The deltas in order; the last one carries the finish_reason.
	var content any = ""
	if a.call != nil || a.text == "" {
		content = nil
	}
	deltas := []obj{{{"role", "assistant"}, {"content", content}, {"refusal", nil}}}
	for _, d := range chunks(a.reasoning, 16) {
		deltas = append(deltas, obj{{"reasoning_content", d}})
	}
	for _, d := range chunks(a.text, 12) {
		deltas = append(deltas, obj{{"content", d}})
	}
	if a.call != nil {
		deltas = append(deltas, obj{{"tool_calls", arr{obj{
			{"index", 0},
			{"id", chatCallID(g)},
			{"type", "function"},
			{"function", obj{{"name", a.call.name}, {"arguments", ""}}},
		}}}})
		for _, d := range chunks(a.call.arguments, 8) {
			deltas = append(deltas, obj{{"tool_calls", arr{obj{{"index", 0}, {"function", obj{{"arguments", d}}}}}}})
		}
	}
	deltas = append(deltas, obj{})
	var events []event
	for k, d := range deltas {
		var finish any
		if k == len(deltas)-1 {
			finish = chatFinishReason(a)
		}
		events = append(events, chunk(arr{obj{{"index", 0}, {"delta", d}, {"logprobs", nil}, {"finish_reason", finish}}}, nil))
	}
	if r.includeUsage {
		events = append(events, chunk(arr{}, chatUsage(a)))
	}
	return append(events, event{"", []byte("[DONE]")})
}
