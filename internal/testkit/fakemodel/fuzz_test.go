package fakemodel_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
)

// FuzzRequest feeds arbitrary bodies to every endpoint: the Server must never panic and must
// answer 200 with a JSON object or a well-formed event stream, or 400 with a JSON error.
func FuzzRequest(f *testing.F) {
	for _, sc := range scenarios {
		for i, d := range []fakemodel.Dialect{fakemodel.DialectResponses, fakemodel.DialectChat, fakemodel.DialectMessages} {
			b, err := json.Marshal(sc.body[d])
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(i), b)
			f.Add(uint8(i), append(b[:len(b)-1], []byte(`,"stream":true}`)...))
		}
	}
	f.Add(uint8(0), []byte(`{"model":"m","input":[{"type":"function_call_output","output":[{"type":"input_text","text":"x"}]}]}`))
	f.Add(uint8(1), []byte(`{"model":"m","messages":[{"role":"tool","content":[{"type":"text","text":"r"}]}],"n":3,"stream":true}`))
	f.Add(uint8(2), []byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","content":[{"type":"text","text":"r"}]}]}]}`))
	srv := fakemodel.New()
	dialects := []string{"/v1/responses", "/v1/chat/completions", "/v1/messages"}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		wellFormed(t, do(t, srv, http.MethodPost, dialects[int(which)%3], body), func(t *testing.T, text string) {
			for _, ev := range parseSSE(t, text) {
				if ev.Data != "[DONE]" && !json.Valid([]byte(ev.Data)) {
					t.Fatalf("invalid event data %q", ev.Data)
				}
			}
		})
	})
}

// wellFormed checks a fuzzed answer: 200 with a JSON object or an event stream (read by
// stream), or 400 with a JSON error.
func wellFormed(t *testing.T, resp *http.Response, stream func(*testing.T, string)) {
	t.Helper()
	text := bodyOf(t, resp)
	switch resp.StatusCode {
	case http.StatusOK:
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			stream(t, text)
			return
		}
		object(t, text)
	case http.StatusBadRequest:
		object(t, text)
	default:
		t.Fatalf("status %d: %s", resp.StatusCode, text)
	}
}

// FuzzEngineRequest feeds arbitrary bodies to the vLLM and SGLang engines' chat and tokenize
// endpoints: never a panic; 200 with a JSON object or a well-formed event stream of chunks
// (ending in [DONE]), or 400 with a JSON error.
func FuzzEngineRequest(f *testing.F) {
	for _, b := range []string{
		chatBody(""), chatBody(`"logprobs":true,"top_logprobs":3,"return_token_ids":true,"return_tokens_as_token_ids":true`),
		chatBody(`"n":2,"max_tokens":3,"return_prompt_token_ids":true,"return_routed_experts":true`),
		chatBody(`"stream":true,"stream_options":{"include_usage":false},"return_token_ids":true`),
		weatherBody(`"reasoning_effort":"high","add_special_tokens":true,"add_generation_prompt":false`),
		`{"model":"m","prompt":"hi","return_token_strs":true}`,
		`{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]},{"role":"tool","content":[{"type":"text","text":"r"}]}]}`,
	} {
		for i := range 4 {
			f.Add(uint8(i), []byte(b))
		}
	}
	servers := []http.Handler{
		fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM), fakemodel.WithMaxModelLen(256)),
		fakemodel.New(fakemodel.WithEngine(fakemodel.EngineSGLang), fakemodel.WithMaxModelLen(256)),
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		path := []string{"/v1/chat/completions", "/tokenize"}[which%2]
		wellFormed(t, do(t, servers[which/2%2], http.MethodPost, path, body), func(t *testing.T, text string) { readStream(t, text) })
	})
}
