package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

// callState is the per-request state a forwarder shares with the capture layer of the same call. A
// nil *callState is an uncaptured call: report does nothing.
type callState struct {
	mu        sync.Mutex
	transport string      // how the upstream exchange broke, "" when it did not
	synthetic bool        // the response is the proxy's own (no upstream status, SPEC §0 D5)
	tail      *bodyCopier // the upstream body that outlived the terminal grace (bodycopy.go)
	bodyErr   error       // the client's request body broke while it was read, before forwarding

	// terminal: the capture saw the terminal SSE event (SPEC §4.2, §0 D1), so the forwarder starts
	// the terminal grace. early: the grace ended the call (handOff), its upstream body still open.
	terminal, early atomic.Bool
}

// report records how the upstream exchange broke (the first kind reported wins) and whether the
// response is the proxy's own.
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

// reported returns what report recorded.
func (c *callState) reported() (transport string, synthetic bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.transport, c.synthetic
}

// handOff makes t the call's tail: the upstream body outlived the terminal grace, and the capture
// layer ends the call, then lets t forward the rest ([callState.forwardTail]).
func (c *callState) handOff(t *bodyCopier) {
	c.mu.Lock()
	c.tail = t
	c.mu.Unlock()
	c.early.Store(true)
}

// forwardTail forwards, after the record was written and the held bytes released, what the upstream
// still sends on a call the terminal grace ended, unheld and uncaptured ([WithTerminalGrace]); it
// returns at once for every other call. It panics with http.ErrAbortHandler when the upstream body
// breaks or the client goes away, so the client sees the break (SPEC §0 D5).
func (c *callState) forwardTail(cw *captureWriter) {
	c.mu.Lock()
	t := c.tail
	c.tail = nil
	c.mu.Unlock()
	if t == nil {
		return
	}
	cw.passThrough()
	t.forwardTail()
}

// errIdleRead is the cancel cause of an upstream request whose body stayed idle too long.
var errIdleRead = errors.New("upstream body idle-read timeout")

// forwarder is the proxy's own next handler: it forwards the request to one configured upstream
// and copies the response back read by read (DESIGN.md "The proxy's upstream request").
type forwarder struct {
	upstream      *url.URL
	transport     http.RoundTripper
	idleTimeout   time.Duration
	terminalGrace time.Duration // <= 0: wait for the upstream's end (WithTerminalGrace)
	logger        *slog.Logger
	traceProp     propagation.TraceContext
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

// ServeHTTP forwards a call that is not captured (no call state).
func (f *forwarder) ServeHTTP(w http.ResponseWriter, r *http.Request) { f.serve(w, r, nil) }

// serve forwards r and copies the response to w; call is the captured call's state, which the
// handler passes in (nil for a call that is not captured).
func (f *forwarder) serve(w http.ResponseWriter, r *http.Request, call *callState) {
	ctx, cancel := context.WithCancelCause(r.Context())
	// The upstream request lives until serve returns, unless the call's tail owns it (bodycopy.go).
	var c *bodyCopier
	handedOff := false
	defer func() {
		switch {
		case handedOff:
		case c != nil:
			c.close()
		default:
			cancel(nil)
		}
	}()

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
		// The body was read whole already; the model-call span becomes the upstream's parent
		// (baggage stays as the client sent it).
		out.Header.Del("Expect")
		out.Header.Del("Traceparent")
		out.Header.Del("Tracestate")
		f.traceProp.Inject(ctx, propagation.HeaderCarrier(out.Header))
	}
	if _, ok := out.Header["User-Agent"]; !ok {
		out.Header.Set("User-Agent", "") // do not add Go's default
	}
	out = out.WithContext(httptrace.WithClientTrace(ctx, informational(w)))

	resp, err := f.transport.RoundTrip(out)
	if err == nil {
		err = checkStatus(resp)
	}
	if err != nil {
		f.noStatus(w, r, call, err)
		return
	}
	h := w.Header()
	for k, vv := range resp.Header {
		h[k] = append([]string(nil), vv...)
	}
	removeHopHeaders(h)
	// net/http would add a Content-Type it guessed from the body and a Date of its own: the client
	// gets the upstream's headers, not more (a nil value keeps a header out).
	for _, k := range []string{"Content-Type", "Date"} {
		if _, ok := h[k]; !ok {
			h[k] = nil
		}
	}
	announced := announceTrailers(h, resp.Trailer)
	if resp.ContentLength >= 0 && h.Get("Content-Length") == "" && !bodylessStatus(resp.StatusCode) && r.Method != http.MethodHead {
		h.Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	}
	c = newBodyCopier(f, w, r, call, resp, ctx, cancel, announced)
	w.WriteHeader(resp.StatusCode)
	c.flush()
	handedOff = c.run()
}

// checkStatus refuses, closing its body, an upstream answer whose status the proxy cannot pass on
// as the final status of an HTTP/1.1 or HTTP/2 answer: a code outside 100–999 (net/http's
// transport reads any three digits; its server refuses to write these) and 101 Switching
// Protocols, which only answers an upgrade the proxy never forwards (Upgrade is hop-by-hop): the
// exchange counts as one without a status line.
func checkStatus(resp *http.Response) error {
	code := resp.StatusCode
	if code >= 100 && code <= 999 && code != http.StatusSwitchingProtocols {
		return nil
	}
	_ = resp.Body.Close()
	if code == http.StatusSwitchingProtocols {
		return errors.New("the upstream switched protocols (101) although no upgrade was asked for: the proxy does not tunnel upgraded connections")
	}
	return fmt.Errorf("malformed HTTP status code %d in the upstream's status line (want 100 to 999)", code)
}

// noStatus handles an upstream exchange that produced no status line (SPEC §0 D5, D3).
func (f *forwarder) noStatus(w http.ResponseWriter, r *http.Request, call *callState, err error) {
	if r.Context().Err() != nil { // the client left first (SPEC §3.3: D3 with status_code null)
		call.report(transportCancelled, false)
		panic(http.ErrAbortHandler)
	}
	if call != nil && call.bodyErr != nil {
		// The client's body broke (malformed chunked framing, say) with the client still there:
		// the exchange failed on the client's side, not the upstream's.
		call.report(transportConnection, true)
		msg := fmt.Sprintf("invalid_request_body: gymtrace proxy: the request body could not be read whole (%v), so no complete request reached the upstream", call.bodyErr)
		writeRefusal(w, r, http.StatusBadRequest, ErrorBody(r.URL.Path, "invalid_request_error", msg, "invalid_request_body"))
		return
	}
	status, kind, code, typ, what := http.StatusBadGateway, transportConnection, "upstream_unreachable", "api_error", "unreachable"
	if isTimeout(err) {
		status, kind, code, typ, what = http.StatusGatewayTimeout, transportTimeout, "upstream_timeout", "timeout_error", "timed out"
	}
	call.report(kind, true)
	// The code leads the message too: Anthropic's error shape has no code field.
	msg := fmt.Sprintf("%s: gymtrace proxy: upstream %s %s: %v", code, f.upstream.Host, what, err)
	writeJSON(w, status, ErrorBody(r.URL.Path, typ, msg, code))
}
