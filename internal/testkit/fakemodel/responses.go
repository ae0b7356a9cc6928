package fakemodel

import (
	"encoding/json"
)

// echo returns the request member k when present (not null), else def.
func (r *request) echo(k string, def any) any {
	if v := r.fields[k]; present(v) {
		return v
	}
	return def
}

// responsesItemIDs are the ids of one Responses answer's output items.
type responsesItemIDs struct{ response, reasoning, message, call, callID string }

func newResponsesItemIDs(g ids) responsesItemIDs {
	return responsesItemIDs{
		response:  g.hex("resp_", "response", 50),
		reasoning: g.hex("rs_", "reasoning", 50),
		message:   g.hex("msg_", "message", 50),
		call:      g.hex("fc_", "function_call", 50),
		callID:    g.alnum("call_", "call_id", 24),
	}
}

// responsesReasoning is the request's reasoning config as the response echoes it.
func responsesReasoning(r *request) obj {
	var rs struct {
		Effort  *string `json:"effort"`
		Summary *string `json:"summary"`
	}
	_ = json.Unmarshal(r.fields["reasoning"], &rs)
	var effort, summary any
	if rs.Effort != nil {
		effort = *rs.Effort
	} else if r.reasoning {
		effort = "medium"
	}
	if rs.Summary != nil {
		summary = *rs.Summary
	}
	return obj{{"effort", effort}, {"summary", summary}}
}

// responsesOutput is the output list of a finished Responses answer.
func responsesOutput(a answer, id responsesItemIDs) arr {
	out := arr{}
	if a.reasons {
		out = append(out, reasoningItem(id.reasoning, a.reasoning))
	}
	if a.call != nil {
		out = append(out, functionCallItem(id, a.call, "completed", a.call.arguments))
	}
	if a.text != "" {
		out = append(out, messageItem(id.message, messageStatus(a), a.text, true))
	}
	return out
}

// messageStatus is the status of a finished message item.
func messageStatus(a answer) string {
	if a.truncated {
		return "incomplete"
	}
	return "completed"
}

func reasoningItem(id, text string) obj {
	summary := arr{}
	if text != "" {
		summary = arr{obj{{"type", "summary_text"}, {"text", text}}}
	}
	return obj{{"id", id}, {"type", "reasoning"}, {"summary", summary}}
}

func functionCallItem(id responsesItemIDs, c *toolCall, status, args string) obj {
	return obj{
		{"id", id.call}, {"type", "function_call"}, {"status", status},
		{"arguments", args}, {"call_id", id.callID}, {"name", c.name},
	}
}

func messageItem(id, status, text string, withContent bool) obj {
	content := arr{}
	if withContent {
		content = arr{outputText(text)}
	}
	return obj{{"id", id}, {"type", "message"}, {"status", status}, {"content", content}, {"role", "assistant"}}
}

func outputText(text string) obj {
	return obj{{"type", "output_text"}, {"annotations", arr{}}, {"logprobs", arr{}}, {"text", text}}
}

// responsesAnswer is the non-streamed Responses answer.
func responsesAnswer(r *request, a answer, g ids) obj { return responseObject(r, a, g, true) }

// responseObject is the Responses API "response" object: the finished answer when final, else
// the in-progress snapshot sent by response.created/in_progress (no output, usage null).
func responseObject(r *request, a answer, g ids, final bool) obj {
	id := newResponsesItemIDs(g)
	status, output, usage := "in_progress", arr{}, any(nil)
	var incomplete any
	if final {
		status, output = "completed", responsesOutput(a, id)
		if a.truncated {
			status, incomplete = "incomplete", obj{{"reason", "max_output_tokens"}}
		}
		usage = obj{
			{"input_tokens", a.inputTokens},
			{"input_tokens_details", obj{{"cached_tokens", a.cachedTokens}}},
			{"output_tokens", a.outputTokens},
			{"output_tokens_details", obj{{"reasoning_tokens", a.reasoningTokens}}},
			{"total_tokens", a.inputTokens + a.outputTokens},
		}
	}
	return obj{
		{"id", id.response},
		{"object", "response"},
		{"created_at", created},
		{"status", status},
		{"background", false},
		{"error", nil},
		{"incomplete_details", incomplete},
		{"instructions", r.echo("instructions", nil)},
		{"max_output_tokens", r.echo("max_output_tokens", nil)},
		{"max_tool_calls", r.echo("max_tool_calls", nil)},
		{"model", r.model},
		{"output", output},
		{"parallel_tool_calls", r.echo("parallel_tool_calls", true)},
		{"previous_response_id", r.echo("previous_response_id", nil)},
		{"reasoning", responsesReasoning(r)},
		{"service_tier", "default"},
		{"store", r.echo("store", true)},
		{"temperature", r.echo("temperature", floatOne)},
		{"text", r.echo("text", obj{{"format", obj{{"type", "text"}}}, {"verbosity", "medium"}})},
		{"tool_choice", r.echo("tool_choice", "auto")},
		{"tools", r.echo("tools", arr{})},
		{"top_p", r.echo("top_p", floatOne)},
		{"truncation", r.echo("truncation", "disabled")},
		{"usage", usage},
		{"user", r.echo("user", nil)},
		{"metadata", r.echo("metadata", obj{})},
	}
}

