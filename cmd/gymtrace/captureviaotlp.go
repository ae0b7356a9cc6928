package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/gymtrace/gymtrace/exporter"
	"github.com/gymtrace/gymtrace/proxy"
)

// captureViaOTLPOptions are the proxy flags that send capture records to a gymtrace Collector
// (collectorext/cmd/gymtrace-otelcol) instead of writing them locally.
type captureViaOTLPOptions struct {
	url      string
	protocol string
	timeout  time.Duration
}

func addCaptureViaOTLPFlags(cmd *cobra.Command, o *captureViaOTLPOptions) {
	fl := cmd.Flags()
	fl.StringVar(&o.url, "capture-via-otlp", "", "OTLP endpoint of a gymtrace Collector whose gymcapture exporter writes the capture records (http/protobuf: base URL such as http://127.0.0.1:4318; grpc: http://HOST:4317). Each call's span is exported synchronously and the call's end is released only after the Collector acknowledged it (after its fsync, with the example config); --capture-dir then only receives .capture.incomplete markers for calls whose export failed")
	fl.StringVar(&o.protocol, "capture-via-otlp-protocol", protocolHTTPProtobuf, "protocol of --capture-via-otlp: http/protobuf or grpc")
	fl.DurationVar(&o.timeout, "capture-export-timeout", exporter.DefaultForwardTimeout, "bound on one synchronous export to --capture-via-otlp; a call whose export fails or times out marks its rollout incomplete")
}

// sdkOptions returns the handler options for the flags (none when --capture-via-otlp is unset).
func (o captureViaOTLPOptions) sdkOptions(ctx context.Context) ([]proxy.Option, error) {
	if o.url == "" {
		return nil, nil
	}
	if o.protocol != protocolHTTPProtobuf && o.protocol != protocolGRPC {
		return nil, usageErrorf("--capture-via-otlp-protocol %q must be %s or %s", o.protocol, protocolHTTPProtobuf, protocolGRPC)
	}
	if o.timeout <= 0 {
		return nil, usageErrorf("--capture-export-timeout %v must be a positive duration", o.timeout)
	}
	if _, err := signalURL(o.url, o.protocol, "/v1/traces"); err != nil {
		return nil, usageErrorf("--capture-via-otlp %q: %v", o.url, err)
	}
	se, err := newSpanExporter(ctx, o.url, o.protocol)
	if err != nil {
		return nil, err
	}
	return []proxy.Option{proxy.WithCaptureExporter(se, o.timeout)}, nil
}
