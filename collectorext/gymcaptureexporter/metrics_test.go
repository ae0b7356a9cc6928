package gymcaptureexporter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/gymtrace/gymtrace/collectorext/gymcaptureexporter/internal/metadata"
)

// meterReader returns a meter provider and a reader of what was counted on it (capturetest.Counts).
func meterReader() (*sdkmetric.MeterProvider, *sdkmetric.ManualReader) {
	r := sdkmetric.NewManualReader()
	return sdkmetric.NewMeterProvider(sdkmetric.WithReader(r)), r
}

// meteredProvider is a meter provider that keeps its reader, so that a test finds it from the
// exporter's meterProvider.
type meteredProvider struct {
	*sdkmetric.MeterProvider
	reader *sdkmetric.ManualReader
}

// meteredSettings returns nop exporter settings whose telemetry counts on a meteredProvider.
func meteredSettings(t testing.TB) exporter.Settings {
	t.Helper()
	set := exportertest.NewNopSettings(metadata.Type)
	mp, r := meterReader()
	t.Cleanup(func() { require.NoError(t, mp.Shutdown(context.Background())) })
	set.TelemetrySettings.MeterProvider = &meteredProvider{mp, r}
	return set
}
