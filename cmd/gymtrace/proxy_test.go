package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
)

func TestProxyCmdUsageErrors(t *testing.T) {
	abs := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "missing upstream", args: []string{"--capture-dir", abs}, want: "--upstream is required"},
		{name: "upstream with /v1", args: []string{"--upstream", "http://127.0.0.1:9/v1", "--capture-dir", abs}, want: `--upstream "http://127.0.0.1:9/v1" must be the base URL without /v1`},
		{name: "upstream not a URL", args: []string{"--upstream", "127.0.0.1:9", "--capture-dir", abs}, want: `--upstream "127.0.0.1:9" must be an absolute http:// or https:// URL`},
		{name: "missing capture dir", args: []string{"--upstream", "http://127.0.0.1:9"}, want: "--capture-dir is required"},
		{name: "relative capture dir", args: []string{"--upstream", "http://127.0.0.1:9", "--capture-dir", "caps"}, want: `--capture-dir "caps" must be an absolute path`},
		{name: "bad file mode", args: []string{"--upstream", "http://127.0.0.1:9", "--capture-dir", abs, "--file-mode", "0999"}, want: `--file-mode "0999" must be octal permission bits`},
		{name: "bad dir mode", args: []string{"--upstream", "http://127.0.0.1:9", "--capture-dir", abs, "--dir-mode", "1777"}, want: `--dir-mode "1777" must be octal permission bits`},
		{name: "bad listen", args: []string{"--upstream", "http://127.0.0.1:9", "--capture-dir", abs, "--listen", "8000"}, want: `--listen "8000" must be HOST:PORT`},
		{name: "zero dial timeout", args: []string{"--upstream", "http://127.0.0.1:9", "--capture-dir", abs, "--dial-timeout", "0s"}, want: `--dial-timeout 0s must be a positive duration`},
		{name: "negative header timeout", args: []string{"--upstream", "http://127.0.0.1:9", "--capture-dir", abs, "--response-header-timeout", "-5s"}, want: `--response-header-timeout -5s must be a positive duration`},
		{name: "listen port out of range", args: []string{"--upstream", "http://127.0.0.1:9", "--capture-dir", abs, "--listen", "127.0.0.1:99999"}, want: `--listen "127.0.0.1:99999": port 99999 must be a number from 0 (a free port) to 65535`},
		{name: "bad otlp endpoint", args: []string{"--upstream", "http://127.0.0.1:9", "--capture-dir", abs, "--listen", "127.0.0.1:0", "--otlp-endpoint", "localhost:4318"}, want: `--otlp-endpoint "localhost:4318" must be an absolute http:// or https:// URL`},
		{name: "journal beside capture via OTLP", args: []string{"--upstream", "http://127.0.0.1:9", "--capture-dir", abs, "--durability", "journal", "--capture-via-otlp", "http://127.0.0.1:9"}, want: "--durability journal with --capture-via-otlp: the records go to the gateways"},
		{name: "positional argument", args: []string{"extra"}, want: `unexpected argument "extra"`},
		{name: "unknown flag", args: []string{"--nope"}, want: "unknown flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runGymtrace(t, append([]string{"proxy"}, tt.args...)...)
			require.Error(t, res.err)
			assert.Contains(t, res.err.Error(), tt.want)
			assert.Equal(t, 2, res.code, "usage error exit code")
			assert.Empty(t, res.stdout)
		})
	}
}

func TestVersionCmd(t *testing.T) {
	res := runGymtrace(t, "version")
	require.NoError(t, res.err)
	assert.True(t, strings.HasPrefix(res.stdout, "gymtrace "), res.stdout)
	assert.Equal(t, 1, strings.Count(res.stdout, "\n"))
	assert.Equal(t, 2, runGymtrace(t, "version", "x").code)
}

