package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingUpstream answers every call with a small JSON body and counts the calls.
func countingUpstream(t *testing.T, calls *atomic.Int32) string {
	t.Helper()
	return newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"resp_1","model":"m","status":"completed"}`)
	}).URL
}

// TestCaptureRequestTooLarge: a captured request body over WithMaxRequestBytes is answered 413 in
// the dialect's shape; nothing is forwarded or recorded; a warning is logged.
func TestCaptureRequestTooLarge(t *testing.T) {
	const limit = 1024
	big := `{"model":"m","input":"` + strings.Repeat("x", limit) + `"}`
	atLimit := `{"model":"m","input":"` + strings.Repeat("x", limit-len(`{"model":"m","input":""}`)) + `"}`
	require.Len(t, atLimit, limit)
	tests := []struct {
		name, path, body string
		chunked          bool
		wantStatus       int
	}{
		{name: "declared length over the limit (openai shape)", path: "/v1/chat/completions", body: big, wantStatus: http.StatusRequestEntityTooLarge},
		{name: "declared length over the limit (anthropic shape)", path: "/v1/messages", body: big, wantStatus: http.StatusRequestEntityTooLarge},
		{name: "chunked body over the limit", path: "/v1/responses", body: big, chunked: true, wantStatus: http.StatusRequestEntityTooLarge},
		{name: "body at the limit", path: "/v1/responses", body: atLimit, wantStatus: http.StatusOK},
		{name: "chunked body at the limit", path: "/v1/responses", body: atLimit, chunked: true, wantStatus: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			env := newProxyEnv(t, countingUpstream(t, &calls), nil, WithMaxRequestBytes(limit))
			var rd io.Reader = strings.NewReader(tt.body)
			if tt.chunked {
				rd = iotest.OneByteReader(rd) // hides the length: sent chunked
			}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, env.srv.URL+"/ng-rollout/big"+tt.path, rd)
			require.NoError(t, err)
			resp, err := env.client.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tt.wantStatus, resp.StatusCode)
			if tt.wantStatus == http.StatusOK {
				assert.Equal(t, int32(1), calls.Load())
				rec := env.record(t, "big")
				assert.Contains(t, rec["request"], "input")
				return
			}
			var b map[string]any
			require.NoError(t, json.Unmarshal(body, &b), "JSON error body: %s", body)
			if tt.path == "/v1/messages" {
				assert.Equal(t, "error", b["type"])
				assert.Contains(t, b["error"].(map[string]any)["message"], "request_too_large")
			} else {
				assert.Equal(t, "request_too_large", b["error"].(map[string]any)["code"])
			}
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			assert.Zero(t, calls.Load(), "nothing forwarded")
			assert.Empty(t, mustRecords(t, env, "big"), "no record for a refused request")
			assert.Contains(t, env.logs.String(), "request body refused")
			assert.Contains(t, env.logs.String(), "rollout_id=big")
		})
	}
	t.Run("default limit", func(t *testing.T) {
		assert.Equal(t, int64(64<<20), newConfig(nil).maxRequestBytes)
		assert.Equal(t, int64(64<<20), newConfig([]Option{WithMaxRequestBytes(0)}).maxRequestBytes)
	})
}

// TestCaptureRequestReadTimeout: a client that stalls mid-body is answered 408 after the request
// read timeout; nothing is forwarded or recorded; the deadline does not limit the response.
func TestCaptureRequestReadTimeout(t *testing.T) {
	t.Run("stalled body: 408", func(t *testing.T) {
		var calls atomic.Int32
		env := newProxyEnv(t, countingUpstream(t, &calls), nil, WithRequestReadTimeout(150*time.Millisecond))
		conn, err := net.Dial("tcp", strings.TrimPrefix(env.srv.URL, "http://"))
		require.NoError(t, err)
		defer conn.Close()
		start := time.Now()
		_, err = fmt.Fprintf(conn, "POST /ng-rollout/stall/v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"model\":")
		require.NoError(t, err)
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		defer resp.Body.Close()
		elapsed := time.Since(start)
		body, _ := io.ReadAll(resp.Body)
		assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
		assert.Contains(t, string(body), `"code":"request_timeout"`)
		assert.Less(t, elapsed, 5*time.Second, "the stalled connection is released promptly")
		assert.Zero(t, calls.Load(), "nothing forwarded")
		assert.Empty(t, mustRecords(t, env, "stall"))
		assert.Contains(t, env.logs.String(), "request body refused")
	})
	t.Run("the deadline covers the body only: a long response is not cut", func(t *testing.T) {
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			sseHeaders(w)
			_, _ = io.WriteString(w, chatEvent1)
			flush(w)
			time.Sleep(300 * time.Millisecond) // longer than the request read timeout
			_, _ = io.WriteString(w, chatEvent2+chatDone)
		})
		env := newProxyEnv(t, up.URL, nil, WithRequestReadTimeout(50*time.Millisecond))
		_, body, err := env.post(t, "/ng-rollout/long/v1/chat/completions", chatRequest, nil)
		require.NoError(t, err)
		assert.Equal(t, chatEvent1+chatEvent2+chatDone, string(body))
		assert.Nil(t, env.record(t, "long")["error_category"])
	})
	t.Run("defaults", func(t *testing.T) {
		assert.Equal(t, 60*time.Second, newConfig(nil).requestReadTimeout)
		assert.Equal(t, time.Duration(-1), newConfig([]Option{WithRequestReadTimeout(-1)}).requestReadTimeout)
	})
}

// TestReadLimited covers the body reader: one exact buffer for a declared length, a bounded
// growing buffer otherwise.
func TestReadLimited(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name     string
		r        io.Reader
		declared int64
		limit    int64
		want     string
		wantErr  error
	}{
		{name: "empty declared", r: strings.NewReader(""), declared: 0, limit: 10, want: ""},
		{name: "declared exact", r: strings.NewReader("hello"), declared: 5, limit: 10, want: "hello"},
		{name: "declared but short", r: strings.NewReader("hel"), declared: 5, limit: 10, want: "hel", wantErr: io.ErrUnexpectedEOF},
		{name: "unknown within the limit", r: iotest.HalfReader(strings.NewReader("hello world")), declared: -1, limit: 11, want: "hello world"},
		{name: "unknown over the limit", r: strings.NewReader("hello world"), declared: -1, limit: 10, wantErr: errBodyTooLarge},
		{name: "unknown large within the limit", r: bytes.NewReader(bytes.Repeat([]byte("a"), 100_000)), declared: -1, limit: 100_000, want: strings.Repeat("a", 100_000)},
		{name: "unknown, largest limit", r: strings.NewReader("hello"), declared: -1, limit: math.MaxInt64, want: "hello"},
		{name: "read error keeps the bytes", r: io.MultiReader(strings.NewReader("par"), iotest.ErrReader(boom)), declared: -1, limit: 10, want: "par", wantErr: boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readLimited(tt.r, tt.declared, tt.limit)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.want, string(got))
			if tt.declared > 0 && err == nil {
				assert.Equal(t, int(tt.declared), cap(got), "one buffer of the declared size")
			}
		})
	}
}

func BenchmarkReadLimited(b *testing.B) {
	body := bytes.Repeat([]byte(`{"role":"user","content":"hello"},`), 30_000) // ~1 MiB
	for _, declared := range []bool{true, false} {
		b.Run(fmt.Sprintf("declared=%v", declared), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			n := int64(-1)
			if declared {
				n = int64(len(body))
			}
			for b.Loop() {
				if _, err := readLimited(bytes.NewReader(body), n, DefaultMaxRequestBytes); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
