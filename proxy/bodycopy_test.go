package proxy

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/testkit/syncbuf"
)

const (
	respCreated   = "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_g\",\"status\":\"in_progress\"}}\n\n"
	respCompleted = "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_g\",\"model\":\"m\",\"status\":\"completed\",\"output\":[]}}\n\n"
	trailingBytes = ": upstream keep-alive after the end\n\n"
)

// heldOpenUpstream serves body (SSE) at once, then keeps the response open until release is closed
// (then writes trailing and returns) or the request ends. closed is closed when the handler returns.
func heldOpenUpstream(t *testing.T, body, trailing string, release <-chan struct{}, closed chan<- struct{}) string {
	t.Helper()
	return pacedHeldOpenUpstream(t, "", nil, body, trailing, release, closed)
}

// pacedHeldOpenUpstream is heldOpenUpstream that first sends first (when not empty) and waits for
// proceed before sending body, so the two reach the proxy in separate reads.
func pacedHeldOpenUpstream(t *testing.T, first string, proceed <-chan struct{}, body, trailing string, release <-chan struct{}, closed chan<- struct{}) string {
	t.Helper()
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(closed)
		sseHeaders(w)
		if first != "" {
			_, _ = io.WriteString(w, first)
			flush(w)
			select {
			case <-proceed:
			case <-r.Context().Done():
				return
			}
		}
		_, _ = io.WriteString(w, body)
		flush(w)
		select {
		case <-release:
			_, _ = io.WriteString(w, trailing)
		case <-r.Context().Done():
		}
	})
	return up.URL
}

// readWithin reads exactly n bytes of body, failing the test when they do not arrive within d.
func readWithin(t *testing.T, body io.Reader, n int, d time.Duration) string {
	t.Helper()
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b := make([]byte, n)
		_, err := io.ReadFull(body, b)
		ch <- result{b, err}
	}()
	select {
	case r := <-ch:
		require.NoError(t, r.err)
		return string(r.b)
	case <-time.After(d):
		t.Fatalf("the client did not get %d bytes within %s", n, d)
		return ""
	}
}

// openStream posts a streaming request and returns the response (its body unread).
func (e *testEnv) openStream(t *testing.T, ctx context.Context, path string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL+path, strings.NewReader(chatRequest))
	require.NoError(t, err)
	resp, err := e.client.Do(req)
	require.NoError(t, err)
	return resp
}

// TestProxyTerminalGrace: an upstream that keeps the response open after the terminal event does
// not withhold the answer; the record is written with the bytes up to then, later bytes flow
// unheld and uncaptured.
func TestProxyTerminalGrace(t *testing.T) {
	tests := []struct {
		name, path, body string
	}{
		{name: "chat [DONE]", path: "/v1/chat/completions", body: chatEvent1 + chatEvent2 + chatDone},
		{name: "responses response.completed", path: "/v1/responses", body: respCreated + respCompleted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release, closed := make(chan struct{}), make(chan struct{})
			logs := &syncbuf.Buffer{}
			env := newProxyEnv(t, heldOpenUpstream(t, tt.body, trailingBytes, release, closed), nil,
				WithTerminalGrace(50*time.Millisecond),
				WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			resp := env.openStream(t, t.Context(), "/ng-rollout/grace"+tt.path)
			defer resp.Body.Close()
			assert.Equal(t, tt.body, readWithin(t, resp.Body, len(tt.body), 3*time.Second),
				"the whole answer reaches the client while the upstream keeps the response open")

			rec := env.record(t, "grace") // durable before the held bytes were released
			beforeUpstreamEnd := float64(time.Now().UnixNano()) / 1e9
			assert.Nil(t, rec["error_category"])
			assert.Equal(t, tt.body, rec["response_raw"])
			assert.NotNil(t, rec["response"])
			completed, err := rec["completed_at"].(json.Number).Float64()
			require.NoError(t, err)
			assert.Less(t, completed, beforeUpstreamEnd, "completed_at is the grace's end, not the upstream's")

			close(release)
			rest, err := io.ReadAll(resp.Body)
			require.NoError(t, err, "the response ends cleanly with the upstream's end")
			assert.Equal(t, trailingBytes, string(rest), "trailing bytes are forwarded")
			<-closed
			recs := mustRecords(t, env, "grace")
			require.Len(t, recs, 1, "exactly one record")
			assert.Equal(t, tt.body, recs[0]["response_raw"], "trailing bytes are not in the record")
			incomplete, err := env.store.IsIncomplete("grace")
			require.NoError(t, err)
			assert.False(t, incomplete)
			assert.Contains(t, logs.String(), "trailing_bytes="+strconv.Itoa(len(trailingBytes)), "the trailing bytes are counted at debug level")
		})
	}
}

