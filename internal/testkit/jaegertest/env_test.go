package jaegertest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolveEnv(t *testing.T) {
	full := map[string]string{
		EnvQueryURL: "http://127.0.0.1:16686",
		EnvOTLPHTTP: "http://127.0.0.1:4318/",
		EnvOTLPGRPC: "127.0.0.1:4317",
		EnvPID:      "4242",
	}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for kk, vv := range full {
			m[kk] = vv
		}
		m[k] = v
		return m
	}
	tests := []struct {
		name    string
		env     map[string]string
		want    Jaeger
		wantOK  bool
		wantErr string
	}{
		{name: "unset", env: map[string]string{}},
		{name: "full", env: full, wantOK: true, want: Jaeger{
			QueryURL: "http://127.0.0.1:16686", OTLPHTTPEndpoint: "http://127.0.0.1:4318",
			OTLPGRPCEndpoint: "127.0.0.1:4317", PID: 4242,
		}},
		{name: "minimal", env: map[string]string{EnvQueryURL: "http://localhost:1", EnvOTLPHTTP: "http://[::1]:2"},
			wantOK: true, want: Jaeger{QueryURL: "http://localhost:1", OTLPHTTPEndpoint: "http://[::1]:2"}},
		{name: "query only", env: map[string]string{EnvQueryURL: "http://127.0.0.1:16686"}, wantErr: "set both or neither"},
		{name: "otlp only", env: map[string]string{EnvOTLPHTTP: "http://127.0.0.1:4318"}, wantErr: "set both or neither"},
		{name: "remote query host", env: with(EnvQueryURL, "http://10.0.0.1:16686"), wantErr: "not a loopback address"},
		{name: "any-address host", env: with(EnvOTLPHTTP, "http://0.0.0.0:4318"), wantErr: "not a loopback address"},
		{name: "named host", env: with(EnvQueryURL, "http://jaeger:16686"), wantErr: "not a loopback address"},
		{name: "https", env: with(EnvQueryURL, "https://127.0.0.1:16686"), wantErr: "want http://host:port"},
		{name: "path", env: with(EnvOTLPHTTP, "http://127.0.0.1:4318/v1/traces"), wantErr: "want http://host:port"},
		{name: "no port", env: with(EnvQueryURL, "http://127.0.0.1"), wantErr: "missing port"},
		{name: "port zero", env: with(EnvQueryURL, "http://127.0.0.1:0"), wantErr: "not in 1..65535"},
		{name: "grpc url", env: with(EnvOTLPGRPC, "http://127.0.0.1:4317"), wantErr: EnvOTLPGRPC},
		{name: "grpc remote", env: with(EnvOTLPGRPC, "192.168.1.2:4317"), wantErr: "not a loopback address"},
		{name: "bad pid", env: with(EnvPID, "x"), wantErr: "want a positive process id"},
		{name: "negative pid", env: with(EnvPID, "-1"), wantErr: "want a positive process id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := resolveEnv(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

// fakeTB records Fatalf instead of ending the real test.
type fakeTB struct {
	testing.TB
	fatal string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.fatal = format
	panic(f)
}

// TestFromEnvRequired checks the CI rule: with GYMTRACE_REQUIRE_JAEGER=1 a missing environment fails
// the test instead of starting or skipping.
func TestFromEnvRequired(t *testing.T) {
	t.Setenv(EnvQueryURL, "")
	t.Setenv(EnvOTLPHTTP, "")
	t.Setenv(EnvRequire, "1")
	f := &fakeTB{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil && r != any(f) {
				panic(r)
			}
		}()
		FromEnv(f)
	}()
	assert.Contains(t, f.fatal, "but %s and %s are unset")
}