// TestProxyCmdDrainsOnSIGTERM: SIGTERM lets an in-flight call finish (and its record be written)
// before the proxy exits 0.
func TestProxyCmdDrainsOnSIGTERM(t *testing.T) {
	bin := buildGymtrace(t)
	release := make(chan struct{})
	started := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
		w.(http.Flusher).Flush()
		close(started)
		<-release
		_, _ = io.WriteString(w, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer up.Close()
	dir := t.TempDir()
	p := startProxy(t, bin, up.URL, dir)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	done := postStreamAsync(client, p.url+"/ng-rollout/drain/v1/chat/completions")
	<-started
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	time.Sleep(100 * time.Millisecond)
	close(release)
	r := <-done
	require.NoError(t, r.err)
	assert.True(t, bytes.HasSuffix(r.body, []byte("data: [DONE]\n\n")), "the in-flight call finished: %q", r.body)
	require.NoError(t, p.wait(), "exit 0; stderr: %s", p.stderr)
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	lines, _, err := store.ReadAvailable("drain")
	require.NoError(t, err)
	assert.Len(t, lines, 1)
}

// otlpSink records the OTLP/HTTP export requests it receives.
type otlpSink struct {
	mu     sync.Mutex
	bodies [][]byte
	paths  []string
}

func (s *otlpSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, b)
	s.paths = append(s.paths, r.URL.Path)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

func (s *otlpSink) all() ([]byte, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Join(s.bodies, nil), append([]string(nil), s.paths...)
}

// TestProxyCmdOTLPExport: spans reach the OTLP endpoint (drained at shutdown), payloads stripped
// unless --otlp-payloads; --capture-message-content adds the conversation as GenAI content
// attributes, which stripping keeps (they are not payloads).
func TestProxyCmdOTLPExport(t *testing.T) {
	bin := buildGymtrace(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"resp_otlp","model":"m","status":"completed","usage":{"input_tokens":4,"output_tokens":1}}`)
	}))
	defer up.Close()
	const marker = "UNIQUE-PAYLOAD-MARKER"
	tests := []struct {
		name             string
		args             []string
		wantMarkers      int // the request body carries the marker once, gen_ai.input.messages once
		wantInputMessage bool
	}{
		{name: "stripped", wantMarkers: 0},
		{name: "with payloads", args: []string{"--otlp-payloads"}, wantMarkers: 1},
		{name: "stripped with message content", args: []string{"--capture-message-content"}, wantMarkers: 1, wantInputMessage: true},
		{name: "payloads and message content", args: []string{"--otlp-payloads", "--capture-message-content"}, wantMarkers: 2, wantInputMessage: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &otlpSink{}
			collector := httptest.NewServer(sink)
			defer collector.Close()
			args := append([]string{"--otlp-endpoint", collector.URL}, tt.args...)
			p := startProxy(t, bin, up.URL, filepath.Join(t.TempDir(), "caps"), args...)
			resp, err := http.Post(p.url+"/ng-rollout/otlp-1/v1/responses", "application/json", strings.NewReader(`{"model":"m","input":"`+marker+`"}`))
			require.NoError(t, err)
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
			require.NoError(t, p.wait(), "stderr: %s", p.stderr)
			body, paths := sink.all()
			require.NotEmpty(t, paths, "spans exported at shutdown")
			assert.Equal(t, "/v1/traces", paths[0])
			assert.Contains(t, string(body), string(semconv.GymtraceModelCallIDKey))
			assert.Contains(t, string(body), "resp_otlp")
			assert.Contains(t, string(body), string(semconv.GymtraceRequestBodySizeKey))
			assert.Equal(t, tt.wantMarkers, strings.Count(string(body), marker), "payload attributes exported only with --otlp-payloads; content only with --capture-message-content")
			assert.Equal(t, tt.wantInputMessage, strings.Contains(string(body), string(semconv.GenAIInputMessagesKey)))
		})
	}
}

// streamResult is what postStreamAsync delivers: the whole response body or the error that ended it.
type streamResult struct {
	body []byte
	err  error
}

// postStreamAsync POSTs a small streaming chat request to url in a goroutine and delivers the outcome
// on the returned channel (buffered, so the goroutine never blocks).
func postStreamAsync(client *http.Client, url string) <-chan streamResult {
	done := make(chan streamResult, 1)
	go func() {
		resp, err := client.Post(url, "application/json", strings.NewReader(`{"model":"m","stream":true}`))
		if err != nil {
			done <- streamResult{nil, err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		done <- streamResult{b, err}
	}()
	return done
}
