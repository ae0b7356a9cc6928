package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkCaptureHandlerChatStream measures one captured streamed call end to end in process: tee
// to the client, SSE framing and reassembly, attributes, span, record encode and durable append.
func BenchmarkCaptureHandlerChatStream(b *testing.B) {
	var events []string
	for range 50 {
		events = append(events, `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"token "},"finish_reason":null}]}`+"\n\n")
	}
	events = append(events, `data: {"id":"c1","model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":50,"total_tokens":60}}`+"\n\n", "data: [DONE]\n\n")
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			_, _ = io.WriteString(w, e)
			w.(http.Flusher).Flush()
		}
	})
	h, err := CaptureHandler(next, WithStore(newTestStore(b)), WithModelServerName("policy_model"))
	require.NoError(b, err)
	defer func() { require.NoError(b, h.Shutdown(b.Context())) }()
	body := `{"model":"m","stream":true,"messages":[` + strings.Repeat(`{"role":"user","content":"hello there"},`, 50) + `{"role":"user","content":"hi"}]}`
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/ng-rollout/bench/v1/chat/completions", strings.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}

// BenchmarkTokenCapture measures one chat call through CaptureHandler over an in-process vLLM-like
// handler: without the token segment, and token-captured with --token-source vllm (the request
// extended, the answer held or edited, the intent and the entry fsynced), JSON and SSE.
func BenchmarkTokenCapture(b *testing.B) {
	for _, c := range []struct {
		name, path, body string
	}{
		{"plain/json", "/ng-rollout/bench/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`},
		{"vllm/json", "/ng-rollout/bench/training-token-capture/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`},
		{"plain/sse", "/ng-rollout/bench/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`},
		{"vllm/sse", "/ng-rollout/bench/training-token-capture/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			f := &fakeVLLM{inline: true}
			next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				f.requests = f.requests[:0]
				f.handler(w, r)
			})
			h, err := CaptureHandler(next, WithStore(newTestStore(b)), WithTokenSource(TokenSourceVLLM), WithTokenDir(b.TempDir()))
			require.NoError(b, err)
			defer func() { require.NoError(b, h.Shutdown(b.Context())) }()
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, c.path, strings.NewReader(c.body))
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatal(rec.Code)
				}
			}
		})
	}
}
