package fakemodel_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
)

// chatBody is a one-message Chat request with the extra members given as JSON text.
func chatBody(extra string) string {
	b := `{"model":"Qwen/Qwen3-4B","messages":[{"role":"user","content":"hi"}]`
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

// post sends body to path and returns the status and the body.
func post(t *testing.T, h http.Handler, path, body string) (int, string) {
	t.Helper()
	resp := do(t, h, http.MethodPost, path, body)
	return resp.StatusCode, bodyOf(t, resp)
}

// ints returns the integers of the JSON array at path.
func ints(t *testing.T, v any, path ...any) []int64 {
	t.Helper()
	a, ok := at(t, v, path...).([]any)
	require.True(t, ok, "not an array at %v", path)
	out := make([]int64, len(a))
	for i := range a {
		out[i] = num(t, a, i)
	}
	return out
}

var tokenIDText = regexp.MustCompile(`^token_id:[0-9]+$`)

// vLLM's JSON answer: every member of its response models, null when not asked (vllm.go).
func TestVLLMChatShapes(t *testing.T) {
	const (
		message = `message:{role:s,content:s,refusal:null,annotations:null,audio:null,function_call:null,tool_calls:[],reasoning:null}`
		usage   = `usage:{prompt_tokens:n,total_tokens:n,completion_tokens:n,prompt_tokens_details:null}`
		head    = `{id:s,object:s,created:n,model:s,choices:[{index:n,` + message
		tail    = `service_tier:null,system_fingerprint:null,` + usage + `,prompt_logprobs:null,`
		entry   = `{token:s,logprob:n,bytes:[n],top_logprobs:`
	)
	srv := fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM))
	for _, tc := range []struct {
		name, extra, want string
	}{
		{"nothing asked", ``,
			head + `,logprobs:null,finish_reason:s,stop_reason:null,token_ids:null}],` + tail + `prompt_token_ids:null,kv_transfer_params:null}`},
		{"logprobs", `"logprobs":true`,
			head + `,logprobs:{content:[` + entry + `[]}]},finish_reason:s,stop_reason:null,token_ids:null}],` + tail + `prompt_token_ids:null,kv_transfer_params:null}`},
		{"top logprobs", `"logprobs":true,"top_logprobs":3`,
			head + `,logprobs:{content:[` + entry + `[{token:s,logprob:n,bytes:[n]}]}]},finish_reason:s,stop_reason:null,token_ids:null}],` + tail + `prompt_token_ids:null,kv_transfer_params:null}`},
		{"inline ids", `"return_token_ids":true`,
			head + `,logprobs:null,finish_reason:s,stop_reason:null,token_ids:[n]}],` + tail + `prompt_token_ids:[n],kv_transfer_params:null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(t, srv, "/v1/chat/completions", chatBody(tc.extra))
			require.Equal(t, http.StatusOK, status, body)
			require.Equal(t, tc.want, shape(t, body))
		})
	}
}

// Log-prob tokens: the text, or "token_id:<id>" with return_tokens_as_token_ids; top_logprobs
// lists the sampled token first; the ids agree with the inline token_ids.
func TestVLLMLogprobTokens(t *testing.T) {
	srv := fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM))
	_, body := post(t, srv, "/v1/chat/completions", chatBody(`"logprobs":true,"top_logprobs":2,"return_tokens_as_token_ids":true,"return_token_ids":true`))
	v := object(t, body)
	gen := ints(t, v, "choices", 0, "token_ids")
	content := at(t, v, "choices", 0, "logprobs", "content").([]any)
	require.Len(t, content, len(gen))
	for i, e := range content {
		tok := str(t, e, "token")
		require.Regexp(t, tokenIDText, tok)
		require.Equal(t, "token_id:"+strconv.FormatInt(gen[i], 10), tok)
		top := at(t, e, "top_logprobs").([]any)
		require.Len(t, top, 2)
		require.Equal(t, tok, str(t, top, 0, "token"))
		require.Equal(t, at(t, e, "logprob"), at(t, top, 0, "logprob"))
		lp, err := at(t, e, "logprob").(json.Number).Float64()
		require.NoError(t, err)
		require.Less(t, lp, 0.0)
	}
	require.Equal(t, int64(151645), gen[len(gen)-1], "the generation ends with <|im_end|>")
	require.Equal(t, int64(len(gen)), num(t, v, "usage", "completion_tokens"))
	require.Equal(t, int64(len(ints(t, v, "prompt_token_ids"))), num(t, v, "usage", "prompt_tokens"))

	_, body = post(t, srv, "/v1/chat/completions", chatBody(`"logprobs":true`))
	text := ""
	for _, e := range at(t, object(t, body), "choices", 0, "logprobs", "content").([]any) {
		require.NotRegexp(t, tokenIDText, str(t, e, "token"))
		text += str(t, e, "token")
	}
	require.Equal(t, str(t, object(t, body), "choices", 0, "message", "content")+"<|im_end|>", text)
}

// The prompt ids are those of POST /tokenize for the same messages (vLLM's /tokenize answer
// {count, max_model_len, tokens, token_strs}).
func TestVLLMTokenize(t *testing.T) {
	srv := fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM))
	_, chat := post(t, srv, "/v1/chat/completions", chatBody(`"return_token_ids":true`))
	status, tok := post(t, srv, "/tokenize", chatBody(""))
	require.Equal(t, http.StatusOK, status, tok)
	require.Equal(t, `{count:n,max_model_len:n,tokens:[n],token_strs:null}`, shape(t, tok))
	v := object(t, tok)
	require.Equal(t, ints(t, object(t, chat), "prompt_token_ids"), ints(t, v, "tokens"))
	require.Equal(t, int64(len(ints(t, v, "tokens"))), num(t, v, "count"))
	require.Equal(t, int64(32768), num(t, v, "max_model_len"))

	_, tok = post(t, srv, "/tokenize", chatBody(`"return_token_strs":true`))
	var strs struct {
		TokenStrs []string `json:"token_strs"`
	}
	require.NoError(t, json.Unmarshal([]byte(tok), &strs))
	require.Equal(t, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", strings.Join(strs.TokenStrs, ""))

	_, tok = post(t, srv, "/tokenize", `{"model":"m","prompt":"hi there"}`)
	require.Equal(t, []int64{151643}, ints(t, object(t, tok), "tokens")[:1], "a completion prompt gets the BOS token by default")
	status, tok = post(t, srv, "/tokenize", `{"model":"m"}`)
	require.Equal(t, http.StatusBadRequest, status, tok)
	require.Equal(t, `{error:{message:s,type:s,param:null,code:n}}`, shape(t, tok))
}

// The 400s vLLM answers before generating, in vLLM's error shape.
func TestVLLMErrors(t *testing.T) {
	srv := fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM), fakemodel.WithMaxModelLen(64))
	for _, tc := range []struct {
		name, body, message string
	}{
		{"prompt too long", `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("word ", 80) + `"}]}`,
			"This model's maximum context length is 64 tokens. However, your request has 90 input tokens. Please reduce the length of the input messages."},
		{"max_tokens too large", chatBody(`"max_tokens":60`),
			"'max_tokens' or 'max_completion_tokens' is too large: 60. This model's maximum context length is 64 tokens and your request has 10 input tokens (60 > 64 - 10)."},
		{"top_logprobs without logprobs", chatBody(`"top_logprobs":2`), "when using `top_logprobs`, `logprobs` must be set to true."},
		{"negative top_logprobs", chatBody(`"logprobs":true,"top_logprobs":-2`), "`top_logprobs` must be a positive value or -1."},
		{"stream_options without stream", chatBody(`"stream_options":{"include_usage":true}`), "Stream options can only be defined when `stream=True`."},
		{"n of 0", chatBody(`"n":0`), "n must be at least 1, got 0."},
		{"max_tokens of 0", chatBody(`"max_tokens":0`), "max_tokens must be at least 1, got 0."},
		{"too many top_logprobs", chatBody(`"logprobs":true,"top_logprobs":21`), "Requested sample logprobs of 21, which is greater than max allowed: 20"},
		{"logprobs not a boolean", chatBody(`"logprobs":"yes"`), "logprobs: Input should be a valid boolean"},
		{"arguments not a string", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f","arguments":{}}}]}]}`,
			"messages: json: cannot unmarshal object into Go struct field .tool_calls.function.arguments of type string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(t, srv, "/v1/chat/completions", tc.body)
			require.Equal(t, http.StatusBadRequest, status, body)
			require.Equal(t, `{error:{message:s,type:s,param:s,code:n}}`, shape(t, body))
			v := object(t, body)
			require.Equal(t, tc.message, str(t, v, "error", "message"))
			require.Equal(t, "BadRequestError", str(t, v, "error", "type"))
			require.Equal(t, int64(400), num(t, v, "error", "code"))
		})
	}
}

