// Command gymtrace-otelcol is gymtrace's OpenTelemetry Collector distribution: the Collector's
// own otlp receiver, batch and memory_limiter processors, debug, otlp_grpc and otlp_http
// exporters, and gymtrace's gymcapture exporter, which writes the capture files of model-call
// spans (DESIGN.md "Scale-out"). It is the Collector's standard command line:
//
//	gymtrace-otelcol --config=collectorext/config/gymtrace-otelcol.yaml
//	gymtrace-otelcol validate --config=FILE
//	gymtrace-otelcol components
//
// Configuration sources: file: (the default for a plain path), env: and yaml: URIs. SIGINT and
// SIGTERM shut it down gracefully. The example configuration explains the settings that keep
// capture durable.
package main

import (
	"fmt"
	"os"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/otelcol"
)

// version is the distribution's version, set at build time with
// -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if err := otelcol.NewCommand(settings()).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "gymtrace-otelcol:", err)
		os.Exit(1)
	}
}

// settings returns the Collector settings of the distribution.
func settings() otelcol.CollectorSettings {
	return otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{
			Command:     "gymtrace-otelcol",
			Description: "gymtrace OpenTelemetry Collector distribution (gymcapture exporter)",
			Version:     version,
		},
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				ProviderFactories: []confmap.ProviderFactory{
					fileprovider.NewFactory(),
					envprovider.NewFactory(),
					yamlprovider.NewFactory(),
				},
				DefaultScheme: "env",
			},
		},
	}
}
