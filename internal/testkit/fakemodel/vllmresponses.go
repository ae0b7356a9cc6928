package fakemodel

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// vLLM's Responses API shapes (POST /v1/responses of the vLLM engine), after vLLM's
// entrypoints/openai/responses/protocol.py, serving.py, context.py (SimpleContext), utils.py and
// simple_streaming_events.py as stored for vllm-project/vllm in 2026: a model without the Harmony
// format, served with a reasoning parser and a Hermes-style tool parser.
//
//   - The JSON answer is ResponsesResponse's model_dump, every member in declaration order (id,
//     created_at, incomplete_details, instructions, metadata, model, object, output,
//     parallel_tool_calls, temperature, tool_choice, tools, top_p, background, max_output_tokens,
//     max_tool_calls, previous_response_id, prompt, reasoning, service_tier, status, text,
//     top_logprobs, truncation, usage, user, input_messages, output_messages). The output items
//     are built as build_response_output_items builds them: a reasoning item (content
//     reasoning_text, summary []), a message item when the answer has text, one function_call per
//     tool call.
//   - "include": ["message.output_text.logprobs"] puts on the message's output_text the log probs
//     of EVERY generated token (vLLM computes them over final_output.token_ids and hands the list
//     to the message item), entries {token, bytes, logprob, top_logprobs}; without it the member
//     is null. A turn without text has no message item, so its log probs appear nowhere.
//     "top_logprobs" (default 0) is echoed as sampling_params.logprobs: the request's value with
//     the include, else null.
//   - "enable_response_messages": true fills input_messages with [{message: the prompt's text,
//     tokens: its ids, type: "raw_message_tokens"}] and output_messages with [{message: the
//     generated text, tokens: the generated ids, type}] (SimpleContext); null otherwise.
//   - Streams: response.created and response.in_progress (the snapshot: status in_progress,
//     output [], usage null, input/output_messages null), then per part its added, delta and done
//     events, then response.completed (or response.incomplete for an answer cut by its limit)
//     with the answer built as the JSON answer is. output_text's delta and done events carry
//     "logprobs": the entries {token, logprob, top_logprobs} of their tokens with the include,
//     else []; content_part.added's part has "logprobs": []. Events are named by their type.
//
// The input is read as vLLM's construct_input_messages reads it, with one simplification: a
// function_call item joins the assistant message before it (so the prompt of the next turn
// extends the previous prompt and generation, as a chat template that merges them renders it).

// responsesTransportMembers are the Responses request members of the vLLM engine that only say
// which token facts the answer reports (log probs, raw prompt and generated tokens), not what is
// sampled (see tokenTransportMembers).
var responsesTransportMembers = []string{"include", "top_logprobs", "enable_response_messages"}

// engineResponses reports a Responses request answered by the vLLM engine.
func (r *request) engineResponses() bool {
	return r.dialect == DialectResponses && r.engine == EngineVLLM
}

// readResponsesTokenRequest reads the token members of a vLLM Responses request.
func readResponsesTokenRequest(r *request) (tokenRequest, *apiError) {
	t := tokenRequest{generationPrompt: true, n: 1}
	var include []string
	if raw := r.fields["include"]; present(raw) && json.Unmarshal(raw, &include) != nil {
		return t, &apiError{status: 400, message: "include: Input should be a valid list of known values", param: "include"}
	}
	t.logprobs = slices.Contains(include, "message.output_text.logprobs")
	if n, ok := intField(r.fields["top_logprobs"]); !ok {
		return t, &apiError{status: 400, message: "top_logprobs: Input should be a valid integer", param: "top_logprobs"}
	} else {
		t.topLogprobs = n
	}
	if t.topLogprobs < 0 || t.topLogprobs > maxTopLogprobs {
		return t, &apiError{status: 400, message: fmt.Sprintf("top_logprobs must be between 0 and %d, got %d.", maxTopLogprobs, t.topLogprobs), param: "top_logprobs"}
	}
	if raw := r.fields["enable_response_messages"]; present(raw) && json.Unmarshal(raw, &t.responseMessages) != nil {
		return t, &apiError{status: 400, message: "enable_response_messages: Input should be a valid boolean", param: "enable_response_messages"}
	}
	return t, nil
}

