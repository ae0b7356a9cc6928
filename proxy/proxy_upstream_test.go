package proxy

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// New names what is wrong with the upstream URL; a credential in it never appears in its errors.
func TestNewProxyUpstreamErrorsRedactUserInfo(t *testing.T) {
	tests := []struct {
		name, upstream, want string
	}{
		{"user and password", "http://user:sk-PASS@127.0.0.1:18001", `"http://user:xxxxx@127.0.0.1:18001": must not carry user info`},
		{"token as user", "http://sk-PASS@127.0.0.1:18001", `"http://xxxxx@127.0.0.1:18001": must not carry user info`},
		{"with a query", "http://user:sk-PASS@127.0.0.1:18001/?a=1", "must not have a query"},
		{"bad scheme", "ftp://user:sk-PASS@127.0.0.1:18001", "scheme must be http or https"},
		{"unparsable", "http://user:sk-PASS%zz@127.0.0.1:18001", `"http://xxxxx@127.0.0.1:18001": invalid URL escape`},
		{"port out of range", "http://127.0.0.1:99999", `"http://127.0.0.1:99999": port "99999" must be a number from 1 to 65535`},
		{"port 0", "http://127.0.0.1:0/api", `port "0" must be a number from 1 to 65535`},
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

// New refuses an upstream base URL ending in /v1 in any case, as gymtrace proxy --upstream does:
// the clients' paths already start with /v1 (README "Quick start").
func TestNewProxyUpstreamWithoutV1(t *testing.T) {
	tests := []struct {
		name, upstream string
		wantErr        bool
	}{
		{name: "/v1", upstream: "http://127.0.0.1:1/v1", wantErr: true},
		{name: "/v1/", upstream: "http://127.0.0.1:1/v1/", wantErr: true},
		{name: "under a base path", upstream: "https://example.com/api/v1", wantErr: true},
		{name: "/V1: the same doubled segment in another case", upstream: "http://127.0.0.1:18001/V1", wantErr: true},
		{name: "/api/V1/", upstream: "http://127.0.0.1:1/api/V1/", wantErr: true},
		{name: "highest port", upstream: "http://127.0.0.1:65535"},
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
