package gymcaptureexporter

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/gymtrace/gymtrace/collectorext/gymcaptureexporter/internal/metadata"
)

// NewFactory returns the factory of the gymcapture traces exporter (component type "gymcapture",
// stability alpha). Register it in a Collector distribution's exporter factories.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(metadata.Type, createDefaultConfig,
		exporter.WithTraces(createTraces, metadata.TracesStability))
}

// createDefaultConfig returns the defaults: no capture_dir (required), dir_mode "0700", file_mode
// "0600", include_payloads true, observations true, the Collector's default timeout and retry
// settings, and the sending queue disabled.
func createDefaultConfig() component.Config {
	return &Config{
		DirMode:         defaultDirMode,
		FileMode:        defaultFileMode,
		IncludePayloads: true,
		Observations:    true,
		TimeoutConfig:   exporterhelper.NewDefaultTimeoutConfig(),
		QueueConfig:     metadata.NewDefaultSendingQueueConfig(),
		RetryConfig:     configretry.NewDefaultBackOffConfig(),
	}
}

// createTraces builds the exporter on exporterhelper: timeout, retry and queue as configured,
// Start opening the capture store, Shutdown safe without Start and twice.
func createTraces(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Traces, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("gymcapture: config is %T, not *gymcaptureexporter.Config", cfg)
	}
	e, err := newCaptureExporter(c, set)
	if err != nil {
		return nil, err
	}
	return newTraces(ctx, set, c, e)
}

// newTraces wraps e in exporterhelper with c's timeout, retry and queue settings, and makes
// Shutdown run once.
func newTraces(ctx context.Context, set exporter.Settings, c *Config, e *captureExporter) (exporter.Traces, error) {
	t, err := exporterhelper.NewTraces(ctx, set, c, e.pushTraces,
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		exporterhelper.WithTimeout(c.TimeoutConfig),
		exporterhelper.WithRetry(c.RetryConfig),
		exporterhelper.WithQueue(c.QueueConfig),
		exporterhelper.WithStart(e.start),
		exporterhelper.WithShutdown(e.shutdown),
	)
	if err != nil {
		return nil, err
	}
	return &onceShutdown{Traces: t}, nil
}

// onceShutdown runs the wrapped exporter's Shutdown once and returns its result on every call:
// exporterhelper's own Shutdown (v0.165.0) closes its retry sender's channel on each call and so
// panics on the second one, while a component's Shutdown must be safe to call twice.
type onceShutdown struct {
	exporter.Traces
	once sync.Once
	err  error
}

// Shutdown shuts the exporter down on the first call and returns that call's result on every call.
func (o *onceShutdown) Shutdown(ctx context.Context) error {
	o.once.Do(func() { o.err = o.Traces.Shutdown(ctx) })
	return o.err
}
