package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// upstreamShutdownTimeout bounds the graceful stop of an upstream before it is closed hard.
const upstreamShutdownTimeout = 5 * time.Second

// upstream is the in-process model server of one workload: an HTTP server on 127.0.0.1 answering
// every POST to a path ending in /v1/chat/completions with the workload's answer (or, for a token
// workload, the fake vLLM engine answering it).
type upstream struct {
	url    string // http://127.0.0.1:PORT
	srv    *http.Server
	served chan error
}

// startUpstream starts the upstream of w on a free 127.0.0.1 port.
func startUpstream(w *Workload) (*upstream, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bench upstream: listen: %w", err)
	}
	u := &upstream{
		url: "http://" + ln.Addr().String(),
		srv: &http.Server{
			Handler:           w.upstreamHandler(),
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          log.New(io.Discard, "", 0),
		},
		served: make(chan error, 1),
	}
	go func() { u.served <- u.srv.Serve(ln) }()
	return u, nil
}

// close stops the upstream: gracefully (streams in flight finish) within upstreamShutdownTimeout,
// then by closing every connection. It waits until the server goroutine has returned.
func (u *upstream) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), upstreamShutdownTimeout)
	defer cancel()
	err := u.srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, u.srv.Close())
	}
	if serr := <-u.served; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("bench upstream: stop: %w", err)
	}
	return nil
}

// upstreamHandler is w's upstream: its handler, else [workloadHandler].
func (w *Workload) upstreamHandler() http.Handler {
	if w.handler != nil {
		return w.handler
	}
	return workloadHandler(w)
}

// workloadHandler answers POST .../v1/chat/completions with w's answer after reading the request
// body; anything else gets 404 or 405. Streams pace their events at w.Gap from the first event
// (drift-free: a late event does not push back the later ones) and stop when the client goes away.
func workloadHandler(w *Workload) http.Handler {
	contentLength := strconv.Itoa(len(w.Response))
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/v1/chat/completions") {
			http.NotFound(rw, r)
			return
		}
		if r.Method != http.MethodPost {
			rw.Header().Set("Allow", http.MethodPost)
			http.Error(rw, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return
		}
		h := rw.Header()
		if !w.Stream() {
			h.Set("Content-Type", "application/json")
			h.Set("Content-Length", contentLength)
			rw.WriteHeader(http.StatusOK)
			_, _ = rw.Write(w.Response)
			return
		}
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
		rw.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(rw)
		timer := time.NewTimer(0)
		defer timer.Stop()
		<-timer.C
		start := time.Now()
		for i, ev := range w.Events {
			if i > 0 {
				timer.Reset(time.Until(start.Add(time.Duration(i) * w.Gap)))
				select {
				case <-timer.C:
				case <-r.Context().Done():
					return
				}
			}
			if _, err := rw.Write(ev); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
	})
}
