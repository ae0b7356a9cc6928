package fakemodel

import "strconv"

// vLLM's Chat Completions shapes, after vLLM's protocol and serving code as stored for
// vllm-project/vllm: vllm/entrypoints/openai/chat_completion/protocol.py (commit d5dba2d7),
// chat_completion/serving.py (5e918640), chat_completion/api_router.py (c0bc5965) and
// engine/protocol.py (d7e52523), the layout of vLLM's 2026 releases (older releases name the
// message's "reasoning" member "reasoning_content"). The server is taken to run with a reasoning
// parser and with --enable-auto-tool-choice and a Hermes-style tool parser, so reasoning and
// tool calls come back parsed.
//
//   - JSON answers are pydantic's model_dump of every member, so members not asked for are
//     null, in declaration order: the choice {index, message, logprobs (null unless "logprobs"),
//     finish_reason, stop_reason (null), token_ids (null unless "return_token_ids")}, the message
//     {role, content, refusal, annotations, audio, function_call (null), tool_calls ([] when
//     none), reasoning (null unless the answer reasons)}, then usage {prompt_tokens,
//     total_tokens, completion_tokens, prompt_tokens_details: null}, prompt_logprobs (null),
//     prompt_token_ids (null unless "return_token_ids") and kv_transfer_params (null).
//   - Stream chunks are model_dump_json(exclude_unset=True): only the members vLLM's code sets.
//     The first chunk of each choice carries delta {role, content: ""}, logprobs: null,
//     finish_reason: null and the top-level prompt_token_ids (null unless "return_token_ids");
//     every later chunk is one generated token with its delta, logprobs (null unless asked),
//     finish_reason (null until the last, which adds stop_reason: null) and token_ids ([id], or
//     null unless asked). Every delta carries "reasoning_content" (vLLM copies "reasoning"
//     into it). A token that shows nothing (a special token, the template text of a tool call)
//     is sent as an empty delta only with "return_token_ids", else skipped, as vLLM does. With
//     stream_options.include_usage (default true when stream_options is given) a chunk with
//     "choices": [] and the usage follows, then "data: [DONE]".
//   - Log-prob entries are {token, logprob, bytes, top_logprobs}; token is the token's text, or
//     "token_id:<id>" with "return_tokens_as_token_ids"; bytes are the UTF-8 bytes of the text;
//     top_logprobs has top_logprobs entries {token, logprob, bytes} (the sampled one first), []
//     for top_logprobs 0.
//   - Errors are {"error": {message, type: "BadRequestError", param, code: 400}}.

// vllmChatID is the id of a vLLM answer, "chatcmpl-" + 32 hex digits; vllmCallID the id of
// choice c's tool call, "chatcmpl-tool-" + 32 hex digits.
func vllmChatID(g ids) string { return g.hex("chatcmpl-", "vllm/chat", 32) }

func vllmCallID(g ids, c int) string {
	return g.hex("chatcmpl-tool-", "vllm/call/"+strconv.Itoa(c), 32)
}

// vllmTokenText is the "token" of a log-prob entry.
func (e *engineAnswer) vllmTokenText(t token) string {
	if e.tr.asTokenIDs {
		return "token_id:" + strconv.Itoa(t.id)
	}
	return t.text
}

// vllmLogprobs is the choice's logprobs object for tokens [from, to) of choice c, or nil.
func (e *engineAnswer) vllmLogprobs(c, from, to int) any {
	return e.logprobsObject(c, from, to, func(g token, lp float64, top []ranked) obj {
		alts := arr{}
		for _, t := range top {
			alts = append(alts, obj{{"token", e.vllmTokenText(t.tok)}, {"logprob", pyFloat(t.lp)}, {"bytes", byteList([]byte(t.tok.text))}})
		}
		return obj{{"token", e.vllmTokenText(g)}, {"logprob", pyFloat(lp)}, {"bytes", byteList([]byte(g.text))}, {"top_logprobs", alts}}
	})
}

// vllmUsage is the JSON answer's usage.
func (e *engineAnswer) vllmUsage() obj {
	p, c := len(e.prompt), e.completionTokens()
	return obj{{"prompt_tokens", p}, {"total_tokens", p + c}, {"completion_tokens", c}, {"prompt_tokens_details", nil}}
}

// intsOrNil is the ids of toks as a JSON array when asked, else null.
func intsOrNil(asked bool, toks []token) any {
	if !asked {
		return nil
	}
	out := arr{}
	for _, t := range toks {
		out = append(out, t.id)
	}
	return out
}

// genTokens are the tokens of gen.
func genTokens(gen []genToken) []token {
	out := make([]token, len(gen))
	for i, g := range gen {
		out[i] = g.token
	}
	return out
}

