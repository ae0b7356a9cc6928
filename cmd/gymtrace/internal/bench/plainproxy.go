package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// NewPlainProxy returns the bench's baseline: a net/http/httputil.ReverseProxy to upstream without
// capture. It forwards the request path unchanged (the /ng-rollout/<id> prefix included; the bench
// upstream accepts it), sets Host to the upstream's, adds no X-Forwarded-* headers and flushes every
// write at once, as the capture proxy does. Its transport matches the capture proxy's own (no proxy,
// no transparent decompression, up to 1024 idle connections to the upstream) so that the comparison
// measures capture, not connection handling. Proxy errors are logged to errLog (nil: discarded).
// upstream must be an absolute http(s) URL; the error names it. The handler is safe for concurrent
// use.
//
// Each request enables full duplex on its connection (http.ResponseController.EnableFullDuplex):
// the HTTP/1 server otherwise closes the request body once the response starts, and the transport's
// final read of a request body it has already sent in full then fails and tears down the upstream
// connection mid-answer (golang/go#40747), cutting a few streams per thousand.
func NewPlainProxy(upstream string, errLog io.Writer) (http.Handler, error) {
	u, err := url.Parse(upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("bench plain proxy: upstream %q must be an absolute http:// or https:// URL", upstream)
	}
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if errLog == nil {
		errLog = io.Discard
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
		},
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         d.DialContext,
			ForceAttemptHTTP2:   true,
			DisableCompression:  true,
			MaxIdleConns:        1024,
			MaxIdleConnsPerHost: 1024,
			IdleConnTimeout:     90 * time.Second,
		},
		FlushInterval: -1,
		ErrorLog:      log.New(errLog, "bench plain proxy: ", log.LstdFlags),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex()
		rp.ServeHTTP(w, r)
	}), nil
}

// ServePlainProxy runs [NewPlainProxy] on listen (HOST:PORT; port 0 picks a free port), writes one
// line "listening on http://HOST:PORT" to ready when it accepts connections (the same ready line as
// `gymtrace proxy`), logs proxy and server errors to errLog (nil: discarded), and serves until ctx is
// done; it then stops accepting and waits for the calls in flight. It returns nil after such a stop,
// or the error that kept it from listening or serving.
func ServePlainProxy(ctx context.Context, upstream, listen string, ready, errLog io.Writer) error {
	if errLog == nil {
		errLog = io.Discard
	}
	h, err := NewPlainProxy(upstream, errLog)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("bench plain proxy: listen: %w", err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          log.New(errLog, "bench plain proxy: ", log.LstdFlags),
	}
	if _, err := fmt.Fprintf(ready, "listening on http://%s\n", ln.Addr()); err != nil {
		_ = ln.Close()
		return fmt.Errorf("bench plain proxy: %w", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("bench plain proxy: serve: %w", err)
	case <-ctx.Done():
	}
	serr := srv.Shutdown(context.Background())
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		serr = errors.Join(serr, err)
	}
	if serr != nil {
		return fmt.Errorf("bench plain proxy: shutdown: %w", serr)
	}
	return nil
}
