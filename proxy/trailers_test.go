package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProxyTrailers: upstream trailers, declared (Trailer header) or not, reach the client after
// the body, on captured and uncaptured calls, small bodies included.
func TestProxyTrailers(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Declared")
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			sseHeaders(w)
			_, _ = io.WriteString(w, chatEvent1+chatEvent2+chatDone)
		} else {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"id":"resp_t","object":"response","status":"completed"}`)
		}
		w.Header().Set("X-Declared", "d1")
		w.Header().Set(http.TrailerPrefix+"X-Undeclared", "u1")
	})
	tests := []struct {
		name, path string
		captured   bool
	}{
		{name: "captured SSE", path: "/ng-rollout/tr/v1/chat/completions", captured: true},
		{name: "captured JSON", path: "/ng-rollout/tr/v1/responses", captured: true},
		{name: "uncaptured path under the prefix", path: "/ng-rollout/tr/v1/models"},
		{name: "unprefixed call", path: "/v1/models"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newProxyEnv(t, up.URL, nil)
			resp, body, err := env.post(t, tt.path, chatRequest, nil)
			require.NoError(t, err)
			require.NotEmpty(t, body)
			assert.Equal(t, "d1", resp.Trailer.Get("X-Declared"), "declared trailer forwarded")
			assert.Equal(t, "u1", resp.Trailer.Get("X-Undeclared"), "undeclared trailer forwarded")
			assert.Empty(t, resp.Header.Get("X-Declared"), "a trailer is not a header")
			recs := mustRecords(t, env, "tr")
			if tt.captured {
				require.Len(t, recs, 1)
				assert.Nil(t, recs[0]["error_category"])
			} else {
				assert.Empty(t, recs)
			}
		})
	}
}

// TestProxyUncapturedPacing: an uncaptured call is forwarded read by read too (flushed at once).
func TestProxyUncapturedPacing(t *testing.T) {
	clientHasEvent := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeaders(w)
		_, _ = io.WriteString(w, chatEvent1)
		flush(w)
		select {
		case <-clientHasEvent:
		case <-time.After(5 * time.Second):
		}
		_, _ = io.WriteString(w, chatEvent2)
	})
	env := newProxyEnv(t, up.URL, nil)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, env.srv.URL+"/ng-rollout/p/v1/events", nil)
	require.NoError(t, err)
	start := time.Now()
	resp, err := env.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	first := readWithin(t, resp.Body, len(chatEvent1), 3*time.Second)
	assert.Equal(t, chatEvent1, first)
	assert.Less(t, time.Since(start), 3*time.Second, "the first event arrives while the upstream waits for the client to have it")
	close(clientHasEvent)
	rest, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, chatEvent2, string(rest))
}

// TestTrailerHelpers covers announcing and copying trailers.
func TestTrailerHelpers(t *testing.T) {
	h := http.Header{}
	assert.Nil(t, announceTrailers(h, nil))
	assert.Empty(t, h.Values("Trailer"))
	keys := announceTrailers(h, http.Header{"X-B": nil, "X-A": nil})
	assert.Equal(t, []string{"X-A", "X-B"}, keys)
	assert.Equal(t, "X-A, X-B", h.Get("Trailer"))
	copyTrailers(h, http.Header{"X-A": {"1"}, "X-C": {"3", "4"}, "X-Empty": nil}, keys)
	assert.Equal(t, []string{"1"}, h["X-A"])
	assert.Equal(t, []string{"3", "4"}, h[http.TrailerPrefix+"X-C"])
	assert.NotContains(t, h, http.TrailerPrefix+"X-Empty")
	assert.NotContains(t, h, "X-B", "an announced trailer the upstream did not send stays absent")
}
