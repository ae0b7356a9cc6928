package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/semconv"
)

// TestTokenCaptureCallEnds: how a token-captured call's exchange ended decides its incomplete
// cause and what its record keeps. An upstream that sent its status and headers and then broke
// off mid-body leaves a record with the status seen, as on the plain path (README "What a fault
// costs"), and the cause of an answer that did not complete; a client that went away, before the
// status line or after it, is the client's doing (the cause of a disconnected answer, a reason
// naming the client), not the upstream's; an upstream that gave no status line is an upstream
// error.
func TestTokenCaptureCallEnds(t *testing.T) {
	const body = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	cases := []struct {
		name   string
		stream bool
		// serve answers the proxy's upstream request.
		serve func(w http.ResponseWriter, r *http.Request)
		// clientLeaves: the client cancels its request once the upstream has it (and, for a
		// stream, once it read the first bytes).
		clientLeaves bool
		unreachable  bool
		status       any // the record's status_code
		cause        string
		reason       string
	}{
		{name: "upstream breaks off mid-body after 200", serve: func(w http.ResponseWriter, r *http.Request) {
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n" + `{"id":"c","choices":[{"index":0,`)
			buf.Flush()
			conn.Close()
		}, status: json.Number("200"), cause: semconv.TokensCauseStream, reason: "the answer did not complete (truncated or disconnected)"},
		{name: "client leaves before the status line", serve: func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}, clientLeaves: true, status: nil, cause: semconv.TokensCauseStream, reason: "the client went away before the upstream's status line arrived"},
		{name: "client leaves mid-stream", stream: true, serve: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null,"token_ids":null}],"prompt_token_ids":null}`+"\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, clientLeaves: true, status: json.Number("200"), cause: semconv.TokensCauseStream, reason: "the client went away before the answer ended"},
		{name: "upstream unreachable", unreachable: true, status: nil, cause: semconv.TokensCauseUpstream, reason: "the upstream gave no answer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var url string
			arrived := make(chan struct{})
			if c.unreachable {
				s := newUpstream(t, func(http.ResponseWriter, *http.Request) {})
				url = s.URL
				s.Close()
			} else {
				url = newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
					close(arrived)
					c.serve(w, r)
				}).URL
			}
			env := newProxyEnv(t, url, nil, WithTokenSource(TokenSourceVLLM), WithTokenDir(t.TempDir()))
			reqBody := body
			if c.stream {
				reqBody = strings.Replace(body, `{"model":"m",`, `{"model":"m","stream":true,`, 1)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, env.srv.URL+tokenPath, strings.NewReader(reqBody))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			if c.clientLeaves && !c.stream {
				go func() {
					<-arrived
					cancel()
				}()
			}
			resp, err := env.client.Do(req)
			if err == nil {
				if c.stream && c.clientLeaves {
					_, _ = bufio.NewReader(resp.Body).ReadString('\n')
					cancel()
				}
				_, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			waitFor(t, "the call's span", func() bool { return len(env.spans.GetSpans()) == 1 })
			a := env.spanAttrs(t)
			assert.False(t, a[semconv.GymtraceTokensEntryWrittenKey].AsBool())
			assert.Equal(t, c.cause, a[semconv.GymtraceTokensIncompleteCauseKey].AsString(), "%s", env.logs.String())
			assert.Contains(t, env.logs.String(), c.reason)
			rec := env.record(t, "r1")
			assert.Equal(t, c.status, rec["status_code"])
		})
	}
}
