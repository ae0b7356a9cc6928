package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
)

// faultHeader names the upstream fault a raw request asks for; the proxy forwards it like any
// other end-to-end header.
const faultHeader = "X-E2e-Fault"

// countEvents returns the number of SSE events the fake model answers to a streamed body.
func countEvents(t *testing.T, path, body string) int {
	t.Helper()
	rec := httptest.NewRecorder()
	fakemodel.New().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
	require.Equal(t, http.StatusOK, rec.Code)
	return strings.Count(rec.Body.String(), "\n\n")
}

// rawAnswer is what a client received for one raw HTTP call.
type rawAnswer struct {
	status      int
	contentType string
	body        []byte
	readErr     error
}

// postRaw sends body to url with net/http and reads the whole answer.
func postRaw(t *testing.T, url, body, fault string) rawAnswer {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx(t), http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if fault != "" {
		req.Header.Set(faultHeader, fault)
	}
	resp, err := httpClient(t, nil).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, readErr := io.ReadAll(resp.Body)
	return rawAnswer{resp.StatusCode, resp.Header.Get("Content-Type"), b, readErr}
}

// TestCaptureOutcomes sends raw requests (net/http, no SDK) for normal and failing upstream
// answers and checks that the client receives the upstream's exact bytes (or the same broken
// connection) through the proxy, and that the record classifies the outcome (SPEC.md §3.3, §4.7,
// §0 D5 and D8) and keeps the raw SSE text.
func TestCaptureOutcomes(t *testing.T) {
	const (
		chatBody      = `{"model":"gpt-4.1-mini","messages":[{"role":"user","content":"Name a primary colour."}]}`
		chatStream    = `{"model":"gpt-4.1-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Name a primary colour."}]}`
		respStream    = `{"model":"o4-mini","stream":true,"input":"Which is cheaper?","reasoning":{"effort":"low","summary":"auto"}}`
		respBody      = `{"model":"gpt-4.1-mini","input":"Name a primary colour."}`
		messagesBody  = `{"model":"claude-sonnet-4-5","max_tokens":256,"messages":[{"role":"user","content":"Name a primary colour."}]}`
		messageStream = `{"model":"claude-sonnet-4-5","max_tokens":2048,"stream":true,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"Which is cheaper?"}]}`
	)
	chatEvents := countEvents(t, "/v1/chat/completions", chatStream)
	faults := map[string]fakemodel.Fault{
		"rate_limit":   {Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}},
		"overloaded":   {Status: 529},
		"truncate3":    {Cut: fakemodel.CutEnd, CutAfter: 3},
		"error_event2": {Cut: fakemodel.CutErrorEvent, CutAfter: 2},
		"error_event4": {Cut: fakemodel.CutErrorEvent, CutAfter: 4},
		"abort2":       {Cut: fakemodel.CutAbort, CutAfter: 2},
		"no_done":      {Cut: fakemodel.CutEnd, CutAfter: chatEvents - 1}, // every chunk but data: [DONE]
	}
	upstream := startUpstream(t, fakemodel.WithFault(func(c fakemodel.Call) fakemodel.Fault {
		return faults[c.Header.Get(faultHeader)]
	}))
	var p *proxyProc
	if !*directOnly {
		p = startProxy(t, upstream.URL)
	}

	null := any(nil)
	tests := []struct {
		name     string
		path     string
		body     string
		fault    string
		dialect  string
		status   int
		category any  // error_category; nil = null
		broken   bool // the client's read fails (D5: never a clean end)
		stream   bool
		// check inspects the stored response object.
		check func(t *testing.T, resp map[string]any)
	}{
		{"chat json", "/v1/chat/completions", chatBody, "", "chat", 200, null, false, false, func(t *testing.T, resp map[string]any) {
			assert.Equal(t, "chat.completion", resp["object"])
		}},
		{"chat stream", "/v1/chat/completions", chatStream, "", "chat", 200, null, false, true, func(t *testing.T, resp map[string]any) {
			assert.Equal(t, "stop", member(resp["choices"].([]any)[0], "finish_reason"))
			assert.NotNil(t, resp["usage"])
		}},
		{"responses json", "/v1/responses", respBody, "", "responses", 200, null, false, false, func(t *testing.T, resp map[string]any) {
			assert.Equal(t, "completed", resp["status"])
		}},
		{"responses stream", "/v1/responses", respStream, "", "responses", 200, null, false, true, func(t *testing.T, resp map[string]any) {
			assert.Equal(t, "completed", resp["status"], "the response of response.completed")
		}},
		{"messages json", "/v1/messages", messagesBody, "", "messages", 200, null, false, false, func(t *testing.T, resp map[string]any) {
			assert.Equal(t, "end_turn", resp["stop_reason"])
		}},
		{"messages stream", "/v1/messages", messageStream, "", "messages", 200, null, false, true, func(t *testing.T, resp map[string]any) {
			assert.Equal(t, "end_turn", resp["stop_reason"])
			assert.Equal(t, "thinking", member(resp["content"].([]any)[0], "type"))
		}},
		{"chat 429", "/v1/chat/completions", chatBody, "rate_limit", "chat", 429, "rate_limit", false, false, func(t *testing.T, resp map[string]any) {
			assert.Equal(t, "rate_limit_exceeded", member(resp["error"], "code"))
		}},
		{"messages stream 529", "/v1/messages", messageStream, "overloaded", "messages", 529, "upstream_error", false, false, func(t *testing.T, resp map[string]any) {
			assert.Equal(t, "overloaded_error", member(resp["error"], "type"))
		}},
		{"responses stream truncated", "/v1/responses", respStream, "truncate3", "responses", 200, "stream_truncated", false, true, func(t *testing.T, resp map[string]any) {
			assert.Equal(t, "in_progress", resp["status"], "partial reconstruction: the last response seen")
		}},
		{"chat stream error event", "/v1/chat/completions", chatStream, "error_event2", "chat", 200, "upstream_error", false, true, nil},
		{"messages stream error event", "/v1/messages", messageStream, "error_event4", "messages", 200, "upstream_error", false, true, nil},
		{"chat stream finished without DONE (D8)", "/v1/chat/completions", chatStream, "no_done", "chat", 200, null, false, true, func(t *testing.T, resp map[string]any) {
			assert.Equal(t, "stop", member(resp["choices"].([]any)[0], "finish_reason"))
		}},
		{"chat stream connection broken (D5)", "/v1/chat/completions", chatStream, "abort2", "chat", 200, "connection", true, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			direct := postRaw(t, upstream.URL+tt.path, tt.body, tt.fault)
			require.Equal(t, tt.status, direct.status)
			if tt.broken {
				require.Error(t, direct.readErr)
			} else {
				require.NoError(t, direct.readErr)
			}
			if p == nil {
				return
			}
			id := rolloutID(t)
			got := postRaw(t, rolloutBaseURL(t, p.URL, id)+tt.path, tt.body, tt.fault)
			assert.Equal(t, direct.status, got.status)
			assert.Equal(t, direct.contentType, got.contentType)
			if tt.broken {
				assert.Error(t, got.readErr, "the client sees the upstream's break, not a clean end")
				assert.True(t, bytes.HasPrefix(direct.body, got.body), "what arrived is a prefix of the upstream's bytes")
			} else {
				require.NoError(t, got.readErr)
				assert.Equal(t, string(direct.body), string(got.body), "the client receives the upstream's exact bytes")
			}

			records := readRecords(t, p.capturePath(id))
			require.Len(t, records, 1, "exactly one record")
			f := records[0].Fields
			assert.Equal(t, tt.dialect, f["dialect"])
			assert.Equal(t, tt.category, f["error_category"])
			assert.Equal(t, rolloutTraceID(id), f["trace_id"])
			assert.Equal(t, decodeJSON(t, tt.body), f["request"], "the request as sent")
			if tt.broken {
				return
			}
			assert.Equal(t, json.Number(strconv.Itoa(tt.status)), f["status_code"])
			if tt.stream {
				assert.Equal(t, string(direct.body), f["response_raw"], "response_raw is the SSE text as received")
			} else {
				assert.NotContains(t, f, "response_raw")
				assert.Equal(t, decodeJSON(t, string(direct.body)), f["response"], "response is the upstream's JSON")
			}
			if tt.check != nil {
				resp, ok := f["response"].(map[string]any)
				require.True(t, ok, "response is an object")
				tt.check(t, resp)
			}
		})
	}
}
