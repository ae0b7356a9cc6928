package main

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"time"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc/credentials"

	"github.com/gymtrace/gymtrace/exporter"
	"github.com/gymtrace/gymtrace/fleet"
	"github.com/gymtrace/gymtrace/proxy"
)

// captureViaOTLPOptions are the proxy flags that send capture records to gymtrace Collectors
// (collectorext/cmd/gymtrace-otelcol) instead of writing them locally.
type captureViaOTLPOptions struct {
	urls           []string
	protocol       string
	timeout        time.Duration
	attemptTimeout time.Duration
}

// Flag names of the capture's export to gateways: --capture-via-otlp and the flags that apply only
// with it (captureViaOTLPDependents).
const (
	captureViaOTLPFlag           = "capture-via-otlp"
	captureViaOTLPProtocolFlag   = "capture-via-otlp-protocol"
	captureExportTimeoutFlag     = "capture-export-timeout"
	captureExportAttemptTimeoutF = "capture-export-attempt-timeout"
)

// captureViaOTLPDependents are the flags that configure the export to --capture-via-otlp and do
// nothing without it.
var captureViaOTLPDependents = []string{captureViaOTLPProtocolFlag, captureExportTimeoutFlag, captureExportAttemptTimeoutF}

func addCaptureViaOTLPFlags(cmd *cobra.Command, o *captureViaOTLPOptions) {
	fl := cmd.Flags()
	fl.StringArrayVar(&o.urls, captureViaOTLPFlag, nil, "OTLP endpoint of a gymtrace Collector whose gymcapture exporter writes the capture records (http/protobuf: base URL such as http://127.0.0.1:4318; grpc: http://HOST:4317). Repeat it, or give a comma-separated list, for a fleet of gateways: each rollout goes to the gateway its trace id ranks first (rendezvous hashing), the next one when it does not answer (README \"Operator guide\"). Each call's span is exported synchronously and the call's end is released only after a Collector acknowledged it (after its fsync, with the example config); --capture-dir then only receives .capture.incomplete markers for calls whose export failed")
	fl.StringVar(&o.protocol, captureViaOTLPProtocolFlag, protocolHTTPProtobuf, "protocol of --capture-via-otlp: http/protobuf or grpc")
	fl.DurationVar(&o.timeout, captureExportTimeoutFlag, exporter.DefaultForwardTimeout, "bound on one call's whole synchronous export to --capture-via-otlp, failovers and retries included; a call whose export fails or times out marks its rollout incomplete")
	fl.DurationVar(&o.attemptTimeout, captureExportAttemptTimeoutF, fleet.DefaultAttemptTimeout, "bound on one export attempt to one --capture-via-otlp gateway; past it the call goes to the next gateway of its rollout's order")
}

// checkDependents refuses a flag of captureViaOTLPDependents given (changed reports whether the
// command line set a flag, as pflag's FlagSet.Changed) without --capture-via-otlp, as
// --vllm-token-ids-from-logprobs is refused without --token-source vllm: it would do nothing.
func (o captureViaOTLPOptions) checkDependents(changed func(name string) bool) error {
	if len(o.urls) > 0 {
		return nil
	}
	for _, f := range captureViaOTLPDependents {
		if changed(f) {
			return usageErrorf("--%s applies only with --%s (no capture gateway given)", f, captureViaOTLPFlag)
		}
	}
	return nil
}

// sdkOptions returns the handler options for the flags (none when --capture-via-otlp is unset).
// The router counts its export attempts (gymtrace.capture.gateway.exports) with mp, the meter
// provider of the proxy's other metrics (nil: none).
func (o captureViaOTLPOptions) sdkOptions(ctx context.Context, logger *slog.Logger, mp metric.MeterProvider) ([]proxy.Option, error) {
	if len(o.urls) == 0 {
		return nil, nil
	}
	if o.protocol != protocolHTTPProtobuf && o.protocol != protocolGRPC {
		return nil, usageErrorf("--capture-via-otlp-protocol %q must be %s or %s", o.protocol, protocolHTTPProtobuf, protocolGRPC)
	}
	if o.timeout <= 0 {
		return nil, usageErrorf("--capture-export-timeout %v must be a positive duration", o.timeout)
	}
	if o.attemptTimeout <= 0 {
		return nil, usageErrorf("--capture-export-attempt-timeout %v must be a positive duration", o.attemptTimeout)
	}
	eps, err := fleet.ParseEndpoints(o.urls, o.protocol)
	if err != nil {
		return nil, usageErrorf("--capture-via-otlp: %v", err)
	}
	if eps, err = fleet.Expand(ctx, net.DefaultResolver, eps); err != nil {
		return nil, usageErrorf("--capture-via-otlp: %v", err)
	}
	r, err := fleet.NewRouter(eps, func(ep fleet.Endpoint) (sdktrace.SpanExporter, error) { return newGatewayExporter(ctx, ep) },
		fleet.WithAttemptTimeout(o.attemptTimeout), fleet.WithLogger(logger), fleet.WithMeterProvider(mp))
	if err != nil {
		return nil, err
	}
	if len(eps) > 1 {
		keys := make([]string, len(eps))
		for i, ep := range eps {
			keys[i] = ep.Key
		}
		logger.Info("gymtrace proxy: capture gateways", "gateways", keys)
	}
	return []proxy.Option{proxy.WithCaptureExporter(r, o.timeout)}, nil
}

// newGatewayExporter returns the OTLP exporter of one gateway, without retries of its own (the
// router retries and fails over within --capture-export-timeout); the official exporter still reads
// OTEL_EXPORTER_OTLP_HEADERS, _COMPRESSION and the TLS variables. An endpoint that fleet.Expand
// replaced by an address verifies the TLS certificate against the configured host name.
func newGatewayExporter(ctx context.Context, ep fleet.Endpoint) (sdktrace.SpanExporter, error) {
	var tlsCfg *tls.Config
	if ep.ServerName != "" {
		tlsCfg = &tls.Config{ServerName: ep.ServerName, MinVersion: tls.VersionTLS12}
	}
	if ep.Protocol == fleet.ProtocolGRPC {
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpointURL(ep.URL), otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false})}
		if tlsCfg != nil {
			opts = append(opts, otlptracegrpc.WithTLSCredentials(credentials.NewTLS(tlsCfg)))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(ep.URL), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false})}
	if tlsCfg != nil {
		opts = append(opts, otlptracehttp.WithTLSClientConfig(tlsCfg))
	}
	return otlptracehttp.New(ctx, opts...)
}
