package fakemodel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
)

// streamBody is the "text" scenario of dialect d with "stream": true.
func streamBody(d fakemodel.Dialect) map[string]any {
	b := map[string]any{}
	for k, v := range scenarios[0].body[d] {
		b[k] = v
	}
	b["stream"] = true
	return b
}

// TestFaultStatus checks error answers injected by a FaultFunc, in each dialect's shape.
func TestFaultStatus(t *testing.T) {
	tests := []struct {
		name     string
		dialect  fakemodel.Dialect
		fault    fakemodel.Fault
		status   int
		errType  string
		message  string
		code     any
		header   string
		bodyWant string // when set, the exact body
		ctype    string
	}{
		{"chat 429", fakemodel.DialectChat, fakemodel.Fault{Status: 429, Header: http.Header{"Retry-After": {"2"}}}, 429,
			"requests", "Rate limit reached for requests. Please try again later.", "rate_limit_exceeded", "2", "", "application/json"},
		{"responses 500", fakemodel.DialectResponses, fakemodel.Fault{Status: 500}, 500,
			"server_error", "The server had an error processing your request. Sorry about that!", nil, "", "", "application/json"},
		{"responses 400", fakemodel.DialectResponses, fakemodel.Fault{Status: 400}, 400,
			"invalid_request_error", "Bad Request", nil, "", "", "application/json"},
		{"messages 529", fakemodel.DialectMessages, fakemodel.Fault{Status: 529}, 529,
			"overloaded_error", "Overloaded", nil, "", "", "application/json"},
		{"messages 429", fakemodel.DialectMessages, fakemodel.Fault{Status: 429}, 429,
			"rate_limit_error", "This request would exceed the rate limit for your organization. Please retry later.", nil, "", "", "application/json"},
		{"raw html body", fakemodel.DialectChat, fakemodel.Fault{Status: 502, Body: []byte("<html>Bad Gateway</html>"), ContentType: "text/html"}, 502,
			"", "", nil, "", "<html>Bad Gateway</html>", "text/html"},
		{"raw body default status", fakemodel.DialectMessages, fakemodel.Fault{Body: []byte(`{"x":1}`)}, 200,
			"", "", nil, "", `{"x":1}`, "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var calls []fakemodel.Call
			srv := fakemodel.New(fakemodel.WithFault(func(c fakemodel.Call) fakemodel.Fault {
				mu.Lock()
				defer mu.Unlock()
				calls = append(calls, c)
				return tt.fault
			}))
			resp := do(t, srv, "POST", paths[tt.dialect], streamBody(tt.dialect))
			body := bodyOf(t, resp)
			require.Equal(t, tt.status, resp.StatusCode, body)
			assert.Equal(t, tt.ctype, resp.Header.Get("Content-Type"))
			require.Len(t, calls, 1)
			assert.Equal(t, tt.dialect, calls[0].Dialect)
			assert.True(t, calls[0].Stream)
			assert.Equal(t, scenarios[0].body[tt.dialect]["model"], calls[0].Model)
			assert.True(t, json.Valid(calls[0].Body))
			if tt.header != "" {
				assert.Equal(t, tt.header, resp.Header.Get("Retry-After"))
			}
			if tt.bodyWant != "" {
				assert.Equal(t, tt.bodyWant, body)
				return
			}
			got := object(t, body)
			assert.Equal(t, tt.errType, str(t, got, "error", "type"))
			assert.Equal(t, tt.message, str(t, got, "error", "message"))
			if tt.dialect != fakemodel.DialectMessages {
				assert.Equal(t, tt.code, at(t, got, "error", "code"))
			}
		})
	}
}

