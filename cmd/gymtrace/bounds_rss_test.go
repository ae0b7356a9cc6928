//go:build !race

// The race detector's shadow memory distorts RSS, so this test is built only without -race;
// scripts/test.sh runs it in a step of its own (README "Bounded responses").

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/testkit/bomb"
	"github.com/gymtrace/gymtrace/proxy"
)

// procStatusBytes returns a "Name:   N kB" field of /proc/<pid>/status, in bytes.
func procStatusBytes(t *testing.T, pid int, field string) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// TestProxyCmdBoundedUnderAttack is issue #14's "Done when" test at the attacks' real sizes: the
// real binary, default bounds, one brotli bomb of a few KB decoding to 4 GiB, one ~1 MiB gzip bomb
// decoding to 1 GiB and one 1 GB plain SSE stream, all at once among normal traffic. The proxy stays
// up, every normal call's record is written whole, the three attack records carry capture_bound, the
// clients get every byte, and the proxy's peak RSS (VmHWM) stays within the README's bound.
func TestProxyCmdBoundedUnderAttack(t *testing.T) {
	brBomb, err := bomb.Zeros("br", 4<<30)
	require.NoError(t, err)
	gzBomb, err := bomb.Zeros("gzip", 1<<30)
	require.NoError(t, err)
	const streamBytes = 1_000_000_000
	event := []byte("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" +
		strings.Repeat("abcdefgh", 100) + "\"},\"finish_reason\":null}]}\n\n")
	done := []byte("data: [DONE]\n\n")
	normal := `{"id":"resp_ok","object":"response","status":"completed","model":"m","output":[],"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}`

	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch attack := r.Header.Get("X-Attack"); attack { // the rollout prefix never reaches the upstream
		case "bomb-br", "bomb-gzip":
			body, coding := brBomb, "br"
			if attack == "bomb-gzip" {
				body, coding = gzBomb, "gzip"
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", coding)
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			_, _ = w.Write(body)
		case "stream":
			w.Header().Set("Content-Type", "text/event-stream")
			chunk := bytes.Repeat(event, (64<<10)/len(event))
			sent := 0
			for sent+len(chunk)+len(done) <= streamBytes {
				if _, err := w.Write(chunk); err != nil {
					return
				}
				sent += len(chunk)
			}
			pad := streamBytes - sent - len(done) // an SSE comment line makes the size exact
			_, _ = w.Write(append(append([]byte(":"), bytes.Repeat([]byte(" "), pad-2)...), '\n'))
			_, _ = w.Write(done)
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, normal)
		}
	}))
	t.Cleanup(up.Close)

	bin := buildGymtrace(t)
	dir := t.TempDir()
	p := startProxy(t, bin, up.URL, dir)
	pid := p.cmd.Process.Pid
	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 16}}
	t.Cleanup(client.CloseIdleConnections)
	call := func(rid, path string) (int64, error) {
		req, err := http.NewRequest(http.MethodPost, p.url+"/ng-rollout/"+rid+path, strings.NewReader(`{"model":"m","input":"hi"}`))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Attack", rid)
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		return io.Copy(io.Discard, resp.Body)
	}
	for i := range 20 { // warm-up
		_, err := call(fmt.Sprintf("warm-%d", i), "/v1/responses")
		require.NoError(t, err)
	}
	baseline := procStatusBytes(t, pid, "VmRSS")

	var normalCalls atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_, err := call(fmt.Sprintf("normal-%d", w), "/v1/responses")
				assert.NoError(t, err)
				normalCalls.Add(1)
			}
		})
	}
	attacks := []struct {
		rid, path string
		want      int64
		kind      string
	}{
		{"bomb-br", "/v1/responses", int64(len(brBomb)), "decode_ratio"},
		{"bomb-gzip", "/v1/responses", int64(len(gzBomb)), ""},
		{"stream", "/v1/chat/completions", streamBytes, "response_bytes"},
	}
	var awg sync.WaitGroup
	got := make([]int64, len(attacks))
	start := time.Now()
	for i, a := range attacks {
		awg.Go(func() {
			n, err := call(a.rid, a.path)
			assert.NoError(t, err, a.rid)
			got[i] = n
		})
	}
	awg.Wait()
	took := time.Since(start)
	close(stop)
	wg.Wait()
	peak := procStatusBytes(t, pid, "VmHWM")

	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	for i, a := range attacks {
		assert.Equal(t, a.want, got[i], "%s: the client got every byte", a.rid)
		path, err := store.CapturePath(a.rid)
		require.NoError(t, err)
		line, err := os.ReadFile(path)
		require.NoError(t, err)
		var rec struct {
			ErrorCategory *string `json:"error_category"`
			CaptureBound  *struct {
				Kind  string `json:"kind"`
				Limit int64  `json:"limit"`
				Seen  int64  `json:"seen"`
			} `json:"capture_bound"`
		}
		require.NoError(t, json.Unmarshal(line, &rec), "%s: one record line", a.rid)
		require.NotNil(t, rec.CaptureBound, "%s carries capture_bound", a.rid)
		if a.kind != "" {
			assert.Equal(t, a.kind, rec.CaptureBound.Kind, a.rid)
		}
		assert.Equal(t, a.want, rec.CaptureBound.Seen, a.rid)
		assert.Nil(t, rec.ErrorCategory, a.rid)
		incomplete, err := store.IsIncomplete(a.rid)
		require.NoError(t, err)
		assert.True(t, incomplete, "%s: the rollout is marked incomplete", a.rid)
		t.Logf("%s: %d bytes forwarded, capture_bound %+v, %d-byte record", a.rid, got[i], *rec.CaptureBound, len(line))
	}
	var records int64
	for w := range 4 {
		recs, err := store.Read(fmt.Sprintf("normal-%d", w))
		require.NoError(t, err)
		records += int64(len(recs))
		incomplete, err := store.IsIncomplete(fmt.Sprintf("normal-%d", w))
		require.NoError(t, err)
		assert.False(t, incomplete)
	}
	assert.Equal(t, normalCalls.Load(), records, "every normal call has its record")

	// README "Bounded responses": memory ≤ 64 MiB + 5 × C, C the bytes captured in flight: per call
	// min(received, max-response-bytes) + min(decoded, max-decoded-bytes, max-decode-ratio ×
	// received), plus a decoder window (≤ 16 MiB), all calls together at most
	// max-capture-bytes-in-flight.
	const mib = 1 << 20
	var captured int64
	for _, c := range []struct{ received, decoded int64 }{
		{int64(len(brBomb)), 4 << 30}, {int64(len(gzBomb)), 1 << 30}, {streamBytes, 0},
	} {
		captured += min(c.received, proxy.DefaultMaxResponseBytes)
		if c.decoded > 0 {
			captured += min(c.decoded, proxy.DefaultMaxDecodedBytes, proxy.DefaultMaxDecodeRatio*c.received) + 16*mib
		}
	}
	captured = min(captured, proxy.DefaultMaxCaptureBytesInFlight)
	bound := 64*mib + 5*captured
	t.Logf("proxy RSS: %d MiB after warm-up, peak %d MiB (bound %d MiB); %d normal calls; attacks took %v",
		baseline/mib, peak/mib, bound/mib, normalCalls.Load(), took.Round(time.Millisecond))
	assert.Less(t, peak, int64(bound), "peak RSS within the README's bound")
	assert.Positive(t, normalCalls.Load())
}
