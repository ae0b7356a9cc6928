package fakemodel

import "strconv"

// SGLang's Chat Completions shapes, after sgl-project/sglang
// python/sglang/srt/entrypoints/openai/protocol.py (commit 004c82e0, TOKENS.md §7) and its chat
// serving code (metadata.weight_version):
//
//   - The choice is {index, message {role, content, reasoning_content, tool_calls (null when
//     none)}, logprobs, finish_reason, matched_stop (the stop token id, null when cut),
//     prompt_token_ids, token_ids}; prompt_token_ids (with "return_prompt_token_ids") and
//     token_ids (with "return_token_ids") are ON THE CHOICE and omitted when not asked.
//   - The answer is {id (32 hex digits), object, created, model, choices, usage {prompt_tokens,
//     total_tokens, completion_tokens, prompt_tokens_details: null, reasoning_tokens}, metadata
//     {weight_version: "default"}} plus sglext {routed_experts} (a base64 string) with
//     "return_routed_experts"; sglext is omitted otherwise.
//   - Log-prob entries are {token (the token's text; SGLang has no return_tokens_as_token_ids),
//     bytes, logprob, top_logprobs [{token, bytes, logprob}]}.
//   - Stream chunks are full dumps: {id, object, created, model, choices [{index, delta {role,
//     content, reasoning_content, tool_calls}, logprobs, finish_reason, matched_stop}], usage:
//     null}, one per generated token that shows text; the stream choice has no token ids. With
//     stream_options.include_usage a chunk with "choices": [] and the usage follows, then
//     "data: [DONE]".
//   - Errors are {object: "error", message, type: "BadRequestError", param, code: 400}; a context
//     that does not fit gets SGLang's own messages ("The input (N tokens) is longer than the
//     model's context length (L tokens)." and "Requested token count exceeds the model's
//     maximum context length of L tokens. …").

// sglangID is the answer id (a uuid4 hex); sglangCallID the id of choice c's tool call.
func sglangID(g ids) string { return g.hex("", "sglang/chat", 32) }

func sglangCallID(g ids, c int) string { return g.hex("call_", "sglang/call/"+strconv.Itoa(c), 24) }

// sglangLogprobs is the logprobs object of tokens [from, to) of choice c, or nil.
func (e *engineAnswer) sglangLogprobs(c, from, to int) any {
	return e.logprobsObject(c, from, to, func(g token, lp float64, top []ranked) obj {
		alts := arr{}
		for _, t := range top {
			alts = append(alts, obj{{"token", t.tok.text}, {"bytes", byteList([]byte(t.tok.text))}, {"logprob", pyFloat(t.lp)}})
		}
		return obj{{"token", g.text}, {"bytes", byteList([]byte(g.text))}, {"logprob", pyFloat(lp)}, {"top_logprobs", alts}}
	})
}

// sglangUsage is the usage object.
func (e *engineAnswer) sglangUsage() obj {
	p, c := len(e.prompt), e.completionTokens()
	reasoning := 0
	for _, ch := range e.choices {
		for _, g := range ch.gen {
			if g.kind == genReasoning {
				reasoning++
			}
		}
	}
	return obj{{"prompt_tokens", p}, {"total_tokens", p + c}, {"completion_tokens", c}, {"prompt_tokens_details", nil}, {"reasoning_tokens", reasoning}}
}

// matchedStop is the stop token id of a choice that ended on it, else nil.
func matchedStop(c engineChoice) any {
	if c.finish == "length" {
		return nil
	}
	return tokIMEnd
}

// sglangChat is the non-streamed SGLang Chat Completions answer.
func sglangChat(r *request, e *engineAnswer, g ids) obj {
	choices := arr{}
	for i, c := range e.choices {
		var content, reasoning, calls any = c.content, nil, nil
		if c.call != nil {
			calls = arr{obj{{"id", sglangCallID(g, i)}, {"index", 0}, {"type", "function"},
				{"function", obj{{"name", c.call.name}, {"arguments", c.call.arguments}}}}}
			if c.content == "" {
				content = nil
			}
		}
		if c.reasoning != "" {
			reasoning = c.reasoning
		}
		choice := obj{{"index", i}, {"message", obj{{"role", "assistant"}, {"content", content}, {"reasoning_content", reasoning}, {"tool_calls", calls}}},
			{"logprobs", e.sglangLogprobs(i, 0, len(c.gen))}, {"finish_reason", c.finish}, {"matched_stop", matchedStop(c)}}
		if e.tr.returnPromptTokenIDs {
			choice = choice.with("prompt_token_ids", intsOrNil(true, e.prompt))
		}
		if e.tr.returnTokenIDs {
			choice = choice.with("token_ids", intsOrNil(true, genTokens(c.gen)))
		}
		choices = append(choices, choice)
	}
	o := obj{{"id", sglangID(g)}, {"object", "chat.completion"}, {"created", created}, {"model", r.model},
		{"choices", choices}, {"usage", e.sglangUsage()}, {"metadata", obj{{"weight_version", "default"}}}}
	if e.tr.routedExperts {
		o = o.with("sglext", obj{{"routed_experts", e.routedExperts()}})
	}
	return o
}

// sglangEvents is the full event sequence of a streamed SGLang Chat Completions answer.
func sglangEvents(enc *encoder, r *request, e *engineAnswer, g ids) []event {
	id := sglangID(g)
	chunk := func(choices arr, usage any) event {
		return event{"", enc.enc(obj{{"id", id}, {"object", "chat.completion.chunk"}, {"created", created}, {"model", r.model},
			{"choices", choices}, {"usage", usage}})}
	}
	delta := func(role, content, reasoning, calls any) obj {
		return obj{{"role", role}, {"content", content}, {"reasoning_content", reasoning}, {"tool_calls", calls}}
	}
	var events []event
	for c, ch := range e.choices {
		events = append(events, chunk(arr{obj{{"index", c}, {"delta", delta("assistant", "", nil, nil)}, {"logprobs", nil},
			{"finish_reason", nil}, {"matched_stop", nil}}}, nil))
		for k, t := range ch.gen {
			var d obj
			switch ch.streamKind(t) {
			case genContent:
				d = delta(nil, t.text, nil, nil)
			case genReasoning:
				d = delta(nil, nil, t.text, nil)
			case genCallName:
				if k == 0 || ch.gen[k-1].kind != genCallName {
					d = delta(nil, nil, nil, arr{obj{{"id", sglangCallID(g, c)}, {"index", 0},
						{"type", "function"}, {"function", obj{{"name", ch.call.name}, {"arguments", ""}}}}})
				}
			case genCallArgs:
				d = delta(nil, nil, nil, arr{obj{{"index", 0}, {"function", obj{{"arguments", t.text}}}}})
			}
			last := k == len(ch.gen)-1
			if d == nil && !last {
				continue
			}
			if d == nil {
				d = delta(nil, nil, nil, nil)
			}
			var finish, stop any
			if last {
				finish, stop = ch.finish, matchedStop(ch)
			}
			events = append(events, chunk(arr{obj{{"index", c}, {"delta", d}, {"logprobs", e.sglangLogprobs(c, k, k+1)},
				{"finish_reason", finish}, {"matched_stop", stop}}}, nil))
		}
	}
	if e.tr.includeUsage {
		events = append(events, chunk(arr{}, e.sglangUsage()))
	}
	return append(events, event{"", []byte("[DONE]")})
}
