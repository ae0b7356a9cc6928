package metadata

import (
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
)

// Type is the component type of the exporter, the key under `exporters:` in a Collector config.
var Type = component.MustNewType("gymcapture")

// ScopeName is the instrumentation scope of the exporter's own telemetry (its Go import path).
const ScopeName = "github.com/gymtrace/gymtrace/collectorext/gymcaptureexporter"

// TracesStability is the stability of the traces exporter.
const TracesStability = component.StabilityLevelAlpha

// SpansMetric is the name of the exporter's span counter (metadata.yaml telemetry.metrics; the
// Collector's own exporter metrics carry the same "otelcol_" prefix).
const SpansMetric = "otelcol_exporter_gymcapture_spans"

// OutcomeKey is the attribute of [SpansMetric] naming what happened to a span.
const OutcomeKey = "outcome"

// NewDefaultSendingQueueConfig returns the sending queue default declared in metadata.yaml: the
// Collector's default queue settings, disabled until the configuration has a sending_queue section
// (configoptional.Default), so that by default every OTLP request is acknowledged only after its
// records are on stable storage.
func NewDefaultSendingQueueConfig() configoptional.Optional[exporterhelper.QueueBatchConfig] {
	return configoptional.Default(exporterhelper.NewDefaultQueueConfig())
}
