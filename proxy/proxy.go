package proxy

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gymtrace/gymtrace/internal/urlport"
	"github.com/gymtrace/gymtrace/internal/urlredact"
	"github.com/gymtrace/gymtrace/semconv"
)

// New returns the capture proxy: [CaptureHandler] over gymtrace's own forwarder to the model
// server at upstream (DESIGN.md "The proxy's upstream request"). upstream is an absolute http or https
// base URL without query or fragment (for example "http://127.0.0.1:8000"); each request goes to the
// upstream base path followed by the stripped request path (with the client's escaping) and query,
// so a base path ending in /v1 ("http://127.0.0.1:8000/v1") is refused: the clients' paths already
// start with /v1 (the rule of gymtrace proxy --upstream).
//
// The forwarder only ever dials upstream: CONNECT and absolute-form request targets naming another
// host are refused (405 / 400). It drops hop-by-hop headers (and those named in Connection), adds no
// X-Forwarded-For, sets Host to the upstream's, passes Accept-Encoding through and never decompresses
// (SPEC §0 D4), and on captured calls replaces traceparent with the model-call span's context
// (baggage is kept). Authorization headers are forwarded but never captured. Each upstream read is
// written and flushed to the client at once.
//
// Upstream failures (SPEC §0 D3, D5): no status line (dial error or timeout) → the proxy answers
// 502/504 with a dialect-shaped JSON error (code upstream_unreachable / upstream_timeout) and records
// connection / timeout with status_code null; a read error after the status line → the client's
// response is aborted and the call recorded as connection, timeout (idle read, [WithIdleReadTimeout])
// or cancelled (the client left; the upstream request is cancelled at once).
//
// Upstream trailers (declared with a Trailer header or not) are forwarded after the body. An
// upstream that keeps the response open after the terminal SSE event does not withhold the answer:
// after [WithTerminalGrace] the call is recorded and the held bytes released (see there).
//
// Options are those of CaptureHandler plus [WithDialTimeout], [WithResponseHeaderTimeout],
// [WithIdleReadTimeout] and [WithTerminalGrace]. The error names the invalid upstream (its user info
// redacted: a credential in the URL is never printed) or option.
func New(upstream string, opts ...Option) (*Handler, error) {
	u, err := parseUpstream(upstream)
	if err != nil {
		return nil, err
	}
	cfg := newConfig(opts)
	f := &forwarder{upstream: u, transport: newTransport(&cfg), idleTimeout: cfg.idleReadTimeout, terminalGrace: cfg.terminalGrace, logger: cfg.logger}
	h, err := newHandler(f, cfg)
	if err != nil {
		return nil, err
	}
	h.fwd = f
	h.serverAttr = append(h.serverAttr, semconv.ServerAddressKey.String(u.Hostname()))
	if p, err := strconv.Atoi(portOf(u)); err == nil {
		h.serverAttr = append(h.serverAttr, semconv.ServerPortKey.Int(p))
	}
	return h, nil
}

// parseUpstream validates the upstream base URL. Its errors show the URL with any user info
// redacted (internal/urlredact), so a credential in it is never printed.
func parseUpstream(upstream string) (*url.URL, error) {
	shown := urlredact.String(upstream)
	u, err := url.Parse(upstream)
	if err != nil {
		return nil, fmt.Errorf("proxy: upstream %q: %w", shown, urlredact.Error(err))
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("proxy: upstream %q: scheme must be http or https", shown)
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("proxy: upstream %q: must name a host", shown)
	case !urlport.Valid(u.Port()):
		return nil, fmt.Errorf("proxy: upstream %q: port %q must be a number from 1 to 65535", shown, u.Port())
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, fmt.Errorf("proxy: upstream %q: must not have a query or fragment", shown)
	case u.User != nil:
		return nil, fmt.Errorf("proxy: upstream %q: must not carry user info (send credentials as headers)", shown)
	case endsInV1(u.Path):
		return nil, fmt.Errorf("proxy: upstream %q: must be the base URL without /v1 (requests keep their /v1/... path)", shown)
	}
	return u, nil
}

// endsInV1 reports whether an upstream base path ends in the segment /v1, in any case (trailing
// slashes aside): the clients' paths already start with /v1, so such a base would forward to
// /v1/v1/... (or /V1/v1/...), which OpenAI-compatible servers do not serve: their routes are
// case-sensitive, so /V1 is the same mistake, not a different base (the rule of gymtrace proxy
// --upstream too).
func endsInV1(path string) bool {
	p := strings.ToLower(strings.TrimRight(path, "/"))
	return p == "/v1" || strings.HasSuffix(p, "/v1")
}

// accepts refuses requests the proxy must not act on: CONNECT (405) and absolute-form targets that
// name a host other than the upstream (400). It answers them itself and reports false.
func (f *forwarder) accepts(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodConnect {
		w.Header().Set("Allow", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS")
		writeRefusal(w, r, http.StatusMethodNotAllowed, ErrorBody(r.URL.Path, "invalid_request_error", "gymtrace proxy: CONNECT is not supported: the proxy forwards only to its configured upstream", "method_not_allowed"))
		return false
	}
	if r.URL.Host != "" && !sameHost(r.URL, f.upstream) {
		writeRefusal(w, r, http.StatusBadRequest, ErrorBody(r.URL.Path, "invalid_request_error",
			fmt.Sprintf("gymtrace proxy: request target names host %q: the proxy forwards only to its configured upstream %q", r.URL.Host, f.upstream.Host), "misdirected_request"))
		return false
	}
	return true
}

func sameHost(a, b *url.URL) bool {
	return strings.EqualFold(a.Hostname(), b.Hostname()) && portOf(a) == portOf(b)
}

// portOf returns u's port, or its scheme's default (443 for https, else 80).
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}