// responsesTurns reads the instructions and input of a Responses request as chat turns.
func responsesTurns(r *request) []chatTurn {
	var turns []chatTurn
	var instructions string
	if json.Unmarshal(r.fields["instructions"], &instructions) == nil && instructions != "" {
		turns = append(turns, chatTurn{role: "system", content: instructions})
	}
	in := r.fields["input"]
	var s string
	if json.Unmarshal(in, &s) == nil {
		return append(turns, chatTurn{role: "user", content: s})
	}
	var items []responsesInputItem
	_ = json.Unmarshal(in, &items) // validated by readResponses
	for _, it := range items {
		switch {
		case it.Type == "function_call":
			call := templateCall{it.Name, it.Arguments}
			if n := len(turns); n > 0 && turns[n-1].role == "assistant" {
				turns[n-1].calls = append(turns[n-1].calls, call)
			} else {
				turns = append(turns, chatTurn{role: "assistant", calls: []templateCall{call}})
			}
		case it.Type == "function_call_output":
			turns = append(turns, chatTurn{role: "tool", content: textOf(it.Output)})
		case it.Type == "reasoning":
			// dropped from the history, as Qwen3's template drops past reasoning
		case it.Role != "":
			turns = append(turns, chatTurn{role: it.Role, content: textOf(it.Content)})
		}
	}
	return turns
}

// planEngineResponses is planEngine for a vLLM Responses request: the prompt is the rendered
// instructions and input, the limit max_output_tokens, else what is left of the context.
func planEngineResponses(r *request, cfg *config) (*engineAnswer, *apiError) {
	tr, err := readResponsesTokenRequest(r)
	if err != nil {
		return nil, err
	}
	e := &engineAnswer{tr: tr, seed: sha256.Sum256(r.seed())}
	e.prompt = renderPrompt(responsesTurns(r), r.fields["tools"], false, true)
	maxLen := cfg.modelLen()
	if len(e.prompt) >= maxLen {
		return nil, &apiError{status: 400, param: "input", message: fmt.Sprintf(
			"The engine prompt length %d exceeds the max_model_len %d. Please reduce prompt.", len(e.prompt), maxLen)}
	}
	e.maxTokens = maxLen - len(e.prompt)
	if r.maxOutput > 0 {
		e.maxTokens = min(r.maxOutput, e.maxTokens)
	}
	full := *r
	full.maxOutput = 0
	a := plan(&full)
	e.choices = []engineChoice{readGeneration(a, generation(a), e.maxTokens)}
	return e, nil
}

// vllmResponsesIDs are the ids of one vLLM Responses answer (vLLM: "resp_"/"rs_"/"msg_"/"fc_" +
// 32 hex digits, tool call ids "chatcmpl-tool-" + 32 hex digits).
func vllmResponsesIDs(g ids) responsesItemIDs {
	return responsesItemIDs{
		response:  g.hex("resp_", "vllm/response", 32),
		reasoning: g.hex("rs_", "vllm/reasoning", 32),
		message:   g.hex("msg_", "vllm/message", 32),
		call:      g.hex("fc_", "vllm/function_call", 32),
		callID:    vllmCallID(g, 0),
	}
}

// vllmResponses is the non-streamed vLLM Responses answer.
func vllmResponses(r *request, e *engineAnswer, g ids) obj { return e.vllmResponseObject(r, g, true) }

