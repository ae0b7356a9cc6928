package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/testkit/syncbuf"
)

// Issue 7 part 4 through the CLI: the proxy listens on loopback unless told otherwise, and
// --redact-json-path / --redact-regex keep configured payload parts out of the capture file.

func TestProxyCmdListenDefaultIsLoopback(t *testing.T) {
	def := newProxyCmd().Flags().Lookup("listen").DefValue
	host, port, err := net.SplitHostPort(def)
	require.NoError(t, err)
	ip := net.ParseIP(host)
	require.NotNil(t, ip, "the default names an address, not a host name: %q", def)
	assert.True(t, ip.IsLoopback(), "--listen defaults to loopback, got %q", def)
	assert.NotEqual(t, "0", port)
}

// TestProxyCmdRedaction: the binary's redaction flags remove a JSON path and a pattern from the
// record (request, response and SSE response_raw), while the upstream and the client see the
// exact bytes, and an API key sent as a header is never captured.
func TestProxyCmdRedaction(t *testing.T) {
	bin := buildGymtrace(t)
	const secret = "sk-abcdef0123456789"
	answer := "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"echo " + secret + "\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	reqBody := `{"model":"m","stream":true,"user":"alice@example.com","messages":[{"role":"user","content":"key ` + secret + `"}]}`
	gotReq := make(chan string, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotReq <- string(b) + "|" + r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, answer)
	}))
	defer up.Close()
	dir := t.TempDir()
	p := startProxy(t, bin, up.URL, dir, "--redact-json-path", "$.user", "--redact-regex", `sk-[a-z0-9]{8,}`)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodPost, p.url+"/ng-rollout/red/v1/chat/completions", strings.NewReader(reqBody))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-header0000000000")
	resp, err := client.Do(req)
	require.NoError(t, err)
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, answer, string(got), "the client gets the upstream's bytes")
	assert.Equal(t, reqBody+"|Bearer sk-header0000000000", <-gotReq, "the upstream gets the client's bytes and headers")

	data, err := os.ReadFile(filepath.Join(dir, "red"+capture.CaptureFileSuffix))
	require.NoError(t, err)
	line := string(data)
	for _, s := range []string{secret, "alice@example.com", "sk-header"} {
		assert.NotContains(t, line, s)
	}
	assert.Contains(t, line, `"user":"[REDACTED]"`)
	assert.Contains(t, line, `"content":"key [REDACTED]"`)
	assert.Contains(t, line, `\"content\":\"echo [REDACTED]\"`, "response_raw redacted")
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	recs, invalid, err := store.ReadAvailableModelCallRecords("red")
	require.NoError(t, err)
	assert.Zero(t, invalid)
	require.Len(t, recs, 1)
	assert.Nil(t, recs[0].ErrorCategory)
	assert.NotContains(t, p.stderr.String(), secret)
}