func TestProxyTerminalGraceUpstreamNeverCloses(t *testing.T) {
	release, closed := make(chan struct{}), make(chan struct{})
	defer close(release)
	body := chatEvent1 + chatEvent2 + chatDone
	env := newProxyEnv(t, heldOpenUpstream(t, body, "", release, closed), nil, WithTerminalGrace(30*time.Millisecond))
	ctx, cancel := context.WithCancel(t.Context())
	resp := env.openStream(t, ctx, "/ng-rollout/open/v1/chat/completions")
	assert.Equal(t, body, readWithin(t, resp.Body, len(body), 3*time.Second))
	// The client has its answer and leaves; the upstream request is cancelled.
	cancel()
	resp.Body.Close()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream request was not cancelled after the client left")
	}
	rec := env.record(t, "open")
	assert.Nil(t, rec["error_category"], "the call completed before the client left")
	assert.Equal(t, body, rec["response_raw"])
}

// TestProxyTerminalGraceDurability: after the grace, the held terminal read still waits for the fsync.
func TestProxyTerminalGraceDurability(t *testing.T) {
	release, closed, proceed := make(chan struct{}), make(chan struct{}), make(chan struct{})
	syncRelease := make(chan struct{})
	var releaseOnce sync.Once
	releaseSync := func() { releaseOnce.Do(func() { close(syncRelease) }) }
	t.Cleanup(releaseSync) // never leave the handler blocked in the fsync, even when the test fails
	var syncing atomic.Bool
	store := newTestStore(t, capture.WithSyncHook(func(string) error {
		syncing.Store(true)
		<-syncRelease
		return nil
	}))
	env := newProxyEnv(t, pacedHeldOpenUpstream(t, chatEvent1, proceed, chatDone, "", release, closed), store, WithTerminalGrace(20*time.Millisecond))
	resp := env.openStream(t, t.Context(), "/ng-rollout/gd/v1/chat/completions")
	defer resp.Body.Close()
	assert.Equal(t, chatEvent1, readWithin(t, resp.Body, len(chatEvent1), 3*time.Second))
	close(proceed)
	waitFor(t, "the record write to start", syncing.Load)
	got := make(chan string, 1)
	go func() {
		b := make([]byte, len(chatDone))
		_, _ = io.ReadFull(resp.Body, b)
		got <- string(b)
	}()
	select {
	case b := <-got:
		t.Fatalf("the terminal event (%q) was seen before the record was durable", b)
	case <-time.After(100 * time.Millisecond):
	}
	releaseSync()
	assert.Equal(t, chatDone, <-got)
	close(release)
	_, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	<-closed
	assert.Len(t, mustRecords(t, env, "gd"), 1)
}

// TestProxyTerminalGraceCases covers the paths around the grace: bytes within it are captured, a
// body ending within it is the normal path, D8 never starts it, a disabled grace waits, an encoded
// stream is recorded decoded, a break after it aborts the client but keeps the record.
func TestProxyTerminalGraceCases(t *testing.T) {
	t.Run("bytes and end within the grace: the normal record", func(t *testing.T) {
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			sseHeaders(w)
			_, _ = io.WriteString(w, chatEvent1+chatDone)
			flush(w)
			time.Sleep(20 * time.Millisecond)
			_, _ = io.WriteString(w, trailingBytes)
		})
		env := newProxyEnv(t, up.URL, nil, WithTerminalGrace(2*time.Second))
		_, body, err := env.post(t, "/ng-rollout/within/v1/chat/completions", chatRequest, nil)
		require.NoError(t, err)
		assert.Equal(t, chatEvent1+chatDone+trailingBytes, string(body))
		assert.Equal(t, chatEvent1+chatDone+trailingBytes, env.record(t, "within")["response_raw"])
	})
	t.Run("D8 stream without a terminal event: no grace, the end waits for the upstream", func(t *testing.T) {
		release, closed := make(chan struct{}), make(chan struct{})
		env := newProxyEnv(t, heldOpenUpstream(t, chatEvent1+chatEvent2, "", release, closed), nil, WithTerminalGrace(10*time.Millisecond))
		resp := env.openStream(t, t.Context(), "/ng-rollout/d8/v1/chat/completions")
		defer resp.Body.Close()
		assert.Equal(t, chatEvent1+chatEvent2, readWithin(t, resp.Body, len(chatEvent1+chatEvent2), 3*time.Second))
		time.Sleep(100 * time.Millisecond)
		assert.Empty(t, mustRecords(t, env, "d8"), "no record before the upstream's end")
		close(release)
		_, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		rec := env.record(t, "d8")
		assert.Nil(t, rec["error_category"], "D8: complete at the end of the body")
	})
	t.Run("grace disabled: the terminal read waits for the upstream's end", func(t *testing.T) {
		release, closed, proceed := make(chan struct{}), make(chan struct{}), make(chan struct{})
		defer func() {
			select {
			case <-release:
			default:
				close(release)
			}
		}()
		env := newProxyEnv(t, pacedHeldOpenUpstream(t, chatEvent1, proceed, chatDone, "", release, closed), nil, WithTerminalGrace(-1))
		resp := env.openStream(t, t.Context(), "/ng-rollout/off/v1/chat/completions")
		defer resp.Body.Close()
		assert.Equal(t, chatEvent1, readWithin(t, resp.Body, len(chatEvent1), 3*time.Second))
		close(proceed)
		time.Sleep(300 * time.Millisecond) // more than DefaultTerminalGrace
		assert.Empty(t, mustRecords(t, env, "off"))
		close(release)
		rest, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, chatDone, string(rest))
		assert.Len(t, mustRecords(t, env, "off"), 1)
	})
	t.Run("gzip stream: recorded decoded, not a decode error", func(t *testing.T) {
		release := make(chan struct{})
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			sseHeaders(w)
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			_, _ = io.WriteString(zw, chatEvent1+chatDone)
			_ = zw.Flush() // a sync flush: the terminal event is decodable, the gzip stream unfinished
			flush(w)
			select {
			case <-release:
				_ = zw.Close()
			case <-r.Context().Done():
			}
		})
		env := newProxyEnv(t, up.URL, nil, WithTerminalGrace(30*time.Millisecond))
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, env.srv.URL+"/ng-rollout/gz/v1/chat/completions", strings.NewReader(chatRequest))
		require.NoError(t, err)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := env.client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		waitFor(t, "the record", func() bool { return len(mustRecords(t, env, "gz")) == 1 })
		rec := env.record(t, "gz")
		assert.Nil(t, rec["error_category"])
		assert.Equal(t, chatEvent1+chatDone, rec["response_raw"])
		close(release)
		zr, err := gzip.NewReader(resp.Body)
		require.NoError(t, err)
		plain, err := io.ReadAll(zr)
		require.NoError(t, err)
		assert.Equal(t, chatEvent1+chatDone, string(plain))
		incomplete, err := env.store.IsIncomplete("gz")
		require.NoError(t, err)
		assert.False(t, incomplete)
	})
	t.Run("upstream breaks after the grace: the client sees the break, the record stays", func(t *testing.T) {
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			body := chatEvent1 + chatDone
			_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
			_, _ = fmt.Fprintf(buf, "%x\r\n%s\r\n", len(body), body)
			_ = buf.Flush()
			time.Sleep(150 * time.Millisecond)
			_, _ = fmt.Fprintf(buf, "%x\r\n%s\r\n", len(trailingBytes), trailingBytes)
			_ = buf.Flush()
			time.Sleep(20 * time.Millisecond)
			_ = conn.(*net.TCPConn).SetLinger(0)
			_ = conn.Close()
		})
		env := newProxyEnv(t, up.URL, nil, WithTerminalGrace(30*time.Millisecond))
		_, body, err := env.post(t, "/ng-rollout/brk/v1/chat/completions", chatRequest, nil)
		require.Error(t, err, "the client's response is aborted")
		assert.Equal(t, chatEvent1+chatDone+trailingBytes, string(body))
		recs := mustRecords(t, env, "brk")
		require.Len(t, recs, 1)
		assert.Nil(t, recs[0]["error_category"])
		assert.Equal(t, chatEvent1+chatDone, recs[0]["response_raw"])
	})
}