// vllmResponseObject is the response object: the finished answer when final, else the snapshot
// of response.created and response.in_progress.
func (e *engineAnswer) vllmResponseObject(r *request, g ids, final bool) obj {
	id := vllmResponsesIDs(g)
	c := e.choices[0]
	status, output, usage := "in_progress", arr{}, any(nil)
	var incomplete, inMsgs, outMsgs any
	if final {
		status, output = "completed", e.vllmOutput(id, c)
		if c.finish == "length" {
			status, incomplete = "incomplete", obj{{"reason", "max_output_tokens"}}
		}
		p, n := len(e.prompt), len(c.gen)
		usage = obj{
			{"input_tokens", p},
			{"input_tokens_details", obj{{"cached_tokens", 0}, {"input_tokens_per_turn", arr{}}, {"cached_tokens_per_turn", arr{}}}},
			{"output_tokens", n},
			{"output_tokens_details", obj{{"reasoning_tokens", 0}, {"tool_output_tokens", 0}, {"output_tokens_per_turn", arr{}}, {"tool_output_tokens_per_turn", arr{}}}},
			{"total_tokens", p + n},
		}
		if e.tr.responseMessages {
			inMsgs = arr{rawMessageTokens(e.prompt)}
			outMsgs = arr{rawMessageTokens(genTokens(c.gen))}
		}
	}
	var topLogprobs any
	if e.tr.logprobs {
		topLogprobs = e.tr.topLogprobs
	}
	return obj{
		{"id", id.response}, {"created_at", created}, {"incomplete_details", incomplete},
		{"instructions", r.echo("instructions", nil)}, {"metadata", r.echo("metadata", nil)}, {"model", r.model},
		{"object", "response"}, {"output", output}, {"parallel_tool_calls", r.echo("parallel_tool_calls", true)},
		{"temperature", r.echo("temperature", floatOne)}, {"tool_choice", r.echo("tool_choice", "auto")},
		{"tools", r.echo("tools", arr{})}, {"top_p", r.echo("top_p", floatOne)}, {"background", false},
		{"max_output_tokens", e.maxTokens}, {"max_tool_calls", r.echo("max_tool_calls", nil)},
		{"previous_response_id", r.echo("previous_response_id", nil)}, {"prompt", nil},
		{"reasoning", r.echo("reasoning", nil)}, {"service_tier", r.echo("service_tier", "auto")},
		{"status", status}, {"text", r.echo("text", nil)}, {"top_logprobs", topLogprobs},
		{"truncation", r.echo("truncation", "disabled")}, {"usage", usage}, {"user", r.echo("user", nil)},
		{"input_messages", inMsgs}, {"output_messages", outMsgs},
	}
}

// rawMessageTokens is vLLM's ResponseRawMessageAndToken of toks: their text and ids.
func rawMessageTokens(toks []token) obj {
	var text strings.Builder
	ids := arr{}
	for _, t := range toks {
		text.WriteString(t.text)
		ids = append(ids, t.id)
	}
	return obj{{"message", text.String()}, {"tokens", ids}, {"type", "raw_message_tokens"}}
}

// vllmOutput is the output list of a finished answer.
func (e *engineAnswer) vllmOutput(id responsesItemIDs, c engineChoice) arr {
	out := arr{}
	if c.reasoning != "" {
		out = append(out, vllmReasoningItem(id.reasoning, c.reasoning, "completed"))
	}
	if c.content != "" {
		var logprobs any
		if e.tr.logprobs {
			logprobs = e.vllmResponsesLogprobs(0, len(c.gen), true)
		}
		out = append(out, vllmMessageItem(id.message, "completed", c.content, logprobs))
	}
	if c.call != nil {
		out = append(out, vllmCallItem(id, c.call.name, c.call.arguments, "completed"))
	}
	return out
}

func vllmReasoningItem(id, text, status string) obj {
	var content, st any = nil, status
	if status == "completed" {
		// build_response_output_items gives the finished item its text and sets status None
		content, st = arr{obj{{"text", text}, {"type", "reasoning_text"}}}, nil
	}
	return obj{{"id", id}, {"summary", arr{}}, {"type", "reasoning"}, {"content", content}, {"encrypted_content", nil}, {"status", st}}
}

func vllmMessageItem(id, status, text string, logprobs any) obj {
	content := arr{}
	if status == "completed" {
		content = arr{obj{{"annotations", arr{}}, {"text", text}, {"type", "output_text"}, {"logprobs", logprobs}}}
	}
	return obj{{"id", id}, {"content", content}, {"role", "assistant"}, {"status", status}, {"type", "message"}}
}

func vllmCallItem(id responsesItemIDs, name, args, status string) obj {
	return obj{{"arguments", args}, {"call_id", id.callID}, {"name", name}, {"type", "function_call"}, {"id", id.call}, {"status", status}}
}

