package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gymtrace/gymtrace/capture"
)

// Issue 7 parts 1 and 4 through the real binary: the reliability and redaction flags.

func TestProxyCmdReliabilityUsageErrors(t *testing.T) {
	abs := t.TempDir()
	base := []string{"proxy", "--upstream", "http://127.0.0.1:9", "--capture-dir", abs, "--listen", "127.0.0.1:0"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "zero idle read timeout", args: []string{"--idle-read-timeout", "0s"}, want: "--idle-read-timeout 0s must be a positive duration"},
		{name: "negative idle read timeout", args: []string{"--idle-read-timeout", "-1s"}, want: "--idle-read-timeout -1s must be a positive duration"},
		{name: "idle read timeout not a duration", args: []string{"--idle-read-timeout", "later"}, want: "invalid argument"},
		{name: "zero event bound", args: []string{"--max-event-bytes", "0"}, want: "--max-event-bytes 0 must be a positive number of bytes"},
		{name: "JSON path without $", args: []string{"--redact-json-path", "user"}, want: `--redact-json-path "user": proxy redactor: JSON path "user": must start with "$"`},
		{name: "JSON path bare $", args: []string{"--redact-json-path", "$.ok", "--redact-json-path", "$"}, want: `--redact-json-path "$"`},
		{name: "bad regex", args: []string{"--redact-regex", "sk-("}, want: `--redact-regex "sk-(": proxy redactor: pattern "sk-(": error parsing regexp`},
		{name: "regex matching nothing", args: []string{"--redact-regex", "x*"}, want: `--redact-regex "x*": proxy redactor: pattern "x*" matches the empty string`},
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
	t.Run("defaults", func(t *testing.T) {
		cmd := newProxyCmd()
		assert.Equal(t, "15m0s", cmd.Flags().Lookup(idleReadTimeoutFlag).DefValue)
		assert.Equal(t, "67108864", cmd.Flags().Lookup(maxEventBytesFlag).DefValue)
		assert.Equal(t, "[]", cmd.Flags().Lookup(redactJSONPathFlag).DefValue)
		assert.Equal(t, "[]", cmd.Flags().Lookup(redactRegexFlag).DefValue)
	})
}

// TestProxyCmdUpstreamStall: with --idle-read-timeout an upstream that stops mid-stream is given up:
// the client's response is aborted, the record says timeout.
func TestProxyCmdUpstreamStall(t *testing.T) {
	bin := buildGymtrace(t)
	const first = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, first)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	}))
	defer up.Close()
	dir := t.TempDir()
	p := startProxy(t, bin, up.URL, dir, "--idle-read-timeout", "300ms")
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	start := time.Now()
	r := <-postStreamAsync(client, p.url+"/ng-rollout/stall/v1/chat/completions")
	require.Error(t, r.err, "aborted, never ended cleanly")
	assert.Equal(t, first, string(r.body))
	assert.Less(t, time.Since(start), 30*time.Second)
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	recs, invalid, err := store.ReadAvailableModelCallRecords("stall")
	require.NoError(t, err)
	require.Zero(t, invalid)
	require.Len(t, recs, 1)
	require.NotNil(t, recs[0].ErrorCategory)
	assert.Equal(t, "timeout", *recs[0].ErrorCategory)
}

// TestProxyCmdCaptureDiskFull: the capture directory's file system fills up under the running proxy.
// The client still gets its whole answer; the rollout gets its .capture.incomplete marker; the loss
// is logged. Runs where this process may mount a tmpfs; elsewhere it logs why it could not.
func TestProxyCmdCaptureDiskFull(t *testing.T) {
	mnt := filepath.Join(t.TempDir(), "tmpfs")
	require.NoError(t, os.Mkdir(mnt, 0o700))
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=256k,mode=0700"); err != nil {
		t.Logf("variant not run: cannot mount a tmpfs here (%v); proxy's TestProxyCaptureStorageFaults covers a full disk through an injected ENOSPC", err)
		return
	}
	t.Cleanup(func() { require.NoError(t, unix.Unmount(mnt, unix.MNT_DETACH)) })
	bin := buildGymtrace(t)
	const answer = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, answer)
	}))
	defer up.Close()
	dir := filepath.Join(mnt, "caps")
	p := startProxy(t, bin, up.URL, dir)

	filler, err := os.Create(filepath.Join(mnt, "filler"))
	require.NoError(t, err)
	block := make([]byte, 4096)
	for {
		if _, err := filler.Write(block); err != nil {
			require.ErrorIs(t, err, unix.ENOSPC)
			break
		}
	}
	require.NoError(t, filler.Close())

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"` + strings.Repeat("full ", 20000) + `"}]}`
	resp, err := client.Post(p.url+"/ng-rollout/full/v1/chat/completions", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err, "the client gets its whole answer")
	assert.Equal(t, answer, string(got))
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	inc, err := store.IsIncomplete("full")
	require.NoError(t, err)
	assert.True(t, inc, "the rollout is marked incomplete")
	lines, invalid, err := store.ReadAvailable("full")
	require.NoError(t, err)
	assert.Zero(t, invalid, "no partial line left behind")
	assert.Empty(t, lines)
	// The proxy logs before it releases the call's end, but its stderr reaches p.stderr through a
	// pipe copied by another goroutine: wait (bounded) for the line to arrive.
	logged := func() bool {
		stderr := p.stderr.String()
		return strings.Contains(stderr, "record not written; marking the rollout incomplete") &&
			strings.Contains(stderr, "no space left on device") && strings.Contains(stderr, "rollout_id=full")
	}
	assert.Eventually(t, logged, 10*time.Second, 10*time.Millisecond, "stderr: %s", p.stderr)
}
