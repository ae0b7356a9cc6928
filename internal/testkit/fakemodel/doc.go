// Package fakemodel is an in-process fake model server that answers the three provider dialects
// gymtrace captures (SPEC.md §1.6): the OpenAI Responses API (POST /v1/responses), OpenAI Chat
// Completions (POST /v1/chat/completions) and Anthropic Messages (POST /v1/messages), each as a
// JSON body or, when the request has "stream": true, as a server-sent event stream. It backs `gymtrace demo` and the tests of the proxy and the e2e module.
//
// # Realism
//
// Bodies, events and headers follow the shapes the official APIs send, field for field and in
// the same key order: Responses events response.created, response.in_progress,
// response.output_item.added/done, response.reasoning_summary_*, response.content_part.*,
// response.output_text.*, response.function_call_arguments.* and response.completed (or
// response.incomplete when max_output_tokens cuts the answer), with usage carrying
// input_tokens_details.cached_tokens and output_tokens_details.reasoning_tokens;
// chat.completion.chunk events with tool_calls deltas, finish_reason, a final usage chunk with
// "choices": [] when stream_options.include_usage is set, then "data: [DONE]"; Anthropic
// message_start, ping, content_block_start/delta (thinking_delta, signature_delta, text_delta,
// input_json_delta)/stop, message_delta with usage and message_stop, each with its "event:" line,
// and usage with cache_read_input_tokens/cache_creation_input_tokens. Errors use each provider's
// error shape ({"error":{message,type,param,code}} for OpenAI, {"type":"error","error":{type,
// message},"request_id":...} for Anthropic) with the status the real API uses.
//
// # Determinism
//
// The answer is a pure function of the request body (and of the options): the same request
// members give the same ids, text, tool call and usage, whether streamed or not ("stream" and
// "stream_options" do not count), so a stream reassembles to exactly the JSON answer. For a chat
// request to the vLLM or SGLang engine, the members that only ask for token facts ("logprobs",
// "top_logprobs", "return_token_ids", "return_tokens_as_token_ids", "return_prompt_token_ids") do
// not count either: they add members to the answer, not change it, as in a real engine, so a
// token-capturing proxy that adds them can give its client the answer to the client's own request.
// The rules:
//
//   - When the request offers a function tool (the first one wins) and tool_choice is not
//     "none", and the last input is not a tool result, the answer is a call of that tool with
//     JSON arguments built from its parameter schema (the first string parameter receives the
//     last user text). After a tool result the answer is text quoting that result; otherwise
//     the answer is text quoting the last user message.
//   - Reasoning (a Responses reasoning item with a summary, a Chat "reasoning_content" as vLLM
//     sends it, an Anthropic thinking block with its signature) is included when the request asks
//     for it (Responses "reasoning", Chat "reasoning_effort", Anthropic "thinking" of type
//     enabled or adaptive), or when the model is an OpenAI reasoning model (o1, o3, o4, gpt-5
//     families).
//   - Prompt tokens are 8 + ceil(c/4), where c counts the characters of every JSON string value in
//     the request except the top-level "model". A request with more than one message or input
//     item (or a previous_response_id) reports half its prompt tokens, rounded down to a
//     multiple of 8, as cached (OpenAI cached_tokens, Anthropic cache_read_input_tokens); an
//     Anthropic request carrying "cache_control" also reports half of the rest as
//     cache_creation_input_tokens. Output tokens are ceil(bytes/4) of the text plus a fixed cost
//     per tool call; reasoning adds 32 + ceil(bytes/4) of the reasoning text.
//   - An output limit (Responses max_output_tokens, Chat max_tokens/max_completion_tokens,
//     Anthropic max_tokens) smaller than the answer cuts it: Responses status "incomplete" with
//     incomplete_details.reason "max_output_tokens", Chat finish_reason "length", Anthropic
//     stop_reason "max_tokens".
//   - Timestamps ("created", "created_at") are a fixed instant, 1760000000 (2025-10-09T08:53:20Z).
//
// # Engines
//
// [WithEngine] makes the Server answer as a vLLM or SGLang server instead (default
// [EngineOpenAI]: everything above, unchanged). Then POST /v1/chat/completions is answered in
// that server's shape (vllm.go, sglang.go: which members are null, which absent, in which order,
// in JSON and in stream chunks), with its token members: vLLM's "logprobs"/"top_logprobs",
// "return_tokens_as_token_ids" (log-prob tokens "token_id:<id>"), "return_token_ids" (top-level
// prompt_token_ids and choices[i].token_ids; streamed: prompt ids in the first chunk, each
// chunk's token ids and log probs in that chunk); SGLang's "return_token_ids",
// "return_prompt_token_ids" (on the choice) and "return_routed_experts" (sglext). Other vLLM
// and SGLang rules served: "n" choices, "add_special_tokens", "add_generation_prompt", the
// top_logprobs/logprobs validation (vLLM: an explicit "top_logprobs": null turns log probs
// off), stream_options only with stream, and the HTTP 400 when the prompt does not fit
// [WithMaxModelLen] (default 32768) or max_tokens exceeds what is left (vLLM: "This model's
// maximum context length is …"; SGLang: its own "… context length …"). The tokenize endpoint
// is served too (vLLM POST /tokenize, SGLang POST /tokenize and /v1/tokenize).
// [WithoutInlineTokenIDs] makes the vLLM engine a release before return_token_ids (v0.10.2).
//
// POST /v1/messages keeps the shapes described above, and so does POST /v1/responses under
// SGLang. Under vLLM, POST /v1/responses is answered in vLLM's Responses shapes
// (vllmresponses.go): no inline token ids (its ResponsesResponse has no prompt_token_ids/token_ids
// member and its request no return_token_ids), but "include": ["message.output_text.logprobs"]
// puts the log probs of every generated token on the message's output_text and
// "enable_response_messages": true returns the prompt's and the generation's token ids as
// input_messages and output_messages.
//
// The ids come from a deterministic tokenizer (tokenizer.go) and a ChatML chat template
// (template.go): the answer text is the same as above, the usage counts are the token counts,
// the generation ends with the end-of-turn token <|im_end|> (151645), and the prompt of turn
// k+1 extends the prompt and generation of turn k token by token when the client sends the
// assistant message back as it received it. A turn that reasoned (its <think> block is dropped
// from the history, as Qwen3's template does) or a change of add_special_tokens re-tokenizes
// the history and breaks that prefix. Log probabilities are −k/10000 for a k derived from the
// request, the choice and the position.
//
// # Faults
//
// [WithFault] installs a [FaultFunc] that sees every valid model call ([Call]) and may replace
// the answer with an error status, a raw body, a delay, or cut a stream after some events
// (clean end, broken connection, or the dialect's in-stream error event). See [Fault].
//
// # Concurrency
//
// A [Server] is safe for concurrent use; it keeps no state. Streams honour
// the request context: when the client goes away the handler returns.
package fakemodel