// vllmChat is the non-streamed vLLM Chat Completions answer.
func vllmChat(r *request, e *engineAnswer, g ids) obj {
	choices := arr{}
	for i, c := range e.choices {
		var content, reasoning any = c.content, nil
		calls := arr{}
		if c.call != nil {
			calls = append(calls, obj{{"id", vllmCallID(g, i)}, {"type", "function"},
				{"function", obj{{"name", c.call.name}, {"arguments", c.call.arguments}}}})
			if c.content == "" {
				content = nil
			}
		}
		if c.reasoning != "" {
			reasoning = c.reasoning
		}
		msg := obj{{"role", "assistant"}, {"content", content}, {"refusal", nil}, {"annotations", nil},
			{"audio", nil}, {"function_call", nil}, {"tool_calls", calls}, {"reasoning", reasoning}}
		choices = append(choices, obj{{"index", i}, {"message", msg}, {"logprobs", e.vllmLogprobs(i, 0, len(c.gen))},
			{"finish_reason", c.finish}, {"stop_reason", nil}, {"token_ids", intsOrNil(e.tr.returnTokenIDs, genTokens(c.gen))}}.inline(e))
	}
	return obj{
		{"id", vllmChatID(g)}, {"object", "chat.completion"}, {"created", created}, {"model", r.model},
		{"choices", choices}, {"service_tier", nil}, {"system_fingerprint", nil}, {"usage", e.vllmUsage()},
		{"prompt_logprobs", nil}, {"prompt_token_ids", intsOrNil(e.tr.returnTokenIDs, e.prompt)}, {"kv_transfer_params", nil},
	}.inline(e)
}

// inline returns o without its token_ids and prompt_token_ids members when e emulates a vLLM
// release without them ([WithoutInlineTokenIDs]), else o.
func (o obj) inline(e *engineAnswer) obj {
	if !e.noInline {
		return o
	}
	out := make(obj, 0, len(o))
	for _, m := range o {
		if m.key != "token_ids" && m.key != "prompt_token_ids" {
			out = append(out, m)
		}
	}
	return out
}

// vllmDelta is the delta of the chunk for token k of choice c, or nil when vLLM sends no chunk
// for it (a token that shows nothing, without return_token_ids).
func (e *engineAnswer) vllmDelta(c, k int, g ids) obj {
	ch := e.choices[c]
	t := ch.gen[k]
	last := k == len(ch.gen)-1
	switch ch.streamKind(t) {
	case genContent:
		return obj{{"content", t.text}, {"reasoning_content", nil}}
	case genReasoning:
		return obj{{"reasoning", t.text}, {"reasoning_content", t.text}}
	case genCallName:
		if k == 0 || ch.gen[k-1].kind != genCallName {
			return obj{{"reasoning_content", nil}, {"tool_calls", arr{obj{{"id", vllmCallID(g, c)}, {"type", "function"},
				{"index", 0}, {"function", obj{{"name", ch.call.name}}}}}}}
		}
	case genCallArgs:
		return obj{{"reasoning_content", nil}, {"tool_calls", arr{obj{{"index", 0}, {"function", obj{{"arguments", t.text}}}}}}}
	}
	switch {
	case last && t.id == tokIMEnd:
		return obj{{"content", ""}, {"reasoning_content", nil}}
	case last || e.tr.returnTokenIDs:
		return obj{{"reasoning_content", nil}}
	}
	return nil
}

// vllmEvents is the full event sequence of a streamed vLLM Chat Completions answer.
func vllmEvents(enc *encoder, r *request, e *engineAnswer, g ids) []event {
	id := vllmChatID(g)
	chunk := func(choices arr, extra ...member) event {
		o := obj{{"id", id}, {"object", "chat.completion.chunk"}, {"created", created}, {"model", r.model}, {"choices", choices}}
		return event{"", enc.enc(append(o, extra...).inline(e))}
	}
	var events []event
	for c := range e.choices {
		first := obj{{"index", c}, {"delta", obj{{"role", "assistant"}, {"content", ""}, {"reasoning_content", nil}}},
			{"logprobs", nil}, {"finish_reason", nil}}
		events = append(events, chunk(arr{first}, member{"prompt_token_ids", intsOrNil(e.tr.returnTokenIDs, e.prompt)}))
	}
	steps := 0
	for _, ch := range e.choices {
		steps = max(steps, len(ch.gen))
	}
	for k := range steps {
		for c, ch := range e.choices {
			if k >= len(ch.gen) {
				continue
			}
			delta := e.vllmDelta(c, k, g)
			if delta == nil {
				continue
			}
			choice := obj{{"index", c}, {"delta", delta}, {"logprobs", e.vllmLogprobs(c, k, k+1)}}
			if k == len(ch.gen)-1 {
				choice = append(choice, member{"finish_reason", ch.finish}, member{"stop_reason", nil})
			} else {
				choice = append(choice, member{"finish_reason", nil})
			}
			choice = append(choice, member{"token_ids", intsOrNil(e.tr.returnTokenIDs, []token{ch.gen[k].token})})
			events = append(events, chunk(arr{choice.inline(e)}))
		}
	}
	if e.tr.includeUsage {
		p, c := len(e.prompt), e.completionTokens()
		events = append(events, chunk(arr{}, member{"usage", obj{{"prompt_tokens", p}, {"total_tokens", p + c}, {"completion_tokens", c}}}))
	}
	return append(events, event{"", []byte("[DONE]")})
}
