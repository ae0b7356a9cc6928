package proxy

import (
	"fmt"
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

// New refuses an upstream base URL ending in /v1, as gymtrace proxy --upstream does: the clients'
// paths already start with /v1 (README "Quick start").
func TestNewProxyUpstreamWithoutV1(t *testing.T) {
	tests := []struct {
		name, upstream string
		wantErr        bool
	}{
		{name: "/v1", upstream: "http://127.0.0.1:1/v1", wantErr: true},
		{name: "/v1/", upstream: "http://127.0.0.1:1/v1/", wantErr: true},
		{name: "under a base path", upstream: "https://example.com/api/v1", wantErr: true},
		{name: "no path", upstream: "http://127.0.0.1:1"},
		{name: "a base path", upstream: "http://127.0.0.1:1/api"},
		{name: "a segment ending in v1", upstream: "http://127.0.0.1:1/apiv1"},
		{name: "/v10", upstream: "http://127.0.0.1:1/v10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := New(tt.upstream, WithCaptureDir(t.TempDir()))
			if !tt.wantErr {
				require.NoError(t, err)
				require.NoError(t, h.Shutdown(t.Context()))
				return
			}
			require.Error(t, err)
			assert.Nil(t, h)
			assert.Equal(t, fmt.Sprintf("proxy: upstream %q: must be the base URL without /v1 (requests keep their /v1/... path)", tt.upstream), err.Error())
		})
	}
}
