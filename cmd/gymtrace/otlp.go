package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/exporter"
	"github.com/gymtrace/gymtrace/proxy"
)

// OTLP protocols (the values of OTEL_EXPORTER_OTLP_PROTOCOL the official Go exporters implement).
const (
	protocolGRPC         = "grpc"
	protocolHTTPProtobuf = "http/protobuf"
)

// otlpOptions are the OTLP flags of `gymtrace proxy`.
type otlpOptions struct {
	endpoint string
	protocol string
	payloads bool
}

func addOTLPFlags(cmd *cobra.Command, o *otlpOptions) {
	fl := cmd.Flags()
	fl.StringVar(&o.endpoint, "otlp-endpoint", "", "OTLP endpoint URL for traces and metrics (http/protobuf: base URL such as http://127.0.0.1:4318, /v1/traces and /v1/metrics are appended; grpc: http://HOST:4317, https:// for TLS); overrides OTEL_EXPORTER_OTLP_ENDPOINT and the per-signal variables. Without it export follows the OTEL_EXPORTER_OTLP_* variables and is off when no endpoint variable is set")
	fl.StringVar(&o.protocol, "otlp-protocol", "", `OTLP protocol: "grpc" or "http/protobuf" (default: OTEL_EXPORTER_OTLP_{TRACES,METRICS}_PROTOCOL, then OTEL_EXPORTER_OTLP_PROTOCOL, then http/protobuf)`)
	fl.BoolVar(&o.payloads, "otlp-payloads", false, "keep the request/response payload attributes on exported spans (default: stripped, sizes kept)")
}

// otlpSignal is one signal's export plan.
type otlpSignal struct {
	enabled  bool
	protocol string
}

// planSignal decides one signal's export (signal is "TRACES" or "METRICS"): on when --otlp-endpoint
// or OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_<signal>_ENDPOINT is set, unless
// OTEL_<signal>_EXPORTER is "none"; the protocol from --otlp-protocol, else
// OTEL_EXPORTER_OTLP_<signal>_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf. An
// empty variable counts as unset. Another protocol is an error naming its source.
func planSignal(o otlpOptions, signal string, getenv func(string) string) (otlpSignal, error) {
	var s otlpSignal
	s.enabled = o.endpoint != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") != ""
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_"+signal+"_EXPORTER")), "none") {
		s.enabled = false
	}
	source := "--otlp-protocol"
	s.protocol = o.protocol
	for _, name := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if s.protocol == "" {
			source, s.protocol = name, strings.TrimSpace(getenv(name))
		}
	}
	switch s.protocol {
	case "":
		s.protocol = protocolHTTPProtobuf
	case protocolGRPC, protocolHTTPProtobuf:
	default:
		if source == "--otlp-protocol" {
			return s, usageErrorf("--otlp-protocol %q must be %q or %q", s.protocol, protocolGRPC, protocolHTTPProtobuf)
		}
		return s, fmt.Errorf("proxy: %s=%q: the OTLP protocol must be %q or %q", source, s.protocol, protocolGRPC, protocolHTTPProtobuf)
	}
	return s, nil
}

// signalURL returns the URL --otlp-endpoint gives a signal (path "/v1/traces" or "/v1/metrics"):
// for http/protobuf the path is appended to the endpoint's path, as for OTEL_EXPORTER_OTLP_ENDPOINT
// (an endpoint already ending in /v1/traces, the flag's earlier form, counts as its base); for grpc
// the endpoint is used as is and must have no path. Either way a port it names must be a number
// from 1 to 65535.
func signalURL(endpoint, protocol, path string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", usageErrorf("--otlp-endpoint %q must be an absolute http:// or https:// URL", endpoint)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", usageErrorf("--otlp-endpoint %q must not carry a query, fragment or user info", endpoint)
	}
	if err := checkURLPort("otlp-endpoint", endpoint, u); err != nil {
		return "", err
	}
	base := strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1/traces")
	if protocol == protocolGRPC {
		if base != "" {
			return "", usageErrorf("--otlp-endpoint %q: a gRPC endpoint is http(s)://HOST:PORT without a path", endpoint)
		}
		return u.String(), nil
	}
	u.Path, u.RawPath = base+path, ""
	return u.String(), nil
}

// otlpPipeline is the proxy's OTLP export: a batch span processor (handed to the handler, which
// shuts it down) and a meter provider with a periodic reader (shut down by shutdown, after the
// handler). Either is nil when its signal is off.
type otlpPipeline struct {
	spans sdktrace.SpanProcessor
	mp    *sdkmetric.MeterProvider
}