// responsesStream builds the events of a streamed Responses answer, numbering them.
type responsesStream struct {
	e      *encoder
	events []event
}

// add appends an event of type typ with the given members, then its sequence number.
func (s *responsesStream) add(typ string, members ...member) {
	o := append(obj{{"type", typ}}, members...)
	o = o.with("sequence_number", len(s.events))
	s.events = append(s.events, event{typ, s.e.enc(o)})
}

// responsesEvents is the full event sequence of a streamed Responses answer.
func responsesEvents(e *encoder, r *request, a answer, g ids) []event {
	s := &responsesStream{e: e}
	id := newResponsesItemIDs(g)
	snapshot := responseObject(r, a, g, false)
	s.add("response.created", member{"response", snapshot})
	s.add("response.in_progress", member{"response", snapshot})
	index := 0
	if a.reasons {
		s.add("response.output_item.added", member{"output_index", index}, member{"item", reasoningItem(id.reasoning, "")})
		if a.reasoning != "" {
			common := []member{{"item_id", id.reasoning}, {"output_index", index}, {"summary_index", 0}}
			s.add("response.reasoning_summary_part.added", append(common, member{"part", obj{{"type", "summary_text"}, {"text", ""}}})...)
			for _, d := range chunks(a.reasoning, 16) {
				s.add("response.reasoning_summary_text.delta", append(common, member{"delta", d})...)
			}
			s.add("response.reasoning_summary_text.done", append(common, member{"text", a.reasoning})...)
			s.add("response.reasoning_summary_part.done", append(common, member{"part", obj{{"type", "summary_text"}, {"text", a.reasoning}}})...)
		}
		s.add("response.output_item.done", member{"output_index", index}, member{"item", reasoningItem(id.reasoning, a.reasoning)})
		index++
	}
	if a.call != nil {
		s.add("response.output_item.added", member{"output_index", index}, member{"item", functionCallItem(id, a.call, "in_progress", "")})
		common := []member{{"item_id", id.call}, {"output_index", index}}
		for _, d := range chunks(a.call.arguments, 8) {
			s.add("response.function_call_arguments.delta", append(common, member{"delta", d})...)
		}
		s.add("response.function_call_arguments.done", append(common, member{"arguments", a.call.arguments})...)
		s.add("response.output_item.done", member{"output_index", index}, member{"item", functionCallItem(id, a.call, "completed", a.call.arguments)})
		index++
	}
	if a.text != "" {
		s.add("response.output_item.added", member{"output_index", index}, member{"item", messageItem(id.message, "in_progress", "", false)})
		common := []member{{"item_id", id.message}, {"output_index", index}, {"content_index", 0}}
		s.add("response.content_part.added", append(common, member{"part", outputText("")})...)
		for _, d := range chunks(a.text, 12) {
			s.add("response.output_text.delta", append(common, member{"delta", d}, member{"logprobs", arr{}})...)
		}
		s.add("response.output_text.done", append(common, member{"text", a.text}, member{"logprobs", arr{}})...)
		s.add("response.content_part.done", append(common, member{"part", outputText(a.text)})...)
		s.add("response.output_item.done", member{"output_index", index}, member{"item", messageItem(id.message, messageStatus(a), a.text, true)})
	}
	final := responseObject(r, a, g, true)
	if a.truncated {
		s.add("response.incomplete", member{"response", final})
	} else {
		s.add("response.completed", member{"response", final})
	}
	return s.events
}
