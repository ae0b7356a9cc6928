package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/proxy"
)

// The test binary doubles as the proxy children of the tests' runs: with childModeEnv set it runs
// one proxy (plain or capture) instead of the tests, as `gymtrace bench-plain-proxy` and
// `gymtrace proxy` would, and exits when it gets SIGTERM.
const (
	childModeEnv     = "GYMTRACE_BENCH_TEST_CHILD"
	childUpstreamEnv = "GYMTRACE_BENCH_TEST_UPSTREAM"
	childCaptureEnv  = "GYMTRACE_BENCH_TEST_CAPTURE_DIR"
	childTokenEnv    = "GYMTRACE_BENCH_TEST_TOKEN_SOURCE"
)

// TestMain runs a proxy child when asked to (see childModeEnv), else the tests, checking that none
// leaks a goroutine (servers, load workers, child reapers).
func TestMain(m *testing.M) {
	if mode := os.Getenv(childModeEnv); mode != "" {
		if err := runTestChild(mode, os.Getenv(childUpstreamEnv), os.Getenv(childCaptureEnv), os.Getenv(childTokenEnv)); err != nil {
			fmt.Fprintln(os.Stderr, "bench test child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// testCommand is the tests' CommandFunc: the test binary in child mode.
func testCommand(_ context.Context, target, upstream, captureDir, tokenSource string) (*exec.Cmd, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(childEnv(os.Environ()),
		childModeEnv+"="+target, childUpstreamEnv+"="+upstream, childCaptureEnv+"="+captureDir, childTokenEnv+"="+tokenSource)
	return cmd, nil
}

// runTestChild serves the plain proxy or the capture proxy (proxy.New with the capture store in
// captureDir and the token source tokenSource, "" for none) on a free 127.0.0.1 port until SIGTERM.
func runTestChild(mode, upstream, captureDir, tokenSource string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch mode {
	case TargetPlain:
		return ServePlainProxy(ctx, upstream, "127.0.0.1:0", os.Stdout, os.Stderr)
	case TargetCapture, TargetJournal:
		d := capture.DurabilityPerRecord
		if mode == TargetJournal {
			d = capture.DurabilityJournal
		}
		src, err := proxy.ParseTokenSource(tokenSource)
		if err != nil {
			return err
		}
		h, err := proxy.New(upstream, proxy.WithCaptureDir(captureDir), proxy.WithModelServerName("policy_model"), proxy.WithDurability(d),
			proxy.WithTokenSource(src))
		if err != nil {
			return err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: h}
		fmt.Printf("listening on http://%s\n", ln.Addr())
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		<-ctx.Done()
		err = srv.Shutdown(context.Background())
		if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		return errors.Join(err, h.Shutdown(context.Background()))
	default:
		return fmt.Errorf("unknown child mode %q", mode)
	}
}
