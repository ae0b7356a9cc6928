package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/exporter"
	"github.com/gymtrace/gymtrace/sdk"
)

func init() { commands = append(commands, newProxyCmd) }

// proxyOptions are the flags of `gymtrace proxy` (DESIGN.md "CLI contract").
type proxyOptions struct {
	upstream              string
	captureDir            string
	listen                string
	modelServerName       string
	otlpEndpoint          string
	otlpPayloads          bool
	dialTimeout           time.Duration
	responseHeaderTimeout time.Duration
	fileMode              string
	dirMode               string
}

// otlpShutdownTimeout bounds draining the OTLP exporter after the last call finished.
const otlpShutdownTimeout = 30 * time.Second

func newProxyCmd() *cobra.Command {
	var o proxyOptions
	cmd := &cobra.Command{
		Use:   "proxy --upstream URL --capture-dir DIR",
		Short: "Run the capture proxy in front of a model server",
		Long: `Run the capture proxy in front of a model server (vLLM, OpenAI, Anthropic or any
OpenAI-compatible endpoint). Calls to /ng-rollout/<rollout_id>/v1/{responses,chat/completions,messages}
are forwarded to the upstream with the prefix stripped, streamed back unchanged, and written durably to
<capture-dir>/<rollout_id>.capture.jsonl before the client sees their end; every call is also an
OpenTelemetry span, exported over OTLP/HTTP when --otlp-endpoint is set.

When ready the proxy prints one line "listening on http://HOST:PORT" to stdout. SIGINT or SIGTERM
stops accepting connections, lets in-flight calls finish, then drains OTLP export; a second signal
aborts in-flight calls.`,
		Args: noPositionalArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runProxy(cmd, o) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.upstream, "upstream", "", "base URL of the model server, without /v1 (e.g. http://127.0.0.1:8001; required)")
	addCaptureDirFlag(cmd, &o.captureDir)
	fl.StringVar(&o.listen, "listen", "127.0.0.1:8000", "address to listen on (HOST:PORT; port 0 picks a free port)")
	fl.StringVar(&o.modelServerName, "model-server-name", "policy_model", `model server name recorded as model_ref.name ("" records model_ref null)`)
	fl.StringVar(&o.otlpEndpoint, "otlp-endpoint", "", "OTLP/HTTP traces endpoint URL (e.g. http://127.0.0.1:4318; /v1/traces is used when the URL has no path); export is off when empty")
	fl.BoolVar(&o.otlpPayloads, "otlp-payloads", false, "keep the request/response payload attributes on exported spans (default: stripped, sizes kept)")
	fl.DurationVar(&o.dialTimeout, "dial-timeout", sdk.DefaultDialTimeout, "timeout for connecting to the upstream (answered 504 on expiry)")
	fl.DurationVar(&o.responseHeaderTimeout, "response-header-timeout", sdk.DefaultResponseHeaderTimeout, "timeout for the upstream's status line (answered 504 on expiry)")
	fl.StringVar(&o.fileMode, "file-mode", "0600", "permission bits (octal) of the capture files created")
	fl.StringVar(&o.dirMode, "dir-mode", "0700", "permission bits (octal) of the capture directory when created")
	return cmd
}

// parseMode parses an octal permission flag value (at most 0777).
func parseMode(flag, v string) (fs.FileMode, error) {
	n, err := strconv.ParseUint(v, 8, 32)
	if err != nil || n > 0o777 {
		return 0, usageErrorf("--%s %q must be octal permission bits between 0000 and 0777", flag, v)
	}
	return fs.FileMode(n), nil
}

// checkUpstream validates --upstream: an absolute http(s) base URL that does not end in /v1.
func checkUpstream(v string) error {
	if err := requireStringFlag("upstream", v); err != nil {
		return err
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageErrorf("--upstream %q must be an absolute http:// or https:// URL", v)
	}
	if p := strings.TrimRight(u.Path, "/"); p == "/v1" || strings.HasSuffix(p, "/v1") {
		return usageErrorf("--upstream %q must be the base URL without /v1 (requests keep their /v1/... path)", v)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return usageErrorf("--upstream %q must not carry a query, fragment or user info", v)
	}
	return nil
}

// otlpURL returns the OTLP/HTTP traces URL for --otlp-endpoint.
func otlpURL(v string) (string, error) {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", usageErrorf("--otlp-endpoint %q must be an absolute http:// or https:// URL", v)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}

func runProxy(cmd *cobra.Command, o proxyOptions) error {
	if err := checkUpstream(o.upstream); err != nil {
		return err
	}
	if err := checkCaptureDir(o.captureDir); err != nil {
		return err
	}
	fileMode, err := parseMode("file-mode", o.fileMode)
	if err != nil {
		return err
	}
	dirMode, err := parseMode("dir-mode", o.dirMode)
	if err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(o.listen); err != nil {
		return usageErrorf("--listen %q must be HOST:PORT: %v", o.listen, err)
	}
	if o.dialTimeout <= 0 || o.responseHeaderTimeout <= 0 {
		return usageErrorf("--dial-timeout and --response-header-timeout must be positive durations")
	}

	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))

	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "gymtrace-proxy")),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		logger.Warn("gymtrace proxy: resource detection incomplete", "error", err)
	}
	opts := []sdk.Option{
		sdk.WithCaptureDir(o.captureDir),
		sdk.WithFileMode(fileMode),
		sdk.WithDirMode(dirMode),
		sdk.WithModelServerName(o.modelServerName),
		sdk.WithDialTimeout(o.dialTimeout),
		sdk.WithResponseHeaderTimeout(o.responseHeaderTimeout),
		sdk.WithLogger(logger),
		sdk.WithResource(res),
	}
	if o.otlpEndpoint != "" {
		endpoint, err := otlpURL(o.otlpEndpoint)
		if err != nil {
			return err
		}
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
		if err != nil {
			return fmt.Errorf("proxy: otlp exporter: %w", err)
		}
		var se sdktrace.SpanExporter = exp
		if !o.otlpPayloads {
			se = exporter.WithoutPayloads(exp)
		}
		opts = append(opts, sdk.WithSpanProcessor(sdktrace.NewBatchSpanProcessor(se)))
	}
	h, err := sdk.NewProxy(o.upstream, opts...)
	if err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), otlpShutdownTimeout)
		defer cancel()
		if err := h.Shutdown(sctx); err != nil {
			logger.Error("gymtrace proxy: shutdown", "error", err)
		}
	}()

	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("proxy: listen: %w", err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	if _, err := fmt.Fprintf(cmd.OutOrStdout(), "listening on http://%s\n", ln.Addr()); err != nil {
		_ = ln.Close()
		return fmt.Errorf("proxy: %w", err)
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("proxy: serve: %w", err)
	case <-ctx.Done():
	}
	// A second signal aborts in-flight calls (registered before the first handler is released).
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	stop()
	logger.Info("gymtrace proxy: shutting down; waiting for in-flight calls")
	drained := make(chan error, 1)
	go func() { drained <- srv.Shutdown(context.Background()) }()
	select {
	case err := <-drained:
		if err != nil {
			return fmt.Errorf("proxy: shutdown: %w", err)
		}
	case <-again:
		logger.Warn("gymtrace proxy: second signal; aborting in-flight calls")
		_ = srv.Close()
		<-drained
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("proxy: serve: %w", err)
	}
	return nil
}
