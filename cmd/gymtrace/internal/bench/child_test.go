package bench

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChildEnv(t *testing.T) {
	got := childEnv([]string{"PATH=/bin", "OTEL_EXPORTER_OTLP_ENDPOINT=http://x", "HOME=/h", "OTEL_SERVICE_NAME=s", "MY_OTEL_X=1"})
	assert.Equal(t, []string{"PATH=/bin", "HOME=/h", "MY_OTEL_X=1"}, got)
}

func TestTailBuffer(t *testing.T) {
	b := newTailBuffer(8)
	assert.Equal(t, "(empty)", b.String())
	_, _ = b.Write([]byte("abc"))
	assert.Equal(t, "abc", b.String())
	n, err := b.Write([]byte("defghijkl"))
	require.NoError(t, err)
	assert.Equal(t, 9, n)
	assert.Equal(t, "...efghijkl", b.String())
}

func TestStartChildFailures(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		wantErr string
	}{
		{"wrong ready line", `echo "ready at 8000"; echo oops >&2; exec sleep 5`, `ready line "ready at 8000\n"`},
		{"exits at once", `echo broken >&2; exit 3`, "broken"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := startChild(t.Context(), exec.Command("/bin/sh", "-c", tc.script))
			require.Error(t, err)
			assert.Nil(t, c)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
	t.Run("stop reports an unclean exit", func(t *testing.T) {
		c, err := startChild(t.Context(), exec.Command("/bin/sh", "-c", `trap 'echo bye >&2; exit 4' TERM; echo "listening on http://127.0.0.1:1"; while :; do sleep 0.01; done`))
		require.NoError(t, err)
		assert.Equal(t, "http://127.0.0.1:1", c.url)
		err = c.stop()
		require.Error(t, err)
		assert.True(t, strings.Contains(err.Error(), "exit status 4") && strings.Contains(err.Error(), "bye"), err.Error())
	})
}
