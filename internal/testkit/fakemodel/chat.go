package fakemodel

import (
	"strconv"
)

// chatIDs are the ids of one Chat Completions answer.
type chatIDs struct{ completion, fingerprint string }

func newChatIDs(g ids) chatIDs {
	return chatIDs{completion: g.alnum("chatcmpl-", "chat.completion", 29), fingerprint: g.hex("fp_", "fingerprint", 10)}
}

// chatCallID is the tool call id of choice i.
func chatCallID(g ids, i int) string { return g.alnum("call_", "call_id/"+strconv.Itoa(i), 24) }

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

// chatUsage is the usage object of a Chat answer with r.choices choices.
func chatUsage(r *request, a answer) obj {
	out := a.outputTokens * r.choices
	return obj{
		{"prompt_tokens", a.inputTokens},
		{"completion_tokens", out},
		{"total_tokens", a.inputTokens + out},
		{"prompt_tokens_details", obj{{"cached_tokens", a.cachedTokens}, {"audio_tokens", 0}}},
		{"completion_tokens_details", obj{
			{"reasoning_tokens", a.reasoningTokens * r.choices},
			{"audio_tokens", 0},
			{"accepted_prediction_tokens", 0},
			{"rejected_prediction_tokens", 0},
		}},
	}
}

// chatCompletion is the non-streamed Chat Completions answer.
func chatCompletion(r *request, a answer, g ids) obj {
	id := newChatIDs(g)
	choices := arr{}
	for i := range r.choices {
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
				{"id", chatCallID(g, i)},
				{"type", "function"},
				{"function", obj{{"name", a.call.name}, {"arguments", a.call.arguments}}},
			}})
		}
		msg = append(msg, member{"refusal", nil}, member{"annotations", arr{}})
		choices = append(choices, obj{{"index", i}, {"message", msg}, {"logprobs", nil}, {"finish_reason", chatFinishReason(a)}})
	}
	return obj{
		{"id", id.completion},
		{"object", "chat.completion"},
		{"created", created},
		{"model", r.model},
		{"choices", choices},
		{"usage", chatUsage(r, a)},
		{"service_tier", "default"},
		{"system_fingerprint", id.fingerprint},
	}
}

// chatEvents is the full event sequence of a streamed Chat Completions answer: the deltas of
// every choice (interleaved by step when n > 1), the usage chunk when
// stream_options.include_usage is set, then [DONE].
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
	// The deltas of one choice, in order; the last one carries the finish_reason.
	steps := func(i int) []obj {
		var content any = ""
		if a.call != nil || a.text == "" {
			content = nil
		}
		out := []obj{{{"role", "assistant"}, {"content", content}, {"refusal", nil}}}
		for _, d := range chunks(a.reasoning, 16) {
			out = append(out, obj{{"reasoning_content", d}})
		}
		for _, d := range chunks(a.text, 12) {
			out = append(out, obj{{"content", d}})
		}
		if a.call != nil {
			out = append(out, obj{{"tool_calls", arr{obj{
				{"index", 0},
				{"id", chatCallID(g, i)},
				{"type", "function"},
				{"function", obj{{"name", a.call.name}, {"arguments", ""}}},
			}}}})
			for _, d := range chunks(a.call.arguments, 8) {
				out = append(out, obj{{"tool_calls", arr{obj{{"index", 0}, {"function", obj{{"arguments", d}}}}}}})
			}
		}
		return append(out, obj{})
	}
	var events []event
	perChoice := make([][]obj, r.choices)
	for i := range perChoice {
		perChoice[i] = steps(i)
	}
	for k := range perChoice[0] {
		for i := range perChoice {
			var finish any
			if k == len(perChoice[i])-1 {
				finish = chatFinishReason(a)
			}
			c := obj{{"index", i}, {"delta", perChoice[i][k]}, {"logprobs", nil}, {"finish_reason", finish}}
			events = append(events, chunk(arr{c}, nil))
		}
	}
	if r.includeUsage {
		events = append(events, chunk(arr{}, chatUsage(r, a)))
	}
	return append(events, event{"", []byte("[DONE]")})
}
