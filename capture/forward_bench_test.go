package capture

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/semconv"
)

// BenchmarkWriterForward is Writer.Forward's own work for a span another writer makes durable (the
// SDK's forwarding processor): read the span's record and learn its problems; send does nothing.
func BenchmarkWriterForward(b *testing.B) {
	s, err := NewStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	w, err := NewWriter(s, ModelCallLines{})
	if err != nil {
		b.Fatal(err)
	}
	send := func(context.Context) error { return nil }
	for _, c := range perfCases() {
		e := c.exchange()
		start, _ := TimeFromUnixSeconds(e.StartedAt)
		end, _ := TimeFromUnixSeconds(e.CompletedAt)
		span := &Span{
			TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, Kind: trace.SpanKindClient, StartTime: start, EndTime: end,
			Attributes: append(Attributes{semconv.GymtraceRolloutID("r1")}, ExchangeAttributes(&e)...),
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r := w.Forward(b.Context(), span, send); r.Outcome != OutcomeWritten {
					b.Fatal(r.Outcome, r.Err)
				}
			}
		})
	}
}
