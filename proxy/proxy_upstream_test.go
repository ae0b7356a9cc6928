package proxy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A credential in the upstream URL never appears in New's errors.
func TestNewProxyUpstreamErrorsRedactUserInfo(t *testing.T) {
	tests := []struct {
		name, upstream, want string
	}{
		{"user and password", "http://user:sk-PASS@127.0.0.1:18001", `"http://user:xxxxx@127.0.0.1:18001": must not carry user info`},
		{"token as user", "http://sk-PASS@127.0.0.1:18001", `"http://xxxxx@127.0.0.1:18001": must not carry user info`},
		{"with a query", "http://user:sk-PASS@127.0.0.1:18001/?a=1", "must not have a query"},
		{"bad scheme", "ftp://user:sk-PASS@127.0.0.1:18001", "scheme must be http or https"},
		{"unparsable", "http://user:sk-PASS%zz@127.0.0.1:18001", `"http://xxxxx@127.0.0.1:18001": invalid URL escape`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.upstream, WithCaptureDir(t.TempDir()))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "sk-PASS")
		})
	}
}
