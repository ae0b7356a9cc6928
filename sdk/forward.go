package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/propagation"
)

// Transport kinds a forwarder reports to the capture layer (they are capture.Category's Transport
// values, SPEC §0 D3/D5).
const (
	transportConnection = "connection"
	transportTimeout    = "timeout"
	transportCancelled  = "cancelled"
	transportException  = "exception"
)

// callState is the per-request state a forwarder shares with the capture layer of the same call.
type callState struct {
	mu        sync.Mutex
	transport string // how the upstream exchange broke, "" when it did not
	synthetic bool   // the response is the proxy's own (no upstream status, SPEC §0 D5)
}

type callStateKey struct{}

func callStateFrom(ctx context.Context) *callState {
	s, _ := ctx.Value(callStateKey{}).(*callState)
	return s
}

func (c *callState) report(kind string, synthetic bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	if c.transport == "" {
		c.transport = kind
	}
	c.synthetic = c.synthetic || synthetic
	c.mu.Unlock()
}

func (c *callState) isSynthetic() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.synthetic
}

func (c *callState) transportKind() string {
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.transport
}

// errIdleRead is the cancel cause of an upstream request whose body stayed idle too long.
var errIdleRead = errors.New("upstream body idle-read timeout")

// forwarder is the proxy's own next handler: it forwards the request to one configured upstream
// and copies the response back read by read (DESIGN.md "The proxy's upstream request").
type forwarder struct {
	upstream    *url.URL
	transport   http.RoundTripper
	idleTimeout time.Duration
	traceProp   propagation.TraceContext
}

func newTransport(cfg *config) *http.Transport {
	d := &net.Dialer{Timeout: cfg.dialTimeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                 nil, // only ever dial the configured upstream
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		DisableCompression:    true, // D4: the client gets the exact bytes
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   1024,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   cfg.dialTimeout,
		ResponseHeaderTimeout: cfg.responseHeaderTimeout,
		ExpectContinueTimeout: time.Second,
	}
}

// hopHeaders are the hop-by-hop headers never forwarded (RFC 9110 §7.6.1).
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// removeHopHeaders deletes the hop-by-hop headers of h, including those named in Connection.
func removeHopHeaders(h http.Header) {
	for _, v := range h.Values("Connection") {
		for _, f := range strings.Split(v, ",") {
			if f = textproto.TrimString(f); f != "" {
				h.Del(f)
			}
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
}

// upstreamURL joins the upstream base and the (stripped) request path, keeping the client's escaping.
func (f *forwarder) upstreamURL(in *url.URL) *url.URL {
	u := *f.upstream
	u.User = nil
	base := strings.TrimSuffix(f.upstream.Path, "/")
	rawBase := strings.TrimSuffix(f.upstream.EscapedPath(), "/")
	u.Path = base + in.Path
	u.RawPath = rawBase + in.EscapedPath()
	if u.RawPath == (&url.URL{Path: u.Path}).EscapedPath() {
		u.RawPath = ""
	}
	u.RawQuery = in.RawQuery
	u.ForceQuery = in.ForceQuery
	u.Fragment, u.RawFragment = "", ""
	return &u
}

func (f *forwarder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	call := callStateFrom(r.Context())
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)

	out := &http.Request{
		Method:        r.Method,
		URL:           f.upstreamURL(r.URL),
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        r.Header.Clone(),
		Body:          r.Body,
		ContentLength: r.ContentLength,
		Host:          f.upstream.Host,
	}
	if out.Header == nil {
		out.Header = make(http.Header)
	}
	if r.ContentLength == 0 {
		out.Body = nil
	}
	removeHopHeaders(out.Header)
	out.Header.Del("X-Forwarded-For")
	if call != nil {
		// The body was read whole already: nothing to wait for.
		out.Header.Del("Expect")
		// The model-call span becomes the upstream's parent; baggage stays as the client sent it.
		out.Header.Del("Traceparent")
		out.Header.Del("Tracestate")
		f.traceProp.Inject(ctx, propagation.HeaderCarrier(out.Header))
	}
	if _, ok := out.Header["User-Agent"]; !ok {
		out.Header.Set("User-Agent", "") // do not add Go's default
	}
	out = out.WithContext(ctx)

	resp, err := f.transport.RoundTrip(out)
	if err != nil {
		f.noStatus(w, r, call, err)
		return
	}
	defer resp.Body.Close()

	h := w.Header()
	for k, vv := range resp.Header {
		h[k] = append([]string(nil), vv...)
	}
	removeHopHeaders(h)
	if resp.ContentLength >= 0 && h.Get("Content-Length") == "" && resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusNotModified && r.Method != http.MethodHead {
		h.Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	}
	w.WriteHeader(resp.StatusCode)

	buf := make([]byte, 32<<10)
	idle := time.AfterFunc(f.idleTimeout, func() { cancel(errIdleRead) })
	defer idle.Stop()
	for {
		idle.Reset(f.idleTimeout)
		n, rerr := resp.Body.Read(buf)
		idle.Stop()
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				// The client is gone (SPEC §0 D3): cancel the upstream request at once.
				cancel(werr)
				call.report(transportCancelled, false)
				panic(http.ErrAbortHandler)
			}
		}
		if rerr == nil {
			continue
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		switch {
		case errors.Is(context.Cause(ctx), errIdleRead):
			call.report(transportTimeout, false)
		case r.Context().Err() != nil:
			call.report(transportCancelled, false)
		default:
			call.report(transportConnection, false)
		}
		panic(http.ErrAbortHandler)
	}
	for k, vv := range resp.Trailer {
		for _, v := range vv {
			h.Add(http.TrailerPrefix+k, v)
		}
	}
}

// noStatus handles an upstream exchange that produced no status line (SPEC §0 D5, D3).
func (f *forwarder) noStatus(w http.ResponseWriter, r *http.Request, call *callState, err error) {
	if r.Context().Err() != nil {
		// The client left before the upstream answered (SPEC §3.3: D3 with status_code null).
		call.report(transportCancelled, false)
		panic(http.ErrAbortHandler)
	}
	status, kind, code, typ := http.StatusBadGateway, transportConnection, "upstream_unreachable", "api_error"
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		status, kind, code, typ = http.StatusGatewayTimeout, transportTimeout, "upstream_timeout", "timeout_error"
	}
	call.report(kind, true)
	what := "unreachable"
	if kind == transportTimeout {
		what = "timed out"
	}
	// The code leads the message too: Anthropic's error shape has no code field.
	msg := fmt.Sprintf("%s: gymtrace proxy: upstream %s %s: %v", code, f.upstream.Host, what, err)
	body := ErrorBody(r.URL.Path, typ, msg, code)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