// n choices, an output limit, a tool call.
func TestVLLMChoices(t *testing.T) {
	srv := fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM))
	_, body := post(t, srv, "/v1/chat/completions", chatBody(`"n":3,"logprobs":true,"return_token_ids":true`))
	v := object(t, body)
	require.Len(t, at(t, v, "choices"), 3)
	for i := range 3 {
		require.Equal(t, int64(i), num(t, v, "choices", i, "index"))
		require.Equal(t, ints(t, v, "choices", 0, "token_ids"), ints(t, v, "choices", i, "token_ids"))
	}
	require.NotEqual(t, at(t, v, "choices", 0, "logprobs"), at(t, v, "choices", 1, "logprobs"), "each choice has its own log probs")
	require.Equal(t, int64(3*len(ints(t, v, "choices", 0, "token_ids"))), num(t, v, "usage", "completion_tokens"))

	_, body = post(t, srv, "/v1/chat/completions", chatBody(`"max_tokens":4,"return_token_ids":true`))
	v = object(t, body)
	require.Equal(t, "length", str(t, v, "choices", 0, "finish_reason"))
	require.Len(t, ints(t, v, "choices", 0, "token_ids"), 4)
	require.NotContains(t, ints(t, v, "choices", 0, "token_ids"), int64(151645))

	_, body = post(t, srv, "/v1/chat/completions", weatherBody(""))
	v = object(t, body)
	require.Equal(t, "tool_calls", str(t, v, "choices", 0, "finish_reason"))
	require.Nil(t, at(t, v, "choices", 0, "message", "content"))
	require.Regexp(t, `^chatcmpl-tool-[0-9a-f]{32}$`, str(t, v, "choices", 0, "message", "tool_calls", 0, "id"))
	require.Equal(t, `{"city":"weather in Paris"}`, str(t, v, "choices", 0, "message", "tool_calls", 0, "function", "arguments"))
}

