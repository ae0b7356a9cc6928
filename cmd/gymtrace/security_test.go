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
