package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
)

func TestProxyCmdDataPathUsageErrors(t *testing.T) {
	abs := t.TempDir()
	base := []string{"proxy", "--upstream", "http://127.0.0.1:9", "--capture-dir", abs, "--listen", "127.0.0.1:0"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "zero grace", args: []string{"--terminal-grace", "0s"}, want: "--terminal-grace 0s must be a positive duration"},
		{name: "negative grace", args: []string{"--terminal-grace", "-1s"}, want: "--terminal-grace -1s must be a positive duration: the longest wait for the upstream to end a response after its terminal event (SPEC §4.2); to wait for the end itself, give one as long as --idle-read-timeout"},
		{name: "zero read timeout", args: []string{"--request-read-timeout", "0"}, want: "--request-read-timeout 0 is not allowed"},
		{name: "zero max bytes", args: []string{"--max-request-bytes", "0"}, want: "--max-request-bytes 0 must be a positive number of bytes"},
		{name: "negative max bytes", args: []string{"--max-request-bytes", "-5"}, want: "--max-request-bytes -5 must be a positive number of bytes"},
		{name: "grace not a duration", args: []string{"--terminal-grace", "soon"}, want: "invalid argument"},
		{name: "zero response bound", args: []string{"--max-response-bytes", "0"}, want: "--max-response-bytes 0 must be a positive number"},
		{name: "negative decoded bound", args: []string{"--max-decoded-bytes", "-1"}, want: "--max-decoded-bytes -1 must be a positive number"},
		{name: "zero ratio", args: []string{"--max-decode-ratio", "0"}, want: "--max-decode-ratio 0 must be a positive number"},
		{name: "zero budget", args: []string{"--max-capture-bytes-in-flight", "0"}, want: "--max-capture-bytes-in-flight 0 must be a positive number"},
		{name: "unknown token source", args: []string{"--token-source", "tgi"}, want: `--token-source: token source "tgi": want one of vllm, sglang, gym, none`},
		{name: "log-prob ids without vllm", args: []string{"--vllm-token-ids-from-logprobs"}, want: "--vllm-token-ids-from-logprobs applies only with --token-source vllm (got --token-source none)"},
		{name: "relative token dir", args: []string{"--token-source", "vllm", "--token-dir", "rel/tokens"}, want: `--token-dir "rel/tokens" must be an absolute path`},
		{name: "zero token answer bound", args: []string{"--max-token-answer-bytes", "0"}, want: "--max-token-answer-bytes 0 must be a positive number of bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runGymtrace(t, append(append([]string(nil), base...), tt.args...)...)
			require.Error(t, res.err)
			assert.Contains(t, res.err.Error(), tt.want)
			assert.Equal(t, 2, res.code, "usage error exit code")
			assert.Empty(t, res.stdout)
		})
	}
}

// TestProxyCmdDataPathFlags runs the binary with the data-path flags: the terminal grace releases
// an answer the upstream keeps open, an oversized body is answered 413, a stalled body 408.
func TestProxyCmdDataPathFlags(t *testing.T) {
	bin := buildGymtrace(t)
	const answer = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	var calls atomic.Int32
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, answer)
		w.(http.Flusher).Flush()
		select { // keeps the response open after [DONE]
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer up.Close()
	defer close(release)
	dir := t.TempDir()
	p := startProxy(t, bin, up.URL, dir, "--terminal-grace", "50ms", "--max-request-bytes", "200", "--request-read-timeout", "300ms")
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	t.Run("terminal grace", func(t *testing.T) {
		resp, err := client.Post(p.url+"/ng-rollout/grace/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","stream":true}`))
		require.NoError(t, err)
		defer resp.Body.Close()
		got := make(chan string, 1)
		go func() {
			b := make([]byte, len(answer))
			n, _ := io.ReadFull(resp.Body, b)
			got <- string(b[:n])
		}()
		select {
		case b := <-got:
			assert.Equal(t, answer, b)
		case <-time.After(5 * time.Second):
			t.Fatal("the answer was withheld while the upstream kept the response open")
		}
		store, err := capture.NewStore(dir)
		require.NoError(t, err)
		lines, _, err := store.ReadAvailable("grace")
		require.NoError(t, err)
		assert.Len(t, lines, 1, "recorded before the end was released")
	})
	t.Run("max request bytes", func(t *testing.T) {
		before := calls.Load()
		body := `{"model":"m","input":"` + strings.Repeat("x", 300) + `"}`
		resp, err := client.Post(p.url+"/ng-rollout/big/v1/responses", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
		assert.Contains(t, string(b), `"code":"request_too_large"`)
		assert.Equal(t, before, calls.Load(), "nothing forwarded")
	})
	t.Run("request read timeout", func(t *testing.T) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(p.url, "http://"))
		require.NoError(t, err)
		defer conn.Close()
		_, err = fmt.Fprintf(conn, "POST /ng-rollout/stall/v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{\"model\"")
		require.NoError(t, err)
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		defer resp.Body.Close()
		assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	})
}

// A budget smaller than one call's bound is valid (SPEC §0 D15 bounds the calls in flight
// together) but stops a lone call's capture at the budget: the proxy starts and says so, naming
// both flags; the default limits say nothing.
func TestProxyCmdWarnsBudgetBelowOneCall(t *testing.T) {
	bin := buildGymtrace(t)
	tests := []struct {
		name, want string
		args       []string
	}{
		{name: "below the response bound", args: []string{"--max-capture-bytes-in-flight", "1048576"},
			want: "--max-capture-bytes-in-flight is smaller than one call's bound (--max-response-bytes)"},
		{name: "below the decoded bound", args: []string{"--max-capture-bytes-in-flight", "2048", "--max-response-bytes", "1024"},
			want: "--max-capture-bytes-in-flight is smaller than one call's bound (--max-decoded-bytes)"},
		{name: "defaults"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startProxy(t, bin, "http://127.0.0.1:9", t.TempDir(), tt.args...)
			if tt.want == "" {
				assert.NotContains(t, p.stderr.String(), "smaller than one call's bound")
				return
			}
			// The warning is written before the ready line, but stderr reaches the buffer through
			// its own pipe: wait for it rather than read it once.
			assert.Eventually(t, func() bool { return strings.Contains(p.stderr.String(), tt.want) },
				10*time.Second, 10*time.Millisecond, "stderr: %s", p.stderr.String())
			assert.Contains(t, p.stderr.String(), "in_flight_budget")
		})
	}
}