// weatherBody is a Chat request offering a get_weather tool.
func weatherBody(extra string) string {
	b := `{"model":"m","messages":[{"role":"user","content":"weather in Paris"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

// streamed is a streamed Chat answer read back: the chunks and what they add up to.
type streamed struct {
	chunks    []map[string]any
	raw       []string
	prompt    []int64 // prompt_token_ids of the first chunk (nil when null)
	ids       []int64 // the chunks' token_ids, concatenated
	entries   int     // log-prob entries over all chunks
	content   string
	reasoning string
	args      string
	finish    string
}

func readStream(t *testing.T, body string) streamed {
	t.Helper()
	events := parseSSE(t, body)
	require.Equal(t, "[DONE]", events[len(events)-1].Data)
	var s streamed
	for i, ev := range events[:len(events)-1] {
		c := object(t, ev.Data)
		s.chunks, s.raw = append(s.chunks, c), append(s.raw, ev.Data)
		if i == 0 {
			if p, ok := c["prompt_token_ids"].([]any); ok && p != nil {
				s.prompt = ints(t, c, "prompt_token_ids")
			}
		}
		for _, ch := range c["choices"].([]any) {
			ch := ch.(map[string]any)
			if ids, ok := ch["token_ids"].([]any); ok && ids != nil {
				s.ids = append(s.ids, ints(t, ch, "token_ids")...)
			}
			if lp, ok := ch["logprobs"].(map[string]any); ok {
				s.entries += len(lp["content"].([]any))
			}
			d := ch["delta"].(map[string]any)
			if c, ok := d["content"].(string); ok {
				s.content += c
			}
			if r, ok := d["reasoning"].(string); ok {
				s.reasoning += r
			} else if r, ok := d["reasoning_content"].(string); ok {
				s.reasoning += r
			}
			if calls, ok := d["tool_calls"].([]any); ok {
				for _, tc := range calls {
					if a, ok := tc.(map[string]any)["function"].(map[string]any)["arguments"].(string); ok {
						s.args += a
					}
				}
			}
			if f, ok := ch["finish_reason"].(string); ok {
				s.finish = f
			}
		}
	}
	return s
}

// A vLLM stream: prompt ids in the first chunk, each chunk's token ids and log probs, the same
// answer as the JSON one (exclude_unset chunk shapes, vllm.go).
func TestVLLMStream(t *testing.T) {
	srv := fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM))
	for _, tc := range []struct{ name, body string }{
		{"text", chatBody(`"logprobs":true,"return_token_ids":true`)},
		{"reasoning", chatBody(`"logprobs":true,"return_token_ids":true,"reasoning_effort":"low"`)},
		{"tool call", weatherBody(`"logprobs":true,"return_token_ids":true`)},
		{"cut", chatBody(`"logprobs":true,"return_token_ids":true,"max_tokens":5`)},
		{"cut tool call", weatherBody(`"logprobs":true,"return_token_ids":true,"max_tokens":9`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, j := post(t, srv, "/v1/chat/completions", tc.body)
			_, sse := post(t, srv, "/v1/chat/completions", strings.TrimSuffix(tc.body, "}")+`,"stream":true}`)
			jv, s := object(t, j), readStream(t, sse)
			require.Equal(t, ints(t, jv, "prompt_token_ids"), s.prompt)
			require.Equal(t, ints(t, jv, "choices", 0, "token_ids"), s.ids)
			require.Equal(t, len(s.ids), s.entries)
			require.Equal(t, str(t, jv, "choices", 0, "finish_reason"), s.finish)
			msg := at(t, jv, "choices", 0, "message").(map[string]any)
			if c, ok := msg["content"].(string); ok {
				require.Equal(t, c, s.content)
			}
			if r, ok := msg["reasoning"].(string); ok || tc.name == "reasoning" {
				require.NotEmpty(t, r)
				require.Equal(t, r, s.reasoning)
			}
			if calls := msg["tool_calls"].([]any); len(calls) > 0 || tc.name == "tool call" {
				require.NotEmpty(t, calls)
				require.Equal(t, str(t, calls, 0, "function", "arguments"), s.args)
			}
		})
	}

	// n choices stream interleaved, each with its own index and ids.
	_, j := post(t, srv, "/v1/chat/completions", chatBody(`"n":2,"return_token_ids":true`))
	_, sse := post(t, srv, "/v1/chat/completions", chatBody(`"n":2,"return_token_ids":true,"stream":true`))
	perChoice := map[int64][]int64{}
	for _, ev := range parseSSE(t, sse) {
		if ev.Data == "[DONE]" {
			continue
		}
		c := object(t, ev.Data)
		if ids, ok := at(t, c, "choices", 0).(map[string]any)["token_ids"]; ok {
			i := num(t, c, "choices", 0, "index")
			for _, id := range ids.([]any) {
				n, err := id.(json.Number).Int64()
				require.NoError(t, err)
				perChoice[i] = append(perChoice[i], n)
			}
		}
	}
	require.Len(t, perChoice, 2)
	for i := range 2 {
		require.Equal(t, ints(t, object(t, j), "choices", i, "token_ids"), perChoice[int64(i)])
	}

	_, sse = post(t, srv, "/v1/chat/completions", chatBody(`"stream":true,"stream_options":{}`))
	s := readStream(t, sse)
	require.Equal(t, `{id:s,object:s,created:n,model:s,choices:[{index:n,delta:{role:s,content:s,reasoning_content:null},logprobs:null,finish_reason:null}],prompt_token_ids:null}`, shape(t, s.raw[0]))
	require.Equal(t, `{id:s,object:s,created:n,model:s,choices:[{index:n,delta:{content:s,reasoning_content:null},logprobs:null,finish_reason:null,token_ids:null}]}`, shape(t, s.raw[1]))
	require.Equal(t, `{id:s,object:s,created:n,model:s,choices:[{index:n,delta:{content:s,reasoning_content:null},logprobs:null,finish_reason:s,stop_reason:null,token_ids:null}]}`, shape(t, s.raw[len(s.raw)-2]))
	require.Equal(t, `{id:s,object:s,created:n,model:s,choices:[],usage:{prompt_tokens:n,total_tokens:n,completion_tokens:n}}`, shape(t, s.raw[len(s.raw)-1]), "stream_options defaults include_usage to true")
	require.Nil(t, s.prompt)
	require.Nil(t, s.ids)
	require.Zero(t, s.entries)
}

// SGLang: token ids and prompt ids on the choice, omitted when not asked; text log-prob tokens;
// routed experts in sglext; /v1/tokenize (sglang.go).
func TestSGLangChat(t *testing.T) {
	srv := fakemodel.New(fakemodel.WithEngine(fakemodel.EngineSGLang))
	const (
		message = `message:{role:s,content:s,reasoning_content:null,tool_calls:null}`
		usage   = `usage:{prompt_tokens:n,total_tokens:n,completion_tokens:n,prompt_tokens_details:null,reasoning_tokens:n},metadata:{weight_version:s}`
	)
	for _, tc := range []struct{ name, extra, want string }{
		{"nothing asked", ``, `{id:s,object:s,created:n,model:s,choices:[{index:n,` + message + `,logprobs:null,finish_reason:s,matched_stop:n}],` + usage + `}`},
		{"ids and logprobs", `"logprobs":true,"top_logprobs":1,"return_token_ids":true,"return_prompt_token_ids":true`,
			`{id:s,object:s,created:n,model:s,choices:[{index:n,` + message + `,logprobs:{content:[{token:s,bytes:[n],logprob:n,top_logprobs:[{token:s,bytes:[n],logprob:n}]}]},finish_reason:s,matched_stop:n,prompt_token_ids:[n],token_ids:[n]}],` + usage + `}`},
		{"routed experts", `"return_routed_experts":true`, `{id:s,object:s,created:n,model:s,choices:[{index:n,` + message + `,logprobs:null,finish_reason:s,matched_stop:n}],` + usage + `,sglext:{routed_experts:s}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(t, srv, "/v1/chat/completions", chatBody(tc.extra))
			require.Equal(t, http.StatusOK, status, body)
			require.Equal(t, tc.want, shape(t, body))
		})
	}
	_, body := post(t, srv, "/v1/chat/completions", chatBody(`"logprobs":true,"return_token_ids":true,"return_prompt_token_ids":true,"return_routed_experts":true`))
	v := object(t, body)
	for _, e := range at(t, v, "choices", 0, "logprobs", "content").([]any) {
		require.NotRegexp(t, tokenIDText, str(t, e, "token"))
	}
	experts, err := base64.StdEncoding.DecodeString(str(t, v, "sglext", "routed_experts"))
	require.NoError(t, err)
	n := len(ints(t, v, "choices", 0, "prompt_token_ids")) + len(ints(t, v, "choices", 0, "token_ids"))
	require.Len(t, experts, n*16, "two layers × two experts × int32 per token")

	for _, path := range []string{"/tokenize", "/v1/tokenize"} {
		status, tok := post(t, srv, path, chatBody(`"add_special_tokens":false`))
		require.Equal(t, http.StatusOK, status, tok)
		require.Equal(t, `{tokens:[n],count:n,max_model_len:n}`, shape(t, tok))
		require.Equal(t, ints(t, v, "choices", 0, "prompt_token_ids"), ints(t, object(t, tok), "tokens"))
	}

	for _, body := range []string{chatBody(""), chatBody(`"reasoning_effort":"low"`), weatherBody(""), weatherBody(`"max_tokens":9`)} {
		_, j := post(t, srv, "/v1/chat/completions", body)
		_, sse := post(t, srv, "/v1/chat/completions", strings.TrimSuffix(body, "}")+`,"stream":true}`)
		jv, s := object(t, j), readStream(t, sse)
		msg := at(t, jv, "choices", 0, "message").(map[string]any)
		content, _ := msg["content"].(string)
		reasoning, _ := msg["reasoning_content"].(string)
		require.Equal(t, content, s.content, body)
		require.Equal(t, reasoning, s.reasoning, body)
		if calls, ok := msg["tool_calls"].([]any); ok {
			require.Equal(t, str(t, calls, 0, "function", "arguments"), s.args)
		}
		require.Equal(t, str(t, jv, "choices", 0, "finish_reason"), s.finish)
	}
	_, sse := post(t, srv, "/v1/chat/completions", chatBody(`"stream":true,"return_token_ids":true,"logprobs":true`))
	s := readStream(t, sse)
	require.Equal(t, str(t, v, "choices", 0, "message", "content"), s.content)
	require.Nil(t, s.ids, "SGLang's stream choice has no token ids")
	require.Equal(t, `{id:s,object:s,created:n,model:s,choices:[{index:n,delta:{role:null,content:s,reasoning_content:null,tool_calls:null},logprobs:{content:[{token:s,bytes:[n],logprob:n,top_logprobs:[]}]},finish_reason:null,matched_stop:null}],usage:null}`, shape(t, s.raw[1]))

	small := fakemodel.New(fakemodel.WithEngine(fakemodel.EngineSGLang), fakemodel.WithMaxModelLen(16))
	for body, want := range map[string]string{
		`{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("word ", 20) + `"}]}`: "The input (30 tokens) is longer than the model's context length (16 tokens).",
		chatBody(`"max_tokens":10`): "Requested token count exceeds the model's maximum context length of 16 tokens. You requested a total of 20 tokens: 10 tokens from the input messages and 10 tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.",
	} {
		status, got := post(t, small, "/v1/chat/completions", body)
		require.Equal(t, http.StatusBadRequest, status)
		require.Equal(t, `{object:s,message:s,type:s,param:null,code:n}`, shape(t, got))
		require.Equal(t, want, str(t, object(t, got), "message"))
	}
}

