package gymcaptureexporter

import (
	"testing"

	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/gymtrace/gymtrace/semconv"
)

// meterReader returns a meter provider and a reader of what was counted on it (counts).
func meterReader() (*sdkmetric.MeterProvider, *sdkmetric.ManualReader) {
	r := sdkmetric.NewManualReader()
	return sdkmetric.NewMeterProvider(sdkmetric.WithReader(r)), r
}

// counts reads the span writers' and the observations' counters from r, non-zero values only:
// "<line_kind>/<outcome>" (gymtrace.capture.writer.spans), "<line_kind>/duplicates",
// "unattributed/<kind>" (gymtrace.observations.unattributed). Bytes are left out.
func counts(t testing.TB, r *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(t.Context(), &rm))
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
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
				default:
					continue
				}
				if dp.Value != 0 {
					out[name] += dp.Value
				}
			}
		}
	}
	return out
}