// vllmResponsesLogprobs are the log-prob entries of generated tokens [from, to): with bytes
// (output_text's Logprob) or without (the stream events' Logprob).
func (e *engineAnswer) vllmResponsesLogprobs(from, to int, withBytes bool) arr {
	// entry is {token[, bytes], logprob} of t.
	entry := func(t token, lp float64) obj {
		o := obj{{"token", e.vllmTokenText(t)}}
		if withBytes {
			o = append(o, member{"bytes", byteList([]byte(t.text))})
		}
		return append(o, member{"logprob", pyFloat(lp)})
	}
	out := arr{}
	for i := from; i < to; i++ {
		g := e.choices[0].gen[i].token
		lp, top := e.sampled(0, i, g)
		alts := arr{}
		for _, t := range top {
			alts = append(alts, entry(t.tok, t.lp))
		}
		out = append(out, append(entry(g, lp), member{"top_logprobs", alts}))
	}
	return out
}

// vllmResponsesEvents is the event sequence of a streamed vLLM Responses answer.
func vllmResponsesEvents(enc *encoder, r *request, e *engineAnswer, g ids) []event {
	s := &responsesStream{e: enc}
	id := vllmResponsesIDs(g)
	c := e.choices[0]
	snapshot := e.vllmResponseObject(r, g, false)
	s.add("response.created", member{"response", snapshot})
	s.add("response.in_progress", member{"response", snapshot})
	var reasoning, content, args []int // positions in c.gen
	for i, t := range c.gen {
		switch c.streamKind(t) {
		case genReasoning:
			reasoning = append(reasoning, i)
		case genContent:
			content = append(content, i)
		case genCallArgs:
			args = append(args, i)
		}
	}
	index := 0
	if len(reasoning) > 0 {
		common := []member{{"item_id", id.reasoning}, {"output_index", index}, {"content_index", 0}}
		s.add("response.output_item.added", member{"output_index", index}, member{"item", vllmReasoningItem(id.reasoning, "", "in_progress")})
		s.add("response.content_part.added", append(common, member{"part", obj{{"text", ""}, {"type", "reasoning_text"}}})...)
		for _, i := range reasoning {
			s.add("response.reasoning_text.delta", append(common, member{"delta", c.gen[i].text})...)
		}
		s.add("response.reasoning_text.done", append(common, member{"text", c.reasoning})...)
		s.add("response.content_part.done", append(common, member{"part", obj{{"text", c.reasoning}, {"type", "reasoning_text"}}})...)
		s.add("response.output_item.done", member{"output_index", index}, member{"item", vllmReasoningItem(id.reasoning, c.reasoning, "completed")})
		index++
	}
	if len(content) > 0 {
		common := []member{{"item_id", id.message}, {"output_index", index}, {"content_index", 0}}
		s.add("response.output_item.added", member{"output_index", index}, member{"item", vllmMessageItem(id.message, "in_progress", "", nil)})
		s.add("response.content_part.added", append(common, member{"part", obj{{"annotations", arr{}}, {"text", ""}, {"type", "output_text"}, {"logprobs", arr{}}}})...)
		all := arr{}
		for _, i := range content {
			lps := arr{}
			if e.tr.logprobs {
				lps = e.vllmResponsesLogprobs(i, i+1, false)
				all = append(all, lps...)
			}
			s.add("response.output_text.delta", append(common, member{"delta", c.gen[i].text}, member{"logprobs", lps})...)
		}
		s.add("response.output_text.done", append(common, member{"text", c.content}, member{"logprobs", all})...)
		part := obj{{"annotations", arr{}}, {"text", c.content}, {"type", "output_text"}, {"logprobs", nil}}
		s.add("response.content_part.done", append(common, member{"part", part})...)
		s.add("response.output_item.done", member{"output_index", index}, member{"item", vllmMessageItem(id.message, "completed", c.content, nil)})
		index++
	}
	if c.call != nil {
		common := []member{{"item_id", id.call}, {"output_index", index}}
		s.add("response.output_item.added", member{"output_index", index}, member{"item", vllmCallItem(id, c.call.name, "", "in_progress")})
		for _, i := range args {
			s.add("response.function_call_arguments.delta", append(common, member{"delta", c.gen[i].text})...)
		}
		s.add("response.function_call_arguments.done", append(common, member{"arguments", c.call.arguments})...)
		s.add("response.output_item.done", member{"output_index", index}, member{"item", vllmCallItem(id, c.call.name, c.call.arguments, "completed")})
	}
	final := e.vllmResponseObject(r, g, true)
	if c.finish == "length" {
		s.add("response.incomplete", member{"response", final})
	} else {
		s.add("response.completed", member{"response", final})
	}
	return s.events
}