// The default engine is unchanged, and has no tokenize endpoint; /v1/responses keeps the OpenAI
// shape under SGLang and has no inline token ids under vLLM (its ResponsesResponse has none; its
// raw tokens come only with enable_response_messages, vllmresponses_test.go).
func TestEngineSelection(t *testing.T) {
	for name, want := range map[string]fakemodel.Engine{
		"": fakemodel.EngineOpenAI, "openai": fakemodel.EngineOpenAI, "vllm": fakemodel.EngineVLLM, "sglang": fakemodel.EngineSGLang,
	} {
		e, err := fakemodel.ParseEngine(name)
		require.NoError(t, err)
		require.Equal(t, want, e, "ParseEngine(%q)", name)
	}
	_, err := fakemodel.ParseEngine("tgi")
	require.ErrorContains(t, err, `unknown engine "tgi"`)

	plain, def := fakemodel.New(), fakemodel.New(fakemodel.WithEngine(fakemodel.EngineOpenAI))
	for _, body := range []string{chatBody(""), chatBody(`"stream":true`)} {
		_, a := post(t, plain, "/v1/chat/completions", body)
		_, b := post(t, def, "/v1/chat/completions", body)
		require.Equal(t, a, b)
	}
	status, _ := post(t, plain, "/tokenize", chatBody(""))
	require.Equal(t, http.StatusNotFound, status)

	sglang := fakemodel.New(fakemodel.WithEngine(fakemodel.EngineSGLang))
	vllm := fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM))
	resp := `{"model":"m","input":"hi","return_token_ids":true}`
	_, a := post(t, plain, "/v1/responses", resp)
	_, b := post(t, sglang, "/v1/responses", resp)
	require.Equal(t, a, b)
	_, c := post(t, vllm, "/v1/responses", resp)
	require.NotContains(t, c, "token_ids")
	require.Contains(t, c, `"input_messages":null,"output_messages":null`)
}

