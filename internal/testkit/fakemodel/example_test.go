package fakemodel_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
)

// A Chat Completions call against the fake server: the answer quotes the last user message.
func ExampleNew() {
	srv := httptest.NewServer(fakemodel.New())
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"gpt-4.1-mini","messages":[{"role":"user","content":"Hello"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode)
	fmt.Println(string(body))
	// Output:
	// 200
	// {"id":"chatcmpl-G1EO28u6xMoUfkHqnSClSmTN0kOls","object":"chat.completion","created":1760000000,"model":"gpt-4.1-mini","choices":[{"index":0,"message":{"role":"assistant","content":"You said: \"Hello\". This is a deterministic reply from gymtrace's fake model.","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":11,"completion_tokens":19,"total_tokens":30,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"service_tier":"default","system_fingerprint":"fp_3989a66f19"}
}

// A Fault that answers every streamed Anthropic call with a 529 overloaded error.
func ExampleWithFault() {
	srv := httptest.NewServer(fakemodel.New(fakemodel.WithFault(func(c fakemodel.Call) fakemodel.Fault {
		if c.Dialect == fakemodel.DialectMessages && c.Stream {
			return fakemodel.Fault{Status: 529}
		}
		return fakemodel.Fault{}
	})))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/messages", "application/json",
		strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"Hi"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode)
	fmt.Println(string(body))
	// Output:
	// 529
	// {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CngZ7K93tXDdfRM2sgb7n"}
}

// A Chat Completions call against the fake answering as vLLM, asking for inline token ids: the
// prompt ids of the ChatML template, the generated ids ending with <|im_end|> (151645), and
// every member vLLM writes null when not asked.
func ExampleWithEngine() {
	srv := httptest.NewServer(fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM)))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"Qwen/Qwen3-4B","messages":[{"role":"user","content":"Hi"}],"return_token_ids":true}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode)
	fmt.Println(string(body))
	// Output:
	// 200
	// {"id":"chatcmpl-dcb6ed03b2d80e596cbe5ec58e2bcd25","object":"chat.completion","created":1760000000,"model":"Qwen/Qwen3-4B","choices":[{"index":0,"message":{"role":"assistant","content":"You said: \"Hi\". This is a deterministic reply from gymtrace's fake model.","refusal":null,"annotations":null,"audio":null,"function_call":null,"tool_calls":[],"reasoning":null},"logprobs":null,"finish_reason":"stop","stop_reason":null,"token_ids":[43738,1813,6758,34603,102332,99909,102332,86403,79380,146221,47957,120028,11640,8679,1043,86646,140271,8703,128355,52767,144938,86403,151645]}],"service_tier":null,"system_fingerprint":null,"usage":{"prompt_tokens":10,"total_tokens":33,"completion_tokens":23,"prompt_tokens_details":null},"prompt_logprobs":null,"prompt_token_ids":[151644,69763,94429,99909,151645,94429,151644,54391,34726,94429],"kv_transfer_params":null}
}