// TestProxyCmdRefusesEncodedSeparatorsAndDotSegments: issue #14 finding 8 through the binary. The
// attack's paths — an id holding %2F (once forwarded uncaptured as /b/...) and a rest with ".."
// (once forwarded with its dot segments) — get D12's 400; nothing reaches the upstream or the
// capture directory, and the same prefix without them is served.
func TestProxyCmdRefusesEncodedSeparatorsAndDotSegments(t *testing.T) {
	bin := buildGymtrace(t)
	var upstreamPaths syncbuf.Buffer
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(&upstreamPaths, r.URL.EscapedPath()+"\n")
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"x","object":"chat.completion","model":"m","choices":[]}`)
	}))
	defer up.Close()
	dir := t.TempDir()
	p := startProxy(t, bin, up.URL, dir)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	post := func(target string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, p.url+target, strings.NewReader(`{"model":"m"}`))
		require.NoError(t, err)
		require.Equal(t, target, req.URL.EscapedPath(), "the client sends the target as written")
		resp, err := client.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		return resp.StatusCode, string(body)
	}
	for _, target := range []string{
		"/ng-rollout/a%2Fb/v1/responses",
		"/ng-rollout/a%2Fb/v1/chat/completions",
		"/ng-rollout/a%2fb/v1/models",
		"/ng-rollout/ok/../x/v1/responses",
		"/ng-rollout/ok/%2e%2e/x/v1/chat/completions",
	} {
		status, body := post(target)
		assert.Equal(t, http.StatusBadRequest, status, target)
		assert.Contains(t, body, `"code":"invalid_rollout_id"`, target)
	}
	assert.Empty(t, upstreamPaths.String(), "nothing was forwarded")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing was written")

	status, _ := post("/ng-rollout/ok/v1/chat/completions")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "/v1/chat/completions\n", upstreamPaths.String())
	assert.Contains(t, p.stderr.String(), "invalid rollout id", "the refusals are logged")
	assert.Contains(t, p.stderr.String(), "ok/../x/v1/responses", "with the path as sent")
}

// TestProxyCmdRedactsEchoedCredentials: issue #14 finding 10 through the binary. By default the
// request's own credentials — the Authorization token, x-api-key, a --secret-header — are replaced
// with [REDACTED] where an upstream echoes them (a JSON error body, an SSE stream); the client gets
// the upstream's bytes. --no-redact-credentials captures them (the control).
func TestProxyCmdRedactsEchoedCredentials(t *testing.T) {
	bin := buildGymtrace(t)
	const key = "sk-proj-Qw3rTy8uIo0pAs5dFg"
	const other = "tenant-token-7Hj2Kl9Zx"
	jsonAnswer := `{"error":{"message":"Incorrect API key provided: ` + key + `; tenant ` + other + `","type":"invalid_request_error","code":"invalid_api_key"}}`
	sseAnswer := "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + key + "\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Header.Get("X-Api-Key") != "" {
			w.Header().Set("Content-Type", "text/event-stream")
			half := strings.Index(sseAnswer, key) + len(key)/2
			_, _ = io.WriteString(w, sseAnswer[:half])
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, sseAnswer[half:])
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, jsonAnswer)
	}))
	defer up.Close()
	call := func(t *testing.T, p *proxyProcess, dir, rid string, hdr map[string]string, want string) string {
		t.Helper()
		client := &http.Client{Transport: &http.Transport{}}
		defer client.CloseIdleConnections()
		req, err := http.NewRequest(http.MethodPost, p.url+"/ng-rollout/"+rid+"/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true}`))
		require.NoError(t, err)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, want, string(got), "the client gets the upstream's bytes")
		data, err := os.ReadFile(filepath.Join(dir, rid+capture.CaptureFileSuffix))
		require.NoError(t, err)
		return string(data)
	}
	auth := map[string]string{"Authorization": "Bearer " + key, "X-Tenant-Token": other}

	t.Run("default", func(t *testing.T) {
		dir := t.TempDir()
		p := startProxy(t, bin, up.URL, dir, "--secret-header", "X-Tenant-Token")
		line := call(t, p, dir, "cred-json", auth, jsonAnswer)
		assert.NotContains(t, line, key)
		assert.NotContains(t, line, other)
		assert.Contains(t, line, `"message":"Incorrect API key provided: [REDACTED]; tenant [REDACTED]"`)
		line = call(t, p, dir, "cred-sse", map[string]string{"X-Api-Key": key}, sseAnswer)
		assert.NotContains(t, line, key)
		assert.Contains(t, line, `\"content\":\"[REDACTED]\"`, "response_raw")
		assert.NotContains(t, p.stderr.String(), key)
	})
	t.Run("off", func(t *testing.T) {
		dir := t.TempDir()
		p := startProxy(t, bin, up.URL, dir, "--no-redact-credentials")
		line := call(t, p, dir, "raw-json", auth, jsonAnswer)
		assert.Contains(t, line, key)
		assert.Contains(t, line, other)
	})
}

func TestProxyCmdCredentialFlagErrors(t *testing.T) {
	base := []string{"proxy", "--upstream", "http://127.0.0.1:9", "--capture-dir", t.TempDir(), "--listen", "127.0.0.1:0"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{args: []string{"--secret-header", "X Token"}, want: `--secret-header "X Token": not an HTTP header name`},
		{args: []string{"--secret-header", ""}, want: `--secret-header "": not an HTTP header name`},
		{args: []string{"--secret-header", "X-Token", "--no-redact-credentials"}, want: "--secret-header and --no-redact-credentials"},
	} {
		res := runGymtrace(t, append(append([]string(nil), base...), tt.args...)...)
		require.Error(t, res.err, "%v", tt.args)
		assert.Contains(t, res.err.Error(), tt.want)
		assert.Equal(t, 2, res.code, "usage error exit code")
	}
}
