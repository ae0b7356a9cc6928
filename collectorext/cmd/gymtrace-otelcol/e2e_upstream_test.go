package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The end-to-end tests' model server: a small in-test upstream that answers the three dialects
// with fixed, realistic bodies (OpenAI Chat Completions and Responses, Anthropic Messages; JSON and
// SSE), so two runs of the same calls produce the same records. The root module's
// internal/testkit/fakemodel cannot be imported from this module.

// Dialects of the captured endpoints and the models the e2e calls ask for.
const (
	dialectResponses = "responses"
	dialectChat      = "chat"
	dialectMessages  = "messages"

	modelResponses = "gpt-4.1-mini"
	modelChat      = "gpt-4.1-nano"
	modelMessages  = "claude-sonnet-4-5"
)

// Request headers the test sends through the proxy to steer the upstream.
const (
	// headerFail makes the upstream answer 429 with an OpenAI rate-limit error body.
	headerFail = "X-E2e-Fail"
	// headerHold makes the upstream hold the response (streams: after two events; JSON: before
	// the status line) until the test releases it.
	headerHold = "X-E2e-Hold"
)

// e2eCall is one model call an e2e client makes through the proxy.
type e2eCall struct {
	dialect string
	stream  bool
	fail    bool // the upstream answers 429
	hold    bool // the upstream holds the answer until released
}

// path is the call's API path under /ng-rollout/<rollout_id>.
func (c e2eCall) path() string {
	switch c.dialect {
	case dialectResponses:
		return "/v1/responses"
	case dialectChat:
		return "/v1/chat/completions"
	default:
		return "/v1/messages"
	}
}

// model is the model the call's request names (the span is "chat {model}").
func (c e2eCall) model() string {
	switch c.dialect {
	case dialectResponses:
		return modelResponses
	case dialectChat:
		return modelChat
	default:
		return modelMessages
	}
}

// body is the call's request body; text makes each call's request distinct.
func (c e2eCall) body(text string) string {
	s := strconv.FormatBool(c.stream)
	q := strconv.Quote(text)
	switch c.dialect {
	case dialectResponses:
		return `{"model":"` + modelResponses + `","stream":` + s + `,"instructions":"Answer briefly.","input":[{"role":"user","content":` + q + `}],"tools":[{"type":"function","name":"get_weather","description":"Current weather in a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}],"temperature":0.2}`
	case dialectChat:
		opts := ""
		if c.stream {
			opts = `,"stream_options":{"include_usage":true}`
		}
		return `{"model":"` + modelChat + `","stream":` + s + opts + `,"messages":[{"role":"system","content":"Answer briefly."},{"role":"user","content":` + q + `}],"max_completion_tokens":64}`
	default:
		return `{"model":"` + modelMessages + `","max_tokens":256,"stream":` + s + `,"system":"Answer briefly.","messages":[{"role":"user","content":[{"type":"text","text":` + q + `}]}]}`
	}
}

// answer is one fixed upstream answer.
type answer struct {
	status      int
	contentType string
	events      []string // SSE events, written and flushed one by one; nil for a JSON body
	body        string   // the JSON body when events is nil
}

// bytes returns the answer's complete body, as the client must receive it.
func (a answer) bytes() []byte {
	if a.events == nil {
		return []byte(a.body)
	}
	var b bytes.Buffer
	for _, e := range a.events {
		b.WriteString(e)
	}
	return b.Bytes()
}

// sse formats one SSE event (event line omitted when name is "").
func sse(name, data string) string {
	if name == "" {
		return "data: " + data + "\n\n"
	}
	return "event: " + name + "\ndata: " + data + "\n\n"
}

const (
	jsonType = "application/json"
	sseType  = "text/event-stream; charset=utf-8"
)

const chatUsage = `{"prompt_tokens":24,"completion_tokens":9,"total_tokens":33,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`

func chatChunk(choices, usage string) string {
	return `{"id":"chatcmpl-E2Ech0000000000000000000002","object":"chat.completion.chunk","created":1767225601,"model":"gpt-4.1-nano-2025-04-14","service_tier":"default","system_fingerprint":"fp_e2e0a1b2c3","choices":` + choices + `,"usage":` + usage + `}`
}

const respMessageItem = `{"id":"msg_68e2e00000000000000000000004","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"The capital of France is Paris.","annotations":[],"logprobs":[]}]}`