// vLLM quirks a proxy must live with: an explicit "top_logprobs": null turns log probs off even
// with "logprobs": true; no OpenAI headers; a Fault's error status in the engine's error shape.
func TestVLLMWire(t *testing.T) {
	srv := fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM), fakemodel.WithFault(func(c fakemodel.Call) fakemodel.Fault {
		if strings.Contains(string(c.Body), "overload") {
			return fakemodel.Fault{Status: http.StatusServiceUnavailable}
		}
		return fakemodel.Fault{}
	}))
	_, body := post(t, srv, "/v1/chat/completions", chatBody(`"logprobs":true,"top_logprobs":null`))
	require.Nil(t, at(t, object(t, body), "choices", 0, "logprobs"))

	for _, b := range []string{chatBody(""), chatBody(`"stream":true`)} {
		resp := do(t, srv, http.MethodPost, "/v1/chat/completions", b)
		_ = bodyOf(t, resp)
		require.Empty(t, resp.Header.Get("X-Request-Id"))
		require.Empty(t, resp.Header.Get("Openai-Processing-Ms"))
		require.Empty(t, resp.Header.Get("Cache-Control"))
	}
	status, body := post(t, srv, "/v1/chat/completions", `{"model":"overload","messages":[{"role":"user","content":"hi"}]}`)
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Equal(t, `{error:{message:s,type:s,param:null,code:n}}`, shape(t, body))
	require.Equal(t, "InternalServerError", str(t, object(t, body), "error", "type"))
}

