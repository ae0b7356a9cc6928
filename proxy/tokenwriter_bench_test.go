package proxy

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/ojson"
	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
)

// discardWriter is a ResponseWriter that keeps nothing (the client's side of the editor).
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}

// sse200Upstream is the fake vLLM engine's stream for the bench's tokens-sse200 request as the
// capture proxy extends it (docs/TOKENS.md §0 T2: logprobs, top_logprobs, return_token_ids),
// split into its events, and the restore rules of that call.
func sse200Upstream(tb testing.TB) (events [][]byte, r restoreRules) {
	tb.Helper()
	var result strings.Builder
	for i := range 190 {
		if i%2 == 0 {
			result.WriteByte(byte('0' + i/2%10))
		} else {
			result.WriteByte(',')
		}
	}
	client := []byte(`{"model":"Qwen/Qwen3-8B","messages":[{"role":"user","content":"Look the benchmark numbers up."},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_bench","type":"function","function":{"name":"lookup","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"call_bench","content":"` + result.String() + `"}],` +
		`"max_tokens":512,"stream":true,"stream_options":{"include_usage":true}}`)
	req, err := ojson.Parse(client)
	require.NoError(tb, err)
	a := newAdapterCall(TokenSourceVLLM, false, "chat", req)
	require.True(tb, a.active())
	rec := httptest.NewRecorder()
	hr := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(a.requestBody(client)))
	hr.Header.Set("Content-Type", "application/json")
	fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM)).ServeHTTP(rec, hr)
	require.Equal(tb, http.StatusOK, rec.Code)
	events, rest := sseEvents(rec.Body.Bytes())
	require.Empty(tb, rest)
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
		tw := newTokenWriter(w, r, 1<<30)
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
