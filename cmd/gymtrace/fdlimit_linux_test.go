//go:build linux

package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
)

// TestProxyCmdDescriptorLimit: issue #14 finding 5. The proxy runs with a hard RLIMIT_NOFILE of 256
// (`ulimit -n` in sh, so Go cannot raise it) and 200 concurrent clients, each opening a new
// connection per call, make 600 calls to 600 rollouts. Every call a client saw answered 200 and
// complete has its record or its rollout's marker; the proxy logs that it stopped accepting.
func TestProxyCmdDescriptorLimit(t *testing.T) {
	bin := buildGymtrace(t)
	const (
		nofile  = 256
		clients = 200
		perConn = 3
	)
	wrapper := filepath.Join(t.TempDir(), "gymtrace-lowfd")
	require.NoError(t, os.WriteFile(wrapper, []byte(fmt.Sprintf("#!/bin/sh\nulimit -n %d || exit 97\nexec %q \"$@\"\n", nofile, bin)), 0o700))
	const answer = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		time.Sleep(20 * time.Millisecond)
		_, _ = io.WriteString(w, answer)
	}))
	defer up.Close()
	dir := t.TempDir()
	p := startProxy(t, wrapper, up.URL, dir)

	type result struct {
		rid      string
		complete bool
		err      error
	}
	results := make(chan result, clients*perConn)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 2 * time.Minute}
			for i := range perConn {
				rid := fmt.Sprintf("fd-%d-%d", c, i)
				resp, err := client.Post(p.url+"/ng-rollout/"+rid+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","stream":true}`))
				if err != nil {
					results <- result{rid: rid, err: err}
					continue
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				results <- result{rid: rid, complete: err == nil && resp.StatusCode == http.StatusOK && string(body) == answer, err: err}
			}
		}()
	}
	wg.Wait()
	close(results)

	var answered, failed int
	var lost []string
	for r := range results {
		if !r.complete {
			failed++
			continue
		}
		answered++
		_, recErr := os.Stat(filepath.Join(dir, r.rid+capture.CaptureFileSuffix))
		_, markErr := os.Stat(filepath.Join(dir, r.rid+capture.MarkerFileSuffix))
		if errors.Is(recErr, os.ErrNotExist) && errors.Is(markErr, os.ErrNotExist) {
			lost = append(lost, r.rid)
		}
	}
	t.Logf("answered 200 complete: %d, not answered: %d, without record or marker: %d", answered, failed, len(lost))
	assert.Empty(t, lost, "calls answered 200 with neither a record nor a marker")
	if len(lost) > 0 {
		for _, l := range strings.Split(p.stderr.String(), "\n") {
			if strings.Contains(l, lost[0]+" ") {
				t.Log(l)
			}
		}
	}
	assert.Equal(t, clients*perConn, answered, "the listener backs off instead of failing calls")
	assert.Contains(t, p.stderr.String(), "file descriptors low; not accepting connections", "the back-off is logged")
	assert.NotContains(t, p.stderr.String(), "too many open files", "no descriptor ran out")
}

// TestProxyCmdDescriptorLimitTooLow: a descriptor limit that leaves no room for one connection
// after --fd-reserve is an error at start (exit 1) naming the limit, never a proxy that accepts
// nothing.
func TestProxyCmdDescriptorLimitTooLow(t *testing.T) {
	bin := buildGymtrace(t)
	cmd := exec.Command("sh", "-c", `ulimit -n 40 && exec "$0" "$@"`, bin, "proxy", "--upstream", "http://127.0.0.1:9", "--capture-dir", t.TempDir(), "--listen", "127.0.0.1:0")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", out)
	assert.Equal(t, 1, ee.ExitCode(), "%s", out)
	assert.Contains(t, string(out), "--fd-reserve 32: the descriptor limit (RLIMIT_NOFILE) 40 leaves no room for one connection")
	assert.NotContains(t, string(out), "listening on")
}
