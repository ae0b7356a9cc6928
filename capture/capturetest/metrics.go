package capturetest

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/gymtrace/gymtrace/semconv"
)

// Counts collects r and returns the span writers' counters and the observations' one, non-zero
// values only, by name: "<line_kind>/<outcome>" (gymtrace.capture.writer.spans, e.g.
// "model_call/written"), "<line_kind>/duplicates" (gymtrace.capture.writer.duplicates) and
// "<line_kind>/unattributed/<reason>" (gymtrace.capture.writer.unattributed, e.g.
// "observation/unattributed/flushed"). Other
// metrics (the writers' bytes, a Collector's own) are left out. It fails t when r cannot be
// collected or one of these is not a monotonic int64 sum.
func Counts(t testing.TB, r *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(t.Context(), &rm); err != nil {
		t.Fatalf("capturetest: collect metrics: %v", err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch m.Name {
			case semconv.GymtraceCaptureWriterSpansName, semconv.GymtraceCaptureWriterDuplicatesName, semconv.GymtraceCaptureWriterUnattributedName:
			default:
				continue
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok || !sum.IsMonotonic {
				t.Fatalf("capturetest: %s is a %T, not a counter", m.Name, m.Data)
			}
			for _, dp := range sum.DataPoints {
				val := func(k attribute.Key) string { v, _ := dp.Attributes.Value(k); return v.AsString() }
				var name string
				switch m.Name {
				case semconv.GymtraceCaptureWriterSpansName:
					name = val(semconv.GymtraceCaptureLineKindKey) + "/" + val(semconv.GymtraceCaptureOutcomeKey)
				case semconv.GymtraceCaptureWriterDuplicatesName:
					name = val(semconv.GymtraceCaptureLineKindKey) + "/duplicates"
				default:
					name = val(semconv.GymtraceCaptureLineKindKey) + "/unattributed/" + val(semconv.GymtraceCaptureUnattributedReasonKey)
				}
				if dp.Value != 0 {
					out[name] += dp.Value
				}
			}
		}
	}
	return out
}
