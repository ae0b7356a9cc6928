package proxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRefusalClosesConnection: a call the proxy answers itself before reading its request body
// whole (a stalled upload's 408, a 413, a bad rollout id's 400 to a client waiting on
// Expect: 100-continue, a request after Shutdown) closes its connection after the answer, however
// little of the body the client sends: net/http's own drain of the unread body has no deadline, so
// a withholding client used to keep the connection, its goroutine and its descriptor (a
// fresh-user trial's 30 stalled uploads were all still open 330 s after their 408s).
func TestRefusalClosesConnection(t *testing.T) {
	var calls atomic.Int32
	env := newProxyEnv(t, countingUpstream(t, &calls), nil, WithRequestReadTimeout(200*time.Millisecond), WithMaxRequestBytes(1000))
	addr := strings.TrimPrefix(env.srv.URL, "http://")
	for _, tt := range []struct {
		name, req string
		status    int
	}{
		{"stalled upload", "POST /ng-rollout/r1/v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"model\":\"m\"", http.StatusRequestTimeout},
		{"declared over the limit", "POST /ng-rollout/r1/v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n{", http.StatusRequestEntityTooLarge},
		{"bad rollout id, body withheld", "POST /ng-rollout/..%2fx/v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\nExpect: 100-continue\r\n\r\n", http.StatusBadRequest},
		{"bad rollout id header, body withheld", "POST /v1/responses HTTP/1.1\r\nHost: x\r\nX-Gymtrace-Rollout-Id: .x\r\nContent-Length: 20\r\nExpect: 100-continue\r\n\r\n", http.StatusBadRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			defer conn.Close()
			_, err = io.WriteString(conn, tt.req)
			require.NoError(t, err)
			// A guard against a hang, not a measure: the close comes at once.
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(20*time.Second)))
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			assert.Equal(t, tt.status, resp.StatusCode)
			assert.True(t, resp.Close, "Connection: close")
			_, err = br.ReadByte()
			assert.ErrorIs(t, err, io.EOF, "the proxy closed the connection")
		})
	}
	assert.Zero(t, calls.Load(), "nothing forwarded")
	// A request without a body keeps its connection after a refusal.
	resp, err := env.client.Get(env.srv.URL + "/ng-rollout/..%2fx/v1/models")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.False(t, resp.Close)
}

// TestMalformedChunkedBodyIsTheClients: a request whose chunked framing breaks while the client is
// still there is answered 400 naming the client's body, not 502 naming the upstream (a fresh-user
// trial's chunk size "zz" got "upstream unreachable"); the call is still recorded.
func TestMalformedChunkedBodyIsTheClients(t *testing.T) {
	var calls atomic.Int32
	env := newProxyEnv(t, countingUpstream(t, &calls), nil)
	for _, size := range []string{"zz", "-5", "ffffffffffffffffff"} {
		t.Run(size, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(env.srv.URL, "http://"))
			require.NoError(t, err)
			defer conn.Close()
			_, err = io.WriteString(conn, "POST /ng-rollout/chunk/v1/responses HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"+size+"\r\n{}\r\n0\r\n\r\n")
			require.NoError(t, err)
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(20*time.Second))) // a hang guard
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err)
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", b)
			assert.Contains(t, string(b), `"code":"invalid_request_body"`)
			assert.Contains(t, string(b), "the request body could not be read whole")
		})
	}
	recs, _ := env.records(t, "chunk")
	require.Len(t, recs, 3, "every call recorded")
	for _, rec := range recs {
		assert.Equal(t, "connection", rec["error_category"])
		assert.Nil(t, rec["request"])
		assert.Nil(t, rec["request_raw"], "no byte of the body arrived")
	}
}