// TestProxyTerminalGraceConcurrent runs many grace-ended calls at once (run with -race).
func TestProxyTerminalGraceConcurrent(t *testing.T) {
	release := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeaders(w)
		_, _ = io.WriteString(w, chatEvent1+chatDone)
		flush(w)
		select {
		case <-release:
			_, _ = io.WriteString(w, trailingBytes)
		case <-r.Context().Done():
		}
	})
	env := newProxyEnv(t, up.URL, nil, WithTerminalGrace(5*time.Millisecond))
	const n = 16
	errs := make(chan error, n)
	for i := range n {
		go func() {
			errs <- func() error {
				resp, err := env.client.Post(env.srv.URL+"/ng-rollout/conc-"+strconv.Itoa(i)+"/v1/chat/completions", "application/json", strings.NewReader(chatRequest))
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				if err == nil && string(b) != chatEvent1+chatDone+trailingBytes {
					err = fmt.Errorf("body %q", b)
				}
				return err
			}()
		}()
	}
	for i := range n {
		waitFor(t, "record "+strconv.Itoa(i), func() bool { return len(mustRecords(t, env, "conc-"+strconv.Itoa(i))) == 1 })
	}
	close(release)
	for range n {
		require.NoError(t, <-errs)
	}
	for i := range n {
		assert.Len(t, mustRecords(t, env, "conc-"+strconv.Itoa(i)), 1)
	}
}

// BenchmarkProxyChatStream measures one streamed call through the proxy's forwarder (the body copy
// loop, with the terminal grace armed at the end) over loopback HTTP.
func BenchmarkProxyChatStream(b *testing.B) {
	events := strings.Repeat(chatEvent1, 50) + chatEvent2 + chatDone
	up := newUpstream(b, func(w http.ResponseWriter, r *http.Request) {
		sseHeaders(w)
		for i := 0; i < len(events); i += 1024 {
			_, _ = io.WriteString(w, events[i:min(i+1024, len(events))])
			flush(w)
		}
	})
	env := newProxyEnv(b, up.URL, nil)
	b.ReportAllocs()
	b.SetBytes(int64(len(events)))
	for b.Loop() {
		_, body, err := env.post(b, "/ng-rollout/bench/v1/chat/completions", chatRequest, nil)
		if err != nil || len(body) != len(events) {
			b.Fatalf("body %d bytes, err %v", len(body), err)
		}
	}
}
