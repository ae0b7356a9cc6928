package proxy

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeCountingListener counts the Write calls made on the connections it accepts.
type writeCountingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l writeCountingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return writeCountingConn{Conn: c, writes: l.writes}, nil
}

type writeCountingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c writeCountingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// newCountingProxy serves New(upstream) on a listener that counts the proxy's writes to its
// clients.
func newCountingProxy(t *testing.T, upstream string) (url string, writes *atomic.Int64) {
	t.Helper()
	h, err := New(upstream, WithStore(newTestStore(t)), WithModelServerName("policy_model"))
	require.NoError(t, err)
	writes = new(atomic.Int64)
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = writeCountingListener{Listener: srv.Listener, writes: writes}
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		require.NoError(t, h.Shutdown(context.Background()))
	})
	return srv.URL, writes
}

// TestCapturedResponseWrites pins when the status line reaches the client: with the first body
// bytes for a JSON answer (one write for a small captured call, as a plain reverse proxy does),
// at once for a stream, before its first event.
func TestCapturedResponseWrites(t *testing.T) {
	t.Run("small JSON answer is one write", func(t *testing.T) {
		const answer = `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`
		up := newUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
			_, _ = io.WriteString(w, answer)
		})
		url, writes := newCountingProxy(t, up.URL)
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		for i := range 3 {
			before := writes.Load()
			resp, err := client.Post(url+"/ng-rollout/writes/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[]}`))
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, resp.Body.Close())
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, answer, string(body))
			assert.Equal(t, int64(1), writes.Load()-before, "call %d: status line, headers and body in one write", i)
		}
	})
	t.Run("stream status line before the first event", func(t *testing.T) {
		release := make(chan struct{})
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			sseHeaders(w)
			w.WriteHeader(http.StatusOK)
			flush(w)
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			_, _ = io.WriteString(w, chatEvent1+chatEvent2+chatDone)
		})
		url, _ := newCountingProxy(t, up.URL)
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		// The upstream sends no event until the client has the status line: a status line held
		// back until the first event would end this call with the timeout.
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/ng-rollout/writes/v1/chat/completions", strings.NewReader(chatRequest))
		require.NoError(t, err)
		resp, err := client.Do(req)
		require.NoError(t, err, "status line before the first event")
		close(release)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, resp.Body.Close())
		require.NoError(t, err)
		assert.Equal(t, chatEvent1+chatEvent2+chatDone, string(body))
	})
}

// TestMaxEventBytes checks WithMaxEventBytes (SPEC §0 D2): an SSE event over the bound is dropped
// from the record and marks the rollout incomplete, while the client still gets every byte.
func TestMaxEventBytes(t *testing.T) {
	events := chatEvent1 + chatDone
	up := newUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, events)
	})
	for _, tt := range []struct {
		name     string
		max      int
		wantLoss bool
	}{
		{name: "event over the bound", max: 32, wantLoss: true},
		{name: "below 1 keeps the default", max: 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := newProxyEnv(t, up.URL, nil, WithMaxEventBytes(tt.max))
			resp, body, err := env.post(t, "/ng-rollout/bound/v1/chat/completions", chatRequest, nil)
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, events, string(body), "forwarding is never bounded")
			rec := env.record(t, "bound")
			assert.Equal(t, events, rec["response_raw"])
			incomplete, err := env.store.IsIncomplete("bound")
			require.NoError(t, err)
			assert.Equal(t, tt.wantLoss, incomplete)
			assert.Equal(t, tt.wantLoss, rec["response"] == nil, "the only chunk was dropped: nothing to reassemble")
			assert.Equal(t, tt.wantLoss, strings.Contains(env.logs.String(), "exceeded the per-event parse bound of"))
		})
	}
}
