package fleet

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/gymtrace/gymtrace/internal/urlport"
)

// Protocols of an [Endpoint], as OTEL_EXPORTER_OTLP_PROTOCOL names them.
const (
	ProtocolHTTPProtobuf = "http/protobuf"
	ProtocolGRPC         = "grpc"
)

// Endpoint is one capture gateway.
//
// Key is the normalized form that [Rank] hashes: "scheme://host:port" plus, for http/protobuf, the
// base path without a trailing slash and without "/v1/traces" (e.g. "http://10.0.0.7:4318",
// "https://gw.example:443/otlp"); the scheme and host are lowercase and the port is explicit (80
// for http, 443 for https when the URL names none, as the OTLP exporters connect). URL is the
// endpoint to export to: for http/protobuf the traces URL (Key + "/v1/traces"), for grpc Key
// itself. ServerName is the host name to verify a TLS certificate against when [Expand] replaced
// the host by one of its addresses ("" otherwise).
type Endpoint struct {
	Key        string
	URL        string
	Protocol   string
	ServerName string
}

// ParseEndpoints parses and normalizes gateway endpoints: each value may hold several,
// comma-separated (surrounding spaces ignored), so a repeatable flag and a comma-separated list
// give the same set. Every endpoint is an absolute http:// or https:// URL without user info,
// query or fragment, whose port (when it names one) is a number from 1 to 65535; a grpc endpoint
// has no path. Duplicates (after normalization) are refused,
// as is an empty set: the error names the value and the rule.
func ParseEndpoints(values []string, protocol string) ([]Endpoint, error) {
	if protocol != ProtocolHTTPProtobuf && protocol != ProtocolGRPC {
		return nil, fmt.Errorf("fleet: protocol %q must be %s or %s", protocol, ProtocolHTTPProtobuf, ProtocolGRPC)
	}
	var eps []Endpoint
	seen := map[string]string{}
	for _, v := range values {
		for _, raw := range strings.Split(v, ",") {
			raw = strings.TrimSpace(raw)
			if raw == "" {
				return nil, fmt.Errorf("fleet: endpoint list %q holds an empty endpoint", v)
			}
			ep, err := parseEndpoint(raw, protocol)
			if err != nil {
				return nil, err
			}
			if first, ok := seen[ep.Key]; ok {
				return nil, fmt.Errorf("fleet: endpoint %q names the same gateway as %q (%s): each gateway once", raw, first, ep.Key)
			}
			seen[ep.Key] = raw
			eps = append(eps, ep)
		}
	}
	if len(eps) == 0 {
		return nil, fmt.Errorf("fleet: no gateway endpoint given")
	}
	return eps, nil
}

func parseEndpoint(raw, protocol string) (Endpoint, error) {
	u, err := url.Parse(raw)
	if err != nil || (!strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https")) || u.Host == "" {
		return Endpoint{}, fmt.Errorf("fleet: endpoint %q must be an absolute http:// or https:// URL", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return Endpoint{}, fmt.Errorf("fleet: endpoint %q must not carry user info, a query or a fragment", raw)
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if !urlport.Valid(port) {
		return Endpoint{}, fmt.Errorf("fleet: endpoint %q: port %q must be a number from 1 to 65535", raw, port)
	}
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	base := strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/v1/traces")
	if protocol == ProtocolGRPC && base != "" {
		return Endpoint{}, fmt.Errorf("fleet: endpoint %q: a grpc endpoint is http(s)://HOST:PORT without a path", raw)
	}
	return newEndpoint(scheme, host, port, base, protocol, ""), nil
}

func newEndpoint(scheme, host, port, base, protocol, serverName string) Endpoint {
	key := scheme + "://" + net.JoinHostPort(host, port) + base
	ep := Endpoint{Key: key, URL: key, Protocol: protocol, ServerName: serverName}
	if protocol == ProtocolHTTPProtobuf {
		ep.URL = key + "/v1/traces"
	}
	return ep
}

// Resolver looks up a host name's addresses (net.Resolver's LookupHost).
type Resolver interface {
	LookupHost(ctx context.Context, host string) ([]string, error)
}

// Expand replaces every endpoint whose host is a name resolving to several gateways (a headless
// service) by one endpoint per address (sorted, so every proxy derives the same set), keeping scheme,
// port and path, and setting ServerName for TLS. A name has several gateways when it resolves to
// more than one IPv4 or more than one IPv6 address; the family with more addresses is used (IPv4 on
// a tie), so a dual-stack host such as localhost (127.0.0.1 and ::1) stays one gateway. Endpoints
// whose host is an IP address, or a name of one gateway, are kept as configured (their Key keeps the
// name). Names are resolved once, when Expand runs: a changed set needs a new Expand (for the proxy,
// a restart). Duplicates that expansion creates are
// merged. A name that does not resolve is an error naming it. The result keeps the input order,
// each expanded endpoint's addresses in its place.
func Expand(ctx context.Context, r Resolver, eps []Endpoint) ([]Endpoint, error) {
	var out []Endpoint
	seen := map[string]bool{}
	add := func(ep Endpoint) {
		if !seen[ep.Key] {
			seen[ep.Key] = true
			out = append(out, ep)
		}
	}
	for _, ep := range eps {
		u, _ := url.Parse(ep.Key)
		host := u.Hostname()
		if net.ParseIP(host) != nil {
			add(ep)
			continue
		}
		addrs, err := r.LookupHost(ctx, host)
		if err != nil {
			return nil, fmt.Errorf("fleet: endpoint %s: resolve %q: %w", ep.Key, host, err)
		}
		addrs = gatewayAddrs(addrs)
		if len(addrs) <= 1 {
			add(ep)
			continue
		}
		for _, a := range addrs {
			add(newEndpoint(u.Scheme, a, u.Port(), u.Path, ep.Protocol, host))
		}
	}
	return out, nil
}

// gatewayAddrs returns the sorted, distinct addresses of the family that has more of them (IPv4 on a
// tie), or nil when no family has more than one.
func gatewayAddrs(addrs []string) []string {
	var v4, v6 []string
	for _, a := range addrs {
		ip := net.ParseIP(a)
		switch {
		case ip == nil:
		case ip.To4() != nil:
			v4 = append(v4, ip.String())
		default:
			v6 = append(v6, ip.String())
		}
	}
	v4 = slices.Compact(slices.Sorted(slices.Values(v4)))
	v6 = slices.Compact(slices.Sorted(slices.Values(v6)))
	if len(v6) > len(v4) {
		v4 = v6
	}
	if len(v4) <= 1 {
		return nil
	}
	return v4
}
