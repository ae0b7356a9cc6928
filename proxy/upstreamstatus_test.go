package proxy

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hijackingUpstream answers every call with the raw bytes of answer and closes the connection.
func hijackingUpstream(t *testing.T, answer string) string {
	t.Helper()
	return newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		writeRawAndClose(w, answer)
	}).URL
}

// writeRawAndClose writes raw on w's hijacked connection and closes it: an upstream answer that
// net/http's server would not write itself.
func writeRawAndClose(w http.ResponseWriter, raw string) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	_, _ = buf.WriteString(raw)
	_ = buf.Flush()
	_ = conn.Close()
}

// TestUpstreamStatusPassedOnOrRefused: a status the proxy cannot pass on as a final status (a code
// below 100 or above 999, which net/http's transport reads and its server refuses to write; an
// unasked-for 101) is an upstream exchange without a status line: 502 in the dialect's shape,
// recorded as a connection failure, nothing panics (a fresh-user trial's "HTTP/1.1 099" panicked
// the handler and reached the client as a 200 without its body). A code the proxy can pass on,
// however unusual, is passed on.
func TestUpstreamStatusPassedOnOrRefused(t *testing.T) {
	for _, tt := range []struct {
		name, answer string
		status       int
		category     any
	}{
		{"below 100", "HTTP/1.1 099 Weird\r\nContent-Length: 2\r\n\r\n{}", http.StatusBadGateway, "connection"},
		{"zero", "HTTP/1.1 000 None\r\nContent-Length: 2\r\n\r\n{}", http.StatusBadGateway, "connection"},
		{"unasked-for switch", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nRAWBYTES", http.StatusBadGateway, "connection"},
		{"unusual but valid", "HTTP/1.1 599 Odd\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", 599, "upstream_error"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := newProxyEnv(t, hijackingUpstream(t, tt.answer), nil)
			resp, body, err := env.post(t, "/ng-rollout/st/v1/chat/completions", `{"model":"m","messages":[]}`, nil)
			require.NoError(t, err)
			assert.Equal(t, tt.status, resp.StatusCode, "%s", body)
			rec := env.record(t, "st")
			assert.Equal(t, tt.category, rec["error_category"])
			assert.NotContains(t, env.logs.String(), "panic")
		})
	}
}

// TestForwardAddsNoHeaders: the client gets the upstream's headers and no others: net/http's
// guessed Content-Type and its own Date are kept out when the upstream sent none (a fresh-user
// trial's JSON answer without a Content-Type reached the client as text/plain).
func TestForwardAddsNoHeaders(t *testing.T) {
	env := newProxyEnv(t, hijackingUpstream(t, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Up: 1\r\n\r\n{}"), nil)
	resp, body, err := env.post(t, "/ng-rollout/h/v1/chat/completions", `{"model":"m","messages":[]}`, nil)
	require.NoError(t, err)
	assert.Equal(t, "{}", string(body))
	_, hasType := resp.Header["Content-Type"]
	_, hasDate := resp.Header["Date"]
	assert.False(t, hasType, "no Content-Type: %v", resp.Header)
	assert.False(t, hasDate, "no Date: %v", resp.Header)
	assert.Equal(t, "1", resp.Header.Get("X-Up"))
	// What the upstream sends is kept.
	env = newProxyEnv(t, hijackingUpstream(t, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nDate: Mon, 01 Jan 2024 00:00:00 GMT\r\nContent-Length: 2\r\n\r\n{}"), nil)
	resp, _, err = env.post(t, "/ng-rollout/h/v1/chat/completions", `{"model":"m","messages":[]}`, nil)
	require.NoError(t, err)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.Equal(t, "Mon, 01 Jan 2024 00:00:00 GMT", resp.Header.Get("Date"))
}
