package jaegertest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStart starts a private Jaeger through scripts/jaeger.sh, uses it, and checks that it is gone
// once the test that started it has ended.
func TestStart(t *testing.T) {
	var j Jaeger
	t.Run("private instance", func(t *testing.T) {
		j = Start(t)
		require.NotZero(t, j.PID)
		if shared, ok, err := resolveEnv(os.Getenv); err == nil && ok {
			assert.NotEqual(t, shared.QueryURL, j.QueryURL, "private instance must not reuse the shared one's ports")
		}
		assertLoopbackOnly(t, j)
		s := emitSpans(t.Context(), t, httpExporter(t.Context(), t, j), "jaegertest-start")
		got, err := j.WaitForSpans(t.Context(), s.traceID.String(), 2)
		require.NoError(t, err)
		assert.Len(t, got.Spans, 2)
	})
	require.NotZero(t, j.PID)
	deadline := time.Now().Add(5 * time.Second)
	for !processEnded(j.PID) {
		require.True(t, time.Now().Before(deadline), "jaeger pid %d still runs after its test ended", j.PID)
		time.Sleep(50 * time.Millisecond)
	}
}

// processEnded reports whether pid is gone or a zombie waiting for init to reap it.
func processEnded(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	// pid (comm) state ...: comm may hold spaces and parentheses, so read after the last ")".
	i := bytes.LastIndexByte(b, ')')
	return err == nil && i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}
