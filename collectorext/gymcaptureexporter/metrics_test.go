package gymcaptureexporter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/gymtrace/gymtrace/collectorext/gymcaptureexporter/internal/metadata"
	"github.com/gymtrace/gymtrace/semconv"
)

// meterReader returns a meter provider and a reader of what was counted on it (counts).
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

// counts reads the span writers' and the observations' counters from r, non-zero values only:
// "<line_kind>/<outcome>" (gymtrace.capture.writer.spans), "<line_kind>/duplicates",
// "unattributed/<kind>" (gymtrace.observations.unattributed).
func counts(t testing.TB, r *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(t.Context(), &rm))
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch m.Name {
			case semconv.GymtraceCaptureWriterSpansName, semconv.GymtraceCaptureWriterDuplicatesName, semconv.GymtraceObservationsUnattributedName:
			default:
				continue // bytes, and exporterhelper's own metrics
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			require.True(t, ok, "%s: %T", m.Name, m.Data)
			require.True(t, sum.IsMonotonic, m.Name)
			for _, dp := range sum.DataPoints {
				kind, _ := dp.Attributes.Value(semconv.GymtraceCaptureLineKindKey)
				var name string
				switch m.Name {
				case semconv.GymtraceCaptureWriterSpansName:
					o, _ := dp.Attributes.Value(semconv.GymtraceCaptureOutcomeKey)
					name = kind.AsString() + "/" + o.AsString()
				case semconv.GymtraceCaptureWriterDuplicatesName:
					name = kind.AsString() + "/duplicates"
				case semconv.GymtraceObservationsUnattributedName:
					k, _ := dp.Attributes.Value(semconv.GymtraceObservationKindKey)
					name = "unattributed/" + k.AsString()
				}
				if dp.Value != 0 {
					out[name] += dp.Value
				}
			}
		}
	}
	return out
}
