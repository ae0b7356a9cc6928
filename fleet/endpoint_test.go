package fleet

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseEndpoints(t *testing.T) {
	tests := []struct {
		name     string
		values   []string
		protocol string
		keys     []string
		urls     []string
		wantErr  string
	}{
		{name: "repeatable and comma list give one set", values: []string{"http://127.0.0.1:4318", " http://127.0.0.2:4318 , http://127.0.0.3:4318/"},
			protocol: ProtocolHTTPProtobuf,
			keys:     []string{"http://127.0.0.1:4318", "http://127.0.0.2:4318", "http://127.0.0.3:4318"},
			urls:     []string{"http://127.0.0.1:4318/v1/traces", "http://127.0.0.2:4318/v1/traces", "http://127.0.0.3:4318/v1/traces"}},
		{name: "scheme host case, default port, traces path", values: []string{"HTTP://GW.Example/otlp/v1/traces", "https://gw.example"},
			protocol: ProtocolHTTPProtobuf,
			keys:     []string{"http://gw.example:80/otlp", "https://gw.example:443"},
			urls:     []string{"http://gw.example:80/otlp/v1/traces", "https://gw.example:443/v1/traces"}},
		{name: "ipv6", values: []string{"http://[::1]:4318"}, protocol: ProtocolHTTPProtobuf,
			keys: []string{"http://[::1]:4318"}, urls: []string{"http://[::1]:4318/v1/traces"}},
		{name: "grpc", values: []string{"http://127.0.0.1:4317,http://127.0.0.1:4417"}, protocol: ProtocolGRPC,
			keys: []string{"http://127.0.0.1:4317", "http://127.0.0.1:4417"}, urls: []string{"http://127.0.0.1:4317", "http://127.0.0.1:4417"}},
		{name: "same gateway twice", values: []string{"http://h:4318", "http://H:4318/"}, protocol: ProtocolHTTPProtobuf,
			wantErr: `endpoint "http://H:4318/" names the same gateway as "http://h:4318" (http://h:4318): each gateway once`},
		{name: "empty in list", values: []string{"http://h:4318,,http://g:4318"}, protocol: ProtocolHTTPProtobuf,
			wantErr: `endpoint list "http://h:4318,,http://g:4318" holds an empty endpoint`},
		{name: "none", protocol: ProtocolHTTPProtobuf, wantErr: "no gateway endpoint given"},
		{name: "not a URL", values: []string{"127.0.0.1:4318"}, protocol: ProtocolHTTPProtobuf,
			wantErr: `endpoint "127.0.0.1:4318" must be an absolute http:// or https:// URL`},
		{name: "query", values: []string{"http://h:4318/?x=1"}, protocol: ProtocolHTTPProtobuf,
			wantErr: "must not carry user info, a query or a fragment"},
		{name: "port out of range", values: []string{"http://127.0.0.1:4318,http://127.0.0.1:99999"}, protocol: ProtocolHTTPProtobuf,
			wantErr: `endpoint "http://127.0.0.1:99999": port "99999" must be a number from 1 to 65535`},
		{name: "port 0", values: []string{"http://127.0.0.1:0"}, protocol: ProtocolGRPC,
			wantErr: `endpoint "http://127.0.0.1:0": port "0" must be a number from 1 to 65535`},
		{name: "grpc with path", values: []string{"http://h:4317/otlp"}, protocol: ProtocolGRPC,
			wantErr: "a grpc endpoint is http(s)://HOST:PORT without a path"},
		{name: "bad protocol", values: []string{"http://h:4318"}, protocol: "http/json",
			wantErr: `protocol "http/json" must be http/protobuf or grpc`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eps, err := ParseEndpoints(tt.values, tt.protocol)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			var keys, urls []string
			for _, ep := range eps {
				keys, urls = append(keys, ep.Key), append(urls, ep.URL)
				assert.Equal(t, tt.protocol, ep.Protocol)
			}
			assert.Equal(t, tt.keys, keys)
			assert.Equal(t, tt.urls, urls)
		})
	}
}

type mapResolver map[string][]string

func (m mapResolver) LookupHost(_ context.Context, host string) ([]string, error) {
	if a, ok := m[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func TestExpand(t *testing.T) {
	eps, err := ParseEndpoints([]string{"https://gateways.ns.svc:4318/otlp", "http://10.0.0.9:4318", "http://single:4318", "http://10.0.0.2:4318"}, ProtocolHTTPProtobuf)
	require.NoError(t, err)
	r := mapResolver{"gateways.ns.svc": {"10.0.0.3", "10.0.0.2", "10.0.0.2", "fd00::1"}, "single": {"10.0.0.5", "fd00::5"}}
	got, err := Expand(context.Background(), r, eps)
	require.NoError(t, err)
	assert.Equal(t, []Endpoint{
		{Key: "https://10.0.0.2:4318/otlp", URL: "https://10.0.0.2:4318/otlp/v1/traces", Protocol: ProtocolHTTPProtobuf, ServerName: "gateways.ns.svc"},
		{Key: "https://10.0.0.3:4318/otlp", URL: "https://10.0.0.3:4318/otlp/v1/traces", Protocol: ProtocolHTTPProtobuf, ServerName: "gateways.ns.svc"},
		{Key: "http://10.0.0.9:4318", URL: "http://10.0.0.9:4318/v1/traces", Protocol: ProtocolHTTPProtobuf},
		{Key: "http://single:4318", URL: "http://single:4318/v1/traces", Protocol: ProtocolHTTPProtobuf},
		{Key: "http://10.0.0.2:4318", URL: "http://10.0.0.2:4318/v1/traces", Protocol: ProtocolHTTPProtobuf},
	}, got, "an https address keeps its scheme, so it differs from the plain http one")

	r["v6.svc"] = []string{"fd00::2", "fd00::1", "10.0.0.1"}
	got, err = Expand(context.Background(), r, []Endpoint{{Key: "http://v6.svc:4318", URL: "http://v6.svc:4318/v1/traces", Protocol: ProtocolHTTPProtobuf}})
	require.NoError(t, err)
	assert.Equal(t, []string{"http://[fd00::1]:4318", "http://[fd00::2]:4318"}, []string{got[0].Key, got[1].Key})

	_, err = Expand(context.Background(), r, []Endpoint{{Key: "http://missing:4318", Protocol: ProtocolHTTPProtobuf}})
	require.ErrorContains(t, err, `endpoint http://missing:4318: resolve "missing": no such host`)
}
