package proxy

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProxyForwardsInformational: a 103 Early Hints the upstream sends before its answer reaches
// the client, with its Link header and without its hop-by-hop ones, on the captured path and on a
// path that is not captured (a user trial saw it dropped); the final response keeps its own
// headers, and the record is the final response's.
func TestProxyForwardsInformational(t *testing.T) {
	const answer = `{"id":"chatcmpl-1","object":"chat.completion","model":"m","choices":[]}`
	up := newUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.Header().Set("Keep-Alive", "timeout=5")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		w.Header().Del("Keep-Alive")
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answer)
	})
	env := newProxyEnv(t, up.URL, nil)
	for _, path := range []string{"/ng-rollout/early/v1/chat/completions", "/v1/models"} {
		t.Run(path, func(t *testing.T) {
			var mu sync.Mutex
			var got []textproto.MIMEHeader
			var codes []int
			ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
				Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
					mu.Lock()
					defer mu.Unlock()
					codes, got = append(codes, code), append(got, h)
					return nil
				},
			})
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, env.srv.URL+path, strings.NewReader(`{"model":"m","messages":[]}`))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			resp, err := env.client.Do(req)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, answer, string(body))
			assert.Empty(t, resp.Header.Get("Link"), "the 1xx's headers are not the final response's")
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, []int{http.StatusEarlyHints}, codes)
			assert.Equal(t, "</style.css>; rel=preload", got[0].Get("Link"))
			assert.Empty(t, got[0].Get("Keep-Alive"), "hop-by-hop headers are not forwarded")
		})
	}
	rec := env.record(t, "early")
	assert.Equal(t, json.Number("200"), rec["status_code"])
	assert.Nil(t, rec["error_category"])
}
