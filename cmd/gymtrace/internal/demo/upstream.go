package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
)

// UpstreamConfig configures [ServeUpstream].
type UpstreamConfig struct {
	// Listen is the address to listen on, host:port (port 0 picks a free one).
	Listen string
	// Engine names the server the fake answers as: "openai" (the three provider dialects; ""
	// is the same), "vllm" or "sglang" (Chat Completions with token ids, /tokenize).
	Engine string
	// NoInlineTokenIDs makes the vllm engine a release before v0.10.2: no return_token_ids.
	NoInlineTokenIDs bool
	// Out receives the ready line "listening on http://HOST:PORT"; Err the server's warnings.
	Out, Err io.Writer
}

// Validate reports a configuration ServeUpstream refuses: an unknown engine, or NoInlineTokenIDs
// with an engine other than vllm.
func (cfg UpstreamConfig) Validate() error {
	_, err := cfg.options()
	return err
}

// options are the fake server's options for cfg.
func (cfg UpstreamConfig) options() ([]fakemodel.Option, error) {
	engine, err := fakemodel.ParseEngine(cfg.Engine)
	if err != nil {
		return nil, err
	}
	opts := []fakemodel.Option{fakemodel.WithEngine(engine)}
	if cfg.NoInlineTokenIDs {
		if engine != fakemodel.EngineVLLM {
			return nil, fmt.Errorf("no inline token ids applies only to the vllm engine (engine %q)", engine)
		}
		opts = append(opts, fakemodel.WithoutInlineTokenIDs())
	}
	return opts, nil
}

// upstreamShutdownTimeout bounds the wait for the calls in flight when ServeUpstream's context ends.
const upstreamShutdownTimeout = 5 * time.Second

// ServeUpstream serves the demo's fake model server (package fakemodel: deterministic answers, no
// model) on cfg.Listen until ctx ends, so a user can put `gymtrace proxy --upstream` in front of it
// by hand (README "Training runs"). It prints the ready line to cfg.Out once listening. Errors: an
// unknown engine, a listen failure, or the server failing; the end of ctx is not an error.
func ServeUpstream(ctx context.Context, cfg UpstreamConfig) error {
	opts, err := cfg.options()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           fakemodel.New(opts...),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(slog.NewTextHandler(cfg.Err, nil), slog.LevelWarn),
	}
	if _, err := fmt.Fprintf(cfg.Out, "listening on http://%s\n", ln.Addr()); err != nil {
		ln.Close()
		return err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), upstreamShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(sctx)
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
