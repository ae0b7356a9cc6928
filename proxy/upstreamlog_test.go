package proxy

import (
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProxyLogsUnreachableUpstream: when the upstream cannot be reached every client gets a 502 and
// a record (SPEC D5); the proxy also says so in its log, so a dead upstream is never silent.
func TestProxyLogsUnreachableUpstream(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there any more
	env := newProxyEnv(t, dead, nil)
	resp, _, err := env.post(t, "/ng-rollout/r1/v1/chat/completions", `{"model":"m"}`, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
	assert.Equal(t, "connection", env.record(t, "r1")["error_category"])
	assert.Contains(t, env.logs.String(), "upstream call failed")
	assert.Contains(t, env.logs.String(), "error_category=connection")
	assert.Contains(t, env.logs.String(), "rollout_id=r1")
}