const respUsage = `{"input_tokens":61,"input_tokens_details":{"cached_tokens":0},"output_tokens":8,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":69}`

const msgUsageStart = `{"input_tokens":22,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1,"service_tier":"standard"}`

// answers maps dialect, stream and failure to the upstream's fixed answer.
var answers = map[e2eCall]answer{
	{dialect: dialectChat}: {status: 200, contentType: jsonType, body: `{"id":"chatcmpl-E2Ech0000000000000000000001","object":"chat.completion","created":1767225600,"model":"gpt-4.1-nano-2025-04-14","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_E2Eweather000000000001","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}],"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":` + chatUsage + `,"service_tier":"default","system_fingerprint":"fp_e2e0a1b2c3"}`},
	{dialect: dialectChat, stream: true}: {status: 200, contentType: sseType, events: []string{
		sse("", chatChunk(`[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]`, "null")),
		sse("", chatChunk(`[{"index":0,"delta":{"content":"The capital"},"logprobs":null,"finish_reason":null}]`, "null")),
		sse("", chatChunk(`[{"index":0,"delta":{"content":" of France is Paris."},"logprobs":null,"finish_reason":null}]`, "null")),
		sse("", chatChunk(`[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]`, "null")),
		sse("", chatChunk(`[]`, chatUsage)),
		sse("", "[DONE]"),
	}},
	{dialect: dialectChat, fail: true}: {status: 429, contentType: jsonType, body: `{"error":{"message":"Rate limit reached for gpt-4.1-nano in organization org-e2e on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`},
	{dialect: dialectResponses}:        {status: 200, contentType: jsonType, body: `{"id":"resp_68e2e00000000000000000000001","object":"response","created_at":1767225600,"status":"completed","background":false,"error":null,"incomplete_details":null,"instructions":"Answer briefly.","max_output_tokens":null,"model":"gpt-4.1-mini-2025-04-14","output":[{"id":"fc_68e2e00000000000000000000002","type":"function_call","status":"completed","arguments":"{\"city\":\"Paris\"}","call_id":"call_E2Eweather000000000002","name":"get_weather"}],"parallel_tool_calls":true,"previous_response_id":null,"store":true,"temperature":0.2,"tool_choice":"auto","top_p":1.0,"truncation":"disabled","usage":{"input_tokens":58,"input_tokens_details":{"cached_tokens":0},"output_tokens":17,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":75},"user":null,"metadata":{}}`},
	{dialect: dialectResponses, stream: true}: {status: 200, contentType: sseType, events: []string{
		sse("response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_68e2e00000000000000000000003","object":"response","created_at":1767225601,"status":"in_progress","model":"gpt-4.1-mini-2025-04-14","output":[],"usage":null}}`),
		sse("response.output_item.added", `{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_68e2e00000000000000000000004","type":"message","status":"in_progress","role":"assistant","content":[]}}`),
		sse("response.content_part.added", `{"type":"response.content_part.added","sequence_number":2,"item_id":"msg_68e2e00000000000000000000004","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[],"logprobs":[]}}`),
		sse("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_68e2e00000000000000000000004","output_index":0,"content_index":0,"delta":"The capital","logprobs":[]}`),
		sse("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_68e2e00000000000000000000004","output_index":0,"content_index":0,"delta":" of France is Paris.","logprobs":[]}`),
		sse("response.output_text.done", `{"type":"response.output_text.done","sequence_number":5,"item_id":"msg_68e2e00000000000000000000004","output_index":0,"content_index":0,"text":"The capital of France is Paris.","logprobs":[]}`),
		sse("response.output_item.done", `{"type":"response.output_item.done","sequence_number":6,"output_index":0,"item":`+respMessageItem+`}`),
		sse("response.completed", `{"type":"response.completed","sequence_number":7,"response":{"id":"resp_68e2e00000000000000000000003","object":"response","created_at":1767225601,"status":"completed","model":"gpt-4.1-mini-2025-04-14","output":[`+respMessageItem+`],"usage":`+respUsage+`}}`),
	}},
	{dialect: dialectMessages}: {status: 200, contentType: jsonType, body: `{"id":"msg_01E2EaaaaaaaaaaaaaaaaaaaA","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"The capital of France is Paris."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":22,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":10,"service_tier":"standard"}}`},
	{dialect: dialectMessages, stream: true}: {status: 200, contentType: sseType, events: []string{
		sse("message_start", `{"type":"message_start","message":{"id":"msg_01E2EbbbbbbbbbbbbbbbbbbbB","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":`+msgUsageStart+`}}`),
		sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		sse("ping", `{"type":"ping"}`),
		sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"The capital"}}`),
		sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" of France is Paris."}}`),
		sse("content_block_stop", `{"type":"content_block_stop","index":0}`),
		sse("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":10}}`),
		sse("message_stop", `{"type":"message_stop"}`),
	}},
}

// answerFor returns the fixed answer of c.
func answerFor(t *testing.T, c e2eCall) answer {
	t.Helper()
	a, ok := answers[e2eCall{dialect: c.dialect, stream: c.stream, fail: c.fail}]
	require.True(t, ok, "no fixed answer for %+v", c)
	return a
}

// upstream is the running test model server.
type upstream struct {
	srv *httptest.Server
	// holding receives one value per held answer once the upstream holds it.
	holding     chan struct{}
	release     chan struct{}
	releaseOnce sync.Once
}

// newUpstream starts the test model server on 127.0.0.1; it stops when the test ends (after
// releasing any held answer).
func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{holding: make(chan struct{}, 64), release: make(chan struct{})}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.srv.Close)
	t.Cleanup(u.releaseAll) // runs first: Close waits for the held handlers
	return u
}

// releaseAll lets every held answer finish. Safe to call more than once.
func (u *upstream) releaseAll() { u.releaseOnce.Do(func() { close(u.release) }) }

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	var c e2eCall
	switch r.URL.Path { // the proxy strips /ng-rollout/<id>
	case "/v1/responses":
		c.dialect = dialectResponses
	case "/v1/chat/completions":
		c.dialect = dialectChat
	case "/v1/messages":
		c.dialect = dialectMessages
	default:
		http.Error(w, "unexpected path "+r.URL.Path, http.StatusNotFound)
		return
	}
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	body, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil || r.Method != http.MethodPost || req.Model != c.model() {
		http.Error(w, fmt.Sprintf("bad request %s %s (model %q): %v", r.Method, r.URL.Path, req.Model, err), http.StatusBadRequest)
		return
	}
	c.stream = req.Stream
	c.fail = r.Header.Get(headerFail) != ""
	a, ok := answers[c]
	if !ok {
		http.Error(w, fmt.Sprintf("no answer for %+v", c), http.StatusBadRequest)
		return
	}
	hold := r.Header.Get(headerHold) != ""
	wait := func() bool {
		u.holding <- struct{}{}
		select {
		case <-u.release:
			return true
		case <-r.Context().Done():
			return false
		}
	}
	if hold && a.events == nil && !wait() {
		return
	}
	w.Header().Set("Content-Type", a.contentType)
	w.Header().Set("X-Request-Id", "req_e2e")
	if a.events == nil {
		w.Header().Set("Content-Length", strconv.Itoa(len(a.body)))
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
		return
	}
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(a.status)
	rc := http.NewResponseController(w)
	for i, e := range a.events {
		if hold && i == 2 && !wait() {
			return
		}
		if _, err := io.WriteString(w, e); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}

// callResult is what an e2e client saw of one call.
type callResult struct {
	rollout     string
	call        e2eCall
	status      int
	body        []byte
	modelCallID string    // the proxy's X-Gymtrace-Model-Call-Id response header
	ended       time.Time // when the client had read the whole body
	err         error
}

// doCall makes call c of rollout rid through the proxy at base, reading the whole response.
func doCall(ctx context.Context, client *http.Client, base, rid string, c e2eCall, text string) callResult {
	res := callResult{rollout: rid, call: c}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/ng-rollout/"+rid+c.path(), bytes.NewReader([]byte(c.body(text))))
	if err != nil {
		res.err = err
		return res
	}
	req.Header.Set("Content-Type", "application/json")
	if c.fail {
		req.Header.Set(headerFail, "1")
	}
	if c.hold {
		req.Header.Set(headerHold, "1")
	}
	resp, err := client.Do(req)
	if err != nil {
		res.err = err
		return res
	}
	defer resp.Body.Close()
	res.status = resp.StatusCode
	res.modelCallID = resp.Header.Get("X-Gymtrace-Model-Call-Id")
	res.body, res.err = io.ReadAll(resp.Body)
	res.ended = time.Now()
	return res
}

// newClient returns an HTTP client for loopback calls (no environment proxy) whose idle
// connections are closed when the test ends.
func newClient(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 16}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}
