package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
	"github.com/gymtrace/gymtrace/proxy"
)

// ModelServerName is the model server name the demo's proxy records as model_ref.name (SPEC §3.1).
const ModelServerName = "policy_model"

// chunkDelay is the fake model's pause between two streamed events, so streamed calls have a
// time to first token visibly below their total latency.
const chunkDelay = time.Millisecond

// shutdownTimeout bounds stopping the servers once the rollouts are done.
const shutdownTimeout = 10 * time.Second

// stack is the demo's running servers: the fake model server and the capture proxy in front of it,
// each a net/http server on its own 127.0.0.1 port.
type stack struct {
	modelURL, proxyURL string

	model   *http.Server
	proxy   *http.Server
	handler *proxy.Handler
	serving sync.WaitGroup // the two Serve goroutines

	mu       sync.Mutex
	serveErr error // the first unexpected Serve error
}

// newModelServer is the demo's model server: the fake model, streaming with chunkDelay between
// events.
func newModelServer() http.Handler { return fakemodel.New(fakemodel.WithChunkDelay(chunkDelay)) }

// startStack starts model (the model server's handler) and the capture proxy in front of it,
// writing to store and logging the proxy's warnings to logger; opts are added to the proxy's
// options (the training run's token source). On error nothing is left running.
func startStack(store *capture.Store, logger *slog.Logger, model http.Handler, opts ...proxy.Option) (*stack, error) {
	s := &stack{}
	modelLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the model server: %w", err)
	}
	proxyLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = modelLn.Close()
		return nil, fmt.Errorf("listen for the proxy: %w", err)
	}
	s.modelURL = "http://" + modelLn.Addr().String()
	s.proxyURL = "http://" + proxyLn.Addr().String()

	s.handler, err = proxy.New(s.modelURL, append([]proxy.Option{
		proxy.WithStore(store),
		proxy.WithModelServerName(ModelServerName),
		proxy.WithLogger(logger),
	}, opts...)...)
	if err != nil {
		_ = modelLn.Close()
		_ = proxyLn.Close()
		return nil, fmt.Errorf("capture proxy: %w", err)
	}
	s.model = &http.Server{
		Handler:           model,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	s.proxy = &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	s.serve(s.model, modelLn)
	s.serve(s.proxy, proxyLn)
	return s, nil
}

// serve runs srv on ln in a goroutine tracked by s.serving.
func (s *stack) serve(srv *http.Server, ln net.Listener) {
	s.serving.Add(1)
	go func() {
		defer s.serving.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.mu.Lock()
			if s.serveErr == nil {
				s.serveErr = err
			}
			s.mu.Unlock()
		}
	}()
}

// stop shuts everything down in dependency order: the proxy's server (in-flight calls finish and
// their records are written), the capture handler (its tracer provider and durable processor),
// then the model server. It waits for the Serve goroutines and returns every error joined. ctx's
// cancellation is ignored; shutdownTimeout bounds the whole.
func (s *stack) stop(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	var errs []error
	if err := s.proxy.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("stop proxy server: %w", err))
		_ = s.proxy.Close()
	}
	if err := s.handler.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("stop capture handler: %w", err))
	}
	if err := s.model.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("stop model server: %w", err))
		_ = s.model.Close()
	}
	s.serving.Wait()
	s.mu.Lock()
	if s.serveErr != nil {
		errs = append(errs, fmt.Errorf("serve: %w", s.serveErr))
	}
	s.mu.Unlock()
	return errors.Join(errs...)
}
