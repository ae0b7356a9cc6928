package main

import (
	"fmt"

	"go.opentelemetry.io/collector/exporter/debugexporter"
	"go.opentelemetry.io/collector/exporter/otlpexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"

	"github.com/gymtrace/gymtrace/collectorext/gymcaptureexporter"
)

// components returns the distribution's component factories (the `components` subcommand lists
// them): receiver otlp; processors batch and memory_limiter; exporters debug, otlp_grpc (alias
// otlp), otlp_http (alias otlphttp) and gymcapture; the Collector's standard internal telemetry.
func components() (otelcol.Factories, error) {
	var f otelcol.Factories
	var err error
	if f.Receivers, err = otelcol.MakeFactoryMap(otlpreceiver.NewFactory()); err != nil {
		return otelcol.Factories{}, fmt.Errorf("receivers: %w", err)
	}
	if f.Processors, err = otelcol.MakeFactoryMap(
		batchprocessor.NewFactory(),
		memorylimiterprocessor.NewFactory(),
	); err != nil {
		return otelcol.Factories{}, fmt.Errorf("processors: %w", err)
	}
	if f.Exporters, err = otelcol.MakeFactoryMap(
		debugexporter.NewFactory(),
		otlpexporter.NewFactory(),
		otlphttpexporter.NewFactory(),
		gymcaptureexporter.NewFactory(),
	); err != nil {
		return otelcol.Factories{}, fmt.Errorf("exporters: %w", err)
	}
	f.Telemetry = otelconftelemetry.NewFactory()
	return f, nil
}