// A vLLM release before return_token_ids: the member is ignored and the token members are
// absent; log-prob ids and /tokenize still give the ids.
func TestVLLMWithoutInlineTokenIDs(t *testing.T) {
	srv := fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM), fakemodel.WithoutInlineTokenIDs())
	_, body := post(t, srv, "/v1/chat/completions", chatBody(`"return_token_ids":true,"logprobs":true,"return_tokens_as_token_ids":true`))
	shp := shape(t, body)
	require.NotContains(t, shp, "token_ids")
	require.Contains(t, shp, "logprobs:{content:[{token:s")
	_, sse := post(t, srv, "/v1/chat/completions", chatBody(`"return_token_ids":true,"stream":true`))
	require.NotContains(t, sse, "token_ids")
	_, tok := post(t, srv, "/tokenize", chatBody(""))
	require.Len(t, ints(t, object(t, tok), "tokens"), int(num(t, object(t, body), "usage", "prompt_tokens")))
}

// TestEngineAnswerIgnoresTokenMembers: the token members a token-capturing proxy adds
// (logprobs, top_logprobs, return_token_ids, return_tokens_as_token_ids, return_prompt_token_ids)
// say which facts the answer reports, not what is sampled: with or without them the engine
// answers with the same id, text and log probabilities (so the client of such a proxy can get the
// engine's answer to its own request byte for byte, docs/TOKENS.md §0 T2).
func TestEngineAnswerIgnoresTokenMembers(t *testing.T) {
	members := `"logprobs":true,"top_logprobs":0,"return_token_ids":true,"return_tokens_as_token_ids":true,"return_prompt_token_ids":true`
	for _, engine := range []fakemodel.Engine{fakemodel.EngineVLLM, fakemodel.EngineSGLang} {
		t.Run(string(engine), func(t *testing.T) {
			srv := fakemodel.New(fakemodel.WithEngine(engine))
			read := func(extra string) (id, content string, lps []float64) {
				code, body := post(t, srv, "/v1/chat/completions", chatBody(extra))
				require.Equal(t, http.StatusOK, code, body)
				v := decode(t, body)
				id, _ = at(t, v, "id").(string)
				content, _ = at(t, v, "choices", 0, "message", "content").(string)
				choice, _ := at(t, v, "choices", 0).(map[string]any)
				lp, _ := choice["logprobs"].(map[string]any)
				if entries, ok := lp["content"].([]any); ok {
					for _, e := range entries {
						lp, _ := e.(map[string]any)["logprob"].(json.Number).Float64()
						lps = append(lps, lp)
					}
				}
				return id, content, lps
			}
			id, content, _ := read(`"logprobs":true`)
			id2, content2, lps := read(members)
			id3, content3, lps3 := read(`"logprobs":true,"top_logprobs":3`)
			plainID, plainContent, _ := read(``)
			require.NotEmpty(t, id)
			require.NotEmpty(t, content)
			require.Equal(t, []string{id, id, id}, []string{id2, id3, plainID}, "the same id")
			require.Equal(t, []string{content, content, content}, []string{content2, content3, plainContent}, "the same text")
			require.NotEmpty(t, lps)
			require.Equal(t, lps, lps3, "the same log probabilities")
		})
	}
}
