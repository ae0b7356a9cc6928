package proxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/sdk/stream"
)

// discardWriter is a ResponseWriter that keeps nothing (the client's side of the editor).
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}

// sse200Request is the bench's tokens-sse200 request (cmd/gymtrace/internal/bench): a tool result
// of 190 runes, which the fake vLLM answers with one token per rune, 200 events in all.
func sse200Request() []byte {
	var result strings.Builder
	for i := range 190 {
		if i%2 == 0 {
			result.WriteByte(byte('0' + i/2%10))
		} else {
			result.WriteByte(',')
		}
	}
	return []byte(`{"model":"Qwen/Qwen3-8B","messages":[{"role":"user","content":"Look the benchmark numbers up."},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_bench","type":"function","function":{"name":"lookup","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"call_bench","content":"` + result.String() + `"}],` +
		`"max_tokens":512,"stream":true,"stream_options":{"include_usage":true}}`)
}

// fakeVLLMAnswer is the fake vLLM engine's answer to body, split into its SSE events.
func fakeVLLMAnswer(tb testing.TB, body []byte) [][]byte {
	tb.Helper()
	rec := httptest.NewRecorder()
	hr := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
	hr.Header.Set("Content-Type", "application/json")
	fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM)).ServeHTTP(rec, hr)
	require.Equal(tb, http.StatusOK, rec.Code)
	events, rest := sseEvents(rec.Body.Bytes())
	require.Empty(tb, rest)
	return events
}

// sse200Upstream is the fake vLLM engine's stream for the bench's tokens-sse200 request as the
// capture proxy extends it (docs/TOKENS.md §0 T2: logprobs, top_logprobs, return_token_ids),
// split into its events, and the restore rules of that call.
func sse200Upstream(tb testing.TB) (events [][]byte, r restoreRules) {
	tb.Helper()
	client := sse200Request()
	req, err := ojson.Parse(client)
	require.NoError(tb, err)
	a := newAdapterCall(TokenSourceVLLM, false, "chat", req)
	require.True(tb, a.active())
	events = fakeVLLMAnswer(tb, a.requestBody(client))
	require.GreaterOrEqual(tb, len(events), 200)
	return events, a.restore
}

// BenchmarkTokenWriterSSE measures the SSE editor of a token-captured stream per upstream event
// (docs/TOKENS.md §0 T2, T3): each event of the fake vLLM's 200-event answer written as one read,
// its injected members restored, its ids accumulated and the upstream's stream reassembled; then
// the ids and the reassembled answer read as the adapter does at the end.
func BenchmarkTokenWriterSSE(b *testing.B) {
	events, r := sse200Upstream(b)
	var size int
	for _, e := range events {
		size += len(e)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		w := &discardWriter{h: http.Header{"Content-Type": {"text/event-stream"}}}
		tw := newTokenWriter(w, r, stream.DialectChat, 1<<30, 0)
		for _, e := range events {
			if _, err := tw.Write(e); err != nil {
				b.Fatal(err)
			}
		}
		tw.finish(true)
		if _, err := tw.acc.Result(); err != nil {
			b.Fatal(err)
		}
		if _, ok := tw.sc.Response(); !ok {
			b.Fatal("not reassembled")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
}

// BenchmarkTokenCaptureSSE200 measures one whole captured call of the bench's tokens-sse200
// stream through CaptureHandler, events back to back from a replay of the fake vLLM's answers:
// capture alone (no token segment) and with token capture (--token-source vllm: the request
// extended, the intent and the entry fsynced, every event restored and its ids accumulated).
func BenchmarkTokenCaptureSSE200(b *testing.B) {
	client := sse200Request()
	req, err := ojson.Parse(client)
	require.NoError(b, err)
	answers := map[string][][]byte{
		string(client): fakeVLLMAnswer(b, client),
		string(newAdapterCall(TokenSourceVLLM, false, "chat", req).requestBody(client)): nil,
	}
	for k := range answers {
		answers[k] = fakeVLLMAnswer(b, []byte(k))
	}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		events, ok := answers[string(body)]
		if !ok {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			_, _ = w.Write(e)
			w.(http.Flusher).Flush()
		}
	})
	for _, c := range []struct{ name, path string }{
		{"capture", "/ng-rollout/bench/v1/chat/completions"},
		{"tokens", "/ng-rollout/bench/training-token-capture/v1/chat/completions"},
	} {
		b.Run(c.name, func(b *testing.B) {
			h, err := CaptureHandler(next, WithStore(newTestStore(b)), WithTokenSource(TokenSourceVLLM), WithTokenDir(b.TempDir()))
			require.NoError(b, err)
			defer func() { require.NoError(b, h.Shutdown(b.Context())) }()
			want := bytes.Join(answers[string(client)], nil)
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				// Rollouts of 8 calls, as the bench's token workloads.
				path := strings.Replace(c.path, "/bench/", "/bench-"+strconv.Itoa(n/8)+"/", 1)
				n++
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(client)))
				if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), want) {
					b.Fatalf("status %d, %d bytes, want the direct answer's %d", rec.Code, rec.Body.Len(), len(want))
				}
			}
		})
	}
}