// newOTLPPipeline builds the exporters the flags and the OTEL_EXPORTER_OTLP_* variables ask for; the
// official exporters read the other variables themselves (headers, timeout, compression, TLS,
// per-signal endpoints, OTEL_METRIC_EXPORT_INTERVAL). Spans lose their payload attributes unless
// o.payloads (exporter.WithoutPayloads).
func newOTLPPipeline(ctx context.Context, o otlpOptions, res *resource.Resource, getenv func(string) string) (*otlpPipeline, error) {
	traces, err := planSignal(o, "TRACES", getenv)
	if err != nil {
		return nil, err
	}
	metrics, err := planSignal(o, "METRICS", getenv)
	if err != nil {
		return nil, err
	}
	if o.endpoint != "" {
		for _, s := range []otlpSignal{traces, metrics} {
			if _, err := signalURL(o.endpoint, s.protocol, ""); err != nil {
				return nil, err
			}
		}
	}
	p := &otlpPipeline{}
	if traces.enabled {
		se, err := newSpanExporter(ctx, o.endpoint, traces.protocol)
		if err != nil {
			return nil, err
		}
		if !o.payloads {
			se = exporter.WithoutPayloads(se)
		}
		p.spans = sdktrace.NewBatchSpanProcessor(se)
	}
	if metrics.enabled {
		me, err := newMetricExporter(ctx, o.endpoint, metrics.protocol)
		if err != nil {
			p.abort()
			return nil, err
		}
		opts := []sdkmetric.Option{sdkmetric.WithReader(sdkmetric.NewPeriodicReader(me))}
		if res != nil {
			opts = append(opts, sdkmetric.WithResource(res))
		}
		p.mp = sdkmetric.NewMeterProvider(opts...)
	}
	return p, nil
}

// newSpanExporter and newMetricExporter build one signal's exporter; endpoint was checked by
// newOTLPPipeline (signalURL), so only the exporter itself can fail.
func newSpanExporter(ctx context.Context, endpoint, protocol string) (sdktrace.SpanExporter, error) {
	u, _ := signalURL(endpoint, protocol, "/v1/traces")
	var se sdktrace.SpanExporter
	var err error
	switch {
	case protocol == protocolGRPC && endpoint != "":
		se, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(u))
	case protocol == protocolGRPC:
		se, err = otlptracegrpc.New(ctx)
	case endpoint != "":
		se, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u))
	default:
		se, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("proxy: otlp trace exporter (%s): %w", protocol, err)
	}
	return se, nil
}

func newMetricExporter(ctx context.Context, endpoint, protocol string) (sdkmetric.Exporter, error) {
	u, _ := signalURL(endpoint, protocol, "/v1/metrics")
	var me sdkmetric.Exporter
	var err error
	switch {
	case protocol == protocolGRPC && endpoint != "":
		me, err = otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpointURL(u))
	case protocol == protocolGRPC:
		me, err = otlpmetricgrpc.New(ctx)
	case endpoint != "":
		me, err = otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(u))
	default:
		me, err = otlpmetrichttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("proxy: otlp metric exporter (%s): %w", protocol, err)
	}
	return me, nil
}

// options returns the proxy options that connect the pipeline to the capture handler.
func (p *otlpPipeline) options() []proxy.Option {
	var opts []proxy.Option
	if p.spans != nil {
		opts = append(opts, proxy.WithSpanProcessor(p.spans))
	}
	if p.mp != nil {
		opts = append(opts, proxy.WithMeterProvider(p.mp))
	}
	return opts
}

// meterProvider returns the pipeline's meter provider, nil (an untyped nil) when metrics are off.
func (p *otlpPipeline) meterProvider() metric.MeterProvider {
	if p.mp == nil {
		return nil
	}
	return p.mp
}

// shutdown exports the last metrics and stops the meter provider. Call it after the handler's
// Shutdown (which drains the span processor).
func (p *otlpPipeline) shutdown(ctx context.Context) error {
	if p.mp == nil {
		return nil
	}
	if err := p.mp.Shutdown(ctx); err != nil {
		return fmt.Errorf("proxy: otlp metrics shutdown: %w", err)
	}
	return nil
}

// abort stops what the pipeline started when the handler was never built (nothing to report).
func (p *otlpPipeline) abort() {
	if p.spans != nil {
		_ = p.spans.Shutdown(context.Background())
	}
	_ = p.shutdown(context.Background())
}