// TestFaultCut checks cut streams: clean end, in-stream error event, broken connection.
func TestFaultCut(t *testing.T) {
	tests := []struct {
		name      string
		dialect   fakemodel.Dialect
		cut       fakemodel.Cut
		after     int
		wantNames []string // event names (collapsed) when the body ends cleanly
		lastData  string   // exact data of the last event, when set
		broken    bool     // the client sees a read error
	}{
		{"responses end", fakemodel.DialectResponses, fakemodel.CutEnd, 3, []string{"response.created", "response.in_progress", "response.output_item.added"}, "", false},
		{"responses end at once", fakemodel.DialectResponses, fakemodel.CutEnd, 0, nil, "", false},
		{"responses error event", fakemodel.DialectResponses, fakemodel.CutErrorEvent, 2, []string{"response.created", "response.in_progress", "error"},
			`{"type":"error","code":"server_error","message":"The server had an error processing your request. Sorry about that!","param":null,"sequence_number":2}`, false},
		{"chat end", fakemodel.DialectChat, fakemodel.CutEnd, 2, []string{"chunk+"}, "", false},
		{"chat error event", fakemodel.DialectChat, fakemodel.CutErrorEvent, 1, []string{"chunk+"},
			`{"error":{"message":"The server had an error processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`, false},
		{"messages error event", fakemodel.DialectMessages, fakemodel.CutErrorEvent, 4,
			[]string{"message_start", "content_block_start", "ping", "content_block_delta", "error"},
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, false},
		{"messages abort", fakemodel.DialectMessages, fakemodel.CutAbort, 3, nil, "", true},
		{"chat abort", fakemodel.DialectChat, fakemodel.CutAbort, 1, nil, "", true},
		{"after the end is no cut", fakemodel.DialectMessages, fakemodel.CutEnd, 1000,
			[]string{"message_start", "content_block_start", "ping", "content_block_delta+", "content_block_stop", "message_delta", "message_stop"}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(fakemodel.New(fakemodel.WithFault(func(fakemodel.Call) fakemodel.Fault {
				return fakemodel.Fault{Cut: tt.cut, CutAfter: tt.after}
			})))
			defer srv.Close()
			raw, err := json.Marshal(streamBody(tt.dialect))
			require.NoError(t, err)
			resp, err := srv.Client().Post(srv.URL+paths[tt.dialect], "application/json", bytes.NewReader(raw))
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, 200, resp.StatusCode)
			body, err := io.ReadAll(resp.Body)
			if tt.broken {
				require.ErrorIs(t, err, io.ErrUnexpectedEOF, "a broken connection, not a clean end")
				assert.Len(t, parseSSE(t, string(body)), tt.after)
				return
			}
			require.NoError(t, err)
			if tt.after == 0 {
				assert.Empty(t, body)
				return
			}
			events := parseSSE(t, string(body))
			assert.Equal(t, tt.wantNames, names(t, events))
			if tt.lastData != "" {
				assert.Equal(t, tt.lastData, events[len(events)-1].Data)
			}
			if tt.cut == fakemodel.CutEnd && tt.after < 1000 {
				assert.Len(t, events, tt.after)
			}
		})
	}
}

// TestFaultAbortJSON checks that CutAbort breaks a JSON answer after half its body.
func TestFaultAbortJSON(t *testing.T) {
	srv := httptest.NewServer(fakemodel.New(fakemodel.WithFault(func(fakemodel.Call) fakemodel.Fault {
		return fakemodel.Fault{Cut: fakemodel.CutAbort}
	})))
	defer srv.Close()
	raw, err := json.Marshal(scenarios[0].body[fakemodel.DialectChat])
	require.NoError(t, err)
	resp, err := srv.Client().Post(srv.URL+"/v1/chat/completions", "application/json", bytes.NewReader(raw))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.True(t, strings.HasPrefix(string(body), `{"id":"chatcmpl-`))
	assert.False(t, json.Valid(body))
}

// TestDelays checks Fault.Delay, WithChunkDelay, and that a client going away ends the stream.
func TestDelays(t *testing.T) {
	t.Run("first byte delay", func(t *testing.T) {
		srv := fakemodel.New(fakemodel.WithFault(func(fakemodel.Call) fakemodel.Fault {
			return fakemodel.Fault{Delay: 30 * time.Millisecond}
		}))
		start := time.Now()
		resp := do(t, srv, "POST", "/v1/chat/completions", scenarios[0].body[fakemodel.DialectChat])
		bodyOf(t, resp)
		assert.Equal(t, 200, resp.StatusCode)
		assert.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)
	})
	t.Run("chunk delay", func(t *testing.T) {
		srv := fakemodel.New(fakemodel.WithChunkDelay(5 * time.Millisecond))
		start := time.Now()
		resp := do(t, srv, "POST", "/v1/messages", streamBody(fakemodel.DialectMessages))
		events := parseSSE(t, bodyOf(t, resp))
		assert.GreaterOrEqual(t, time.Since(start), time.Duration(len(events)-1)*5*time.Millisecond)
	})
	t.Run("client goes away", func(t *testing.T) {
		srv := httptest.NewServer(fakemodel.New(fakemodel.WithChunkDelay(time.Hour)))
		defer srv.Close()
		ctx, cancel := context.WithCancel(t.Context())
		raw, err := json.Marshal(streamBody(fakemodel.DialectResponses))
		require.NoError(t, err)
		req, err := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/responses", bytes.NewReader(raw))
		require.NoError(t, err)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		buf := make([]byte, 16)
		_, err = resp.Body.Read(buf) // the first event arrives at once
		require.NoError(t, err)
		cancel()
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		// srv.Close (deferred) waits for the handler: it must return although the delay is an hour.
	})
}
