package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/rollout"
)

// SPEC §0 D12, last paragraph: the proxy answers a prefix whose id or rest exists only after
// percent-decoding a separator, and a rest with a dot segment, with the 400 of an invalid id — for
// captured and uncaptured paths alike — and forwards and writes nothing.
func TestProxyRefusesEncodedSeparatorsAndDotSegments(t *testing.T) {
	var upstreamCalls atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstreamCalls.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"x","object":"chat.completion","model":"m","choices":[]}`)
	}))
	defer up.Close()
	dir := t.TempDir()
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	p, err := New(up.URL, WithStore(store), WithLogger(newTextLogger(io.Discard)))
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	client := &http.Client{Transport: &http.Transport{}}
	defer func() {
		client.CloseIdleConnections()
		srv.Close()
		require.NoError(t, p.Shutdown(t.Context()))
	}()

	tests := []struct {
		name      string
		target    string
		anthropic bool // the body has the Messages shape
		message   string
	}{
		{name: "id %2F", target: "/ng-rollout/a%2Fb/v1/chat/completions", message: `"a/b"`},
		{name: "id %2f", target: "/ng-rollout/a%2fb/v1/responses", message: `"a%2fb"`},
		{name: "id %5C", target: "/ng-rollout/a%5Cb/v1/responses", message: `"a%5Cb"`},
		{name: "id %5c", target: "/ng-rollout/a%5cb/v1/models", message: `"a%5cb"`},
		{name: "id %2F on messages", target: "/ng-rollout/a%2Fb/v1/messages", anthropic: true, message: "percent-encoded separator"},
		{name: "rest slash encoded", target: "/ng-rollout/abc%2Fv1%2Fresponses", message: `"abc%2Fv1%2Fresponses"`},
		{name: "token segment %2F", target: "/ng-rollout/abc/training-token-capture%2Fv1/responses", message: `"training-token-capture%2Fv1"`},
		{name: "dot dot", target: "/ng-rollout/3-1/../v1/responses", message: `".." segment`},
		{name: "dot", target: "/ng-rollout/3-1/v1/./responses", message: `".." segment`},
		{name: "encoded dot dot", target: "/ng-rollout/3-1/v1/%2e%2e/models", message: `".." segment`},
		{name: "encoded upper dot", target: "/ng-rollout/3-1/%2E/v1/messages", message: `".." segment`},
		{name: "dot dot after the token segment", target: "/ng-rollout/3-1/training-token-capture/../v1/chat/completions", message: `".." segment`},
		// Issue #14 finding 8, the attack's own paths: before D12's last paragraph the first was
		// forwarded uncaptured as /b/v1/responses, the second reached the upstream with its dot segments.
		{name: "attack a%2Fb", target: "/ng-rollout/a%2Fb/v1/responses", message: `"a/b"`},
		{name: "attack ok/../x", target: "/ng-rollout/ok/../x/v1/responses", message: `".." segment`},
		{name: "attack ok/../x on chat", target: "/ng-rollout/ok/../x/v1/chat/completions", message: `".." segment`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+tt.target, strings.NewReader(`{"model":"m"}`))
			require.NoError(t, err)
			require.Equal(t, tt.target, req.URL.EscapedPath(), "the client sends the target as written")
			resp, err := client.Do(req)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())

			assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			var shape struct {
				Type  string `json:"type"`
				Error struct {
					Type    string  `json:"type"`
					Message string  `json:"message"`
					Code    *string `json:"code"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal(body, &shape), "%s", body)
			assert.Equal(t, "invalid_request_error", shape.Error.Type)
			assert.Contains(t, shape.Error.Message, tt.message)
			if tt.anthropic {
				assert.Equal(t, "error", shape.Type)
				assert.Nil(t, shape.Error.Code)
			} else {
				require.NotNil(t, shape.Error.Code, "%s", body)
				assert.Equal(t, "invalid_rollout_id", *shape.Error.Code)
			}
			pp, ok, perr := rollout.ParseRequestPath(req.URL.Path, req.URL.EscapedPath())
			require.True(t, ok)
			_, want := InvalidRolloutIDBody(pp.Rest, perr)
			assert.Equal(t, string(want), string(body), "the body InvalidRolloutIDBody gives")
		})
	}
	assert.Zero(t, upstreamCalls.Load(), "nothing was forwarded")
	assert.Empty(t, captureFiles(t, dir), "nothing was written")

	// The same paths without the encoded separator or the dot segment are served.
	resp, err := client.Post(srv.URL+"/ng-rollout/a..b/v1/x..y", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, int64(1), upstreamCalls.Load())
}
