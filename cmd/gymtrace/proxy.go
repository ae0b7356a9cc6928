package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/gymtrace/gymtrace/internal/urlport"
	"github.com/gymtrace/gymtrace/proxy"
)

func init() { commands = append(commands, newProxyCmd) }

// proxyOptions are the flags of `gymtrace proxy` (DESIGN.md "CLI contract").
type proxyOptions struct {
	upstream              string
	captureDir            string
	listen                string
	modelServerName       string
	messageContent        bool
	otlp                  otlpOptions
	captureViaOTLP        captureViaOTLPOptions
	corr                  correlationOptions
	limits                dataPathOptions
	tokens                tokenOptions // proxytokens.go
	redact                redactOptions
	dialTimeout           time.Duration
	responseHeaderTimeout time.Duration
	fileMode              string
	dirMode               string
	fdReserve             int
	durability            durabilityOptions
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
OpenTelemetry span and feeds the GenAI client metrics; both are exported over OTLP (http/protobuf or
grpc) when --otlp-endpoint or the standard OTEL_EXPORTER_OTLP_* variables name an endpoint.

A call without the path prefix is captured under the rollout named by its X-Gymtrace-Rollout-Id
header or its W3C baggage member gymtrace.rollout_id (prefix > header > baggage; an invalid id is
answered 400). A call naming no rollout is logged and counted, and forwarded uncaptured unless
--uncorrelated-rollout-id gives the id to capture it under. --run-id RUN keeps concurrent runs apart:
captures go to <capture-dir>/RUN/ and trace ids derive from gymtrace/rollout/RUN/<rollout_id>.

When ready the proxy prints one line "listening on http://HOST:PORT" to stdout. SIGINT or SIGTERM
stops accepting connections, lets in-flight calls finish, then drains OTLP export (spans, then the
last metrics). A second signal more than 1s after the first aborts in-flight calls and the proxy
exits 1; a repeat within 1s is ignored (timeout(1) and process-group kills deliver one signal twice).`,
		Args: noPositionalArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runProxy(cmd, o) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.upstream, "upstream", "", "base URL of the model server, without /v1 (e.g. http://127.0.0.1:8001; required)")
	addCaptureDirFlag(cmd, &o.captureDir)
	fl.StringVar(&o.listen, "listen", "127.0.0.1:8000", "address to listen on (HOST:PORT; port 0 picks a free port)")
	fl.StringVar(&o.modelServerName, "model-server-name", "policy_model", `model server name recorded as model_ref.name ("" records model_ref null)`)
	addOTLPFlags(cmd, &o.otlp)
	addCaptureViaOTLPFlags(cmd, &o.captureViaOTLP)
	fl.BoolVar(&o.messageContent, "capture-message-content", false, "add the conversation to every span as the GenAI attributes gen_ai.input.messages, gen_ai.output.messages and gen_ai.system_instructions (user content: kept on OTLP export even when payloads are stripped)")
	addCorrelationFlags(cmd, &o.corr)
	fl.DurationVar(&o.dialTimeout, "dial-timeout", proxy.DefaultDialTimeout, "timeout for connecting to the upstream (answered 504 on expiry)")
	fl.DurationVar(&o.responseHeaderTimeout, "response-header-timeout", proxy.DefaultResponseHeaderTimeout, "timeout for the upstream's status line (answered 504 on expiry)")
	addDataPathFlags(cmd, &o.limits)
	addTokenFlags(cmd, &o.tokens)
	addRedactFlags(cmd, &o.redact)
	fl.StringVar(&o.fileMode, "file-mode", "0600", "permission bits (octal) of the capture files created")
	fl.StringVar(&o.dirMode, "dir-mode", "0700", "permission bits (octal) of the capture directory when created")
	addDurabilityFlags(cmd, &o.durability)
	fl.IntVar(&o.fdReserve, fdReserveFlag, defaultFDReserve, "file descriptors kept free for writing records and markers: connections are accepted only while every open one can still get "+fmt.Sprint(fdsPerConn)+" more (upstream connection, capture file, directory fsync) and this many stay free; below that the proxy stops accepting, backs off and logs it")
	return cmd
}

func runProxy(cmd *cobra.Command, o proxyOptions) error {
	if g := setProxyGC(); g != nil {
		defer g.stop()
	}
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
	if _, port, err := net.SplitHostPort(o.listen); err != nil {
		return usageErrorf("--listen %q must be HOST:PORT: %v", o.listen, err)
	} else if port != "0" && !urlport.Valid(port) {
		return usageErrorf("--listen %q: port %s must be a number from 0 (a free port) to 65535", o.listen, port)
	}
	if o.fdReserve < 0 {
		return usageErrorf("--%s %d must not be negative", fdReserveFlag, o.fdReserve)
	}
	if o.dialTimeout <= 0 {
		return usageErrorf("--dial-timeout %s must be a positive duration", o.dialTimeout)
	}
	if o.responseHeaderTimeout <= 0 {
		return usageErrorf("--response-header-timeout %s must be a positive duration", o.responseHeaderTimeout)
	}
	corrOpts, err := o.corr.sdkOptions()
	if err != nil {
		return err
	}
	limitOpts, err := o.limits.sdkOptions()
	if err != nil {
		return err
	}
	if limitOpts, err = o.redact.appendTo(limitOpts); err != nil {
		return err
	}
	durability, err := o.durability.option()
	if err != nil {
		return err
	}
	if err := o.durability.withCaptureViaOTLP(len(o.captureViaOTLP.urls) > 0); err != nil {
		return err
	}
	if err := o.captureViaOTLP.checkDependents(cmd.Flags().Changed); err != nil {
		return err
	}

	logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
	o.limits.warn(logger)
	sigs := watchShutdownSignals(cmd.Context(), logger)
	defer sigs.stop()
	ctx := sigs.ctx

	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "gymtrace-proxy")),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		logger.Warn("gymtrace proxy: resource detection incomplete", "error", err)
	}
	opts := []proxy.Option{
		proxy.WithCaptureDir(o.captureDir),
		proxy.WithFileMode(fileMode),
		proxy.WithDirMode(dirMode),
		durability,
		proxy.WithModelServerName(o.modelServerName),
		proxy.WithMessageContent(o.messageContent),
		proxy.WithDialTimeout(o.dialTimeout),
		proxy.WithResponseHeaderTimeout(o.responseHeaderTimeout),
		proxy.WithLogger(logger),
		proxy.WithResource(res),
	}
	opts = append(opts, corrOpts...)
	opts = append(opts, limitOpts...)
	tokenOpts, err := o.tokens.sdkOptions()
	if err != nil {
		return err
	}
	opts = append(opts, tokenOpts...)
	otlp, err := newOTLPPipeline(ctx, o.otlp, res, os.Getenv)
	if err != nil {
		return err
	}
	viaOpts, err := o.captureViaOTLP.sdkOptions(ctx, logger, otlp.meterProvider()) // the gateways' counter beside the proxy's metrics
	if err != nil {
		otlp.abort()
		return err
	}
	opts = append(opts, viaOpts...)
	h, err := proxy.New(o.upstream, append(opts, otlp.options()...)...)
	if err != nil {
		otlp.abort()
		return fmt.Errorf("proxy: %w", err)
	}
	shutdown := func(stop func(context.Context) error) {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), otlpShutdownTimeout)
		defer cancel()
		if err := stop(sctx); err != nil {
			logger.Error("gymtrace proxy: shutdown", "error", err)
		}
	}
	defer o.durability.writeStats(h.Store(), logger) // after the handler's Shutdown closed the store
	defer shutdown(otlp.shutdown)                    // after the handler's Shutdown: the last metrics include every call
	defer shutdown(h.Shutdown)

	if err := probeWritable(h.Store().Dir()); err != nil {
		return fmt.Errorf("proxy: --capture-dir: %w", err)
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("proxy: listen: %w", err)
	}
	fdl, err := newFDReserveListener(ln, o.fdReserve, logger)
	if err != nil {
		_ = ln.Close()
		return fmt.Errorf("proxy: %w", err)
	}
	ln = fdl
	if !isLoopback(ln.Addr()) {
		logger.Warn("gymtrace proxy: listening beyond loopback: anyone who can reach this address can use the upstream's credentials the clients send and write capture files", "listen", ln.Addr().String())
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
	logger.Info("gymtrace proxy: shutting down; waiting for in-flight calls")
	drained := make(chan error, 1)
	go func() { drained <- srv.Shutdown(context.Background()) }()
	var aborted error
	select {
	case err := <-drained:
		if err != nil {
			return fmt.Errorf("proxy: shutdown: %w", err)
		}
	case <-sigs.abort: // a deliberate second signal (signals.go)
		logger.Warn("gymtrace proxy: second signal; aborting in-flight calls")
		_ = srv.Close()
		<-drained
		aborted = errors.New("proxy: in-flight calls aborted by a second signal")
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("proxy: serve: %w", err)
	}
	return aborted
}
