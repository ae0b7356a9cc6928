package demo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/capture"
)

// An observation span that reaches no observations file (here: one without a rollout id) fails the
// shutdown, read from the processor's counters.
func TestTelemetryShutdownCountsLostObservations(t *testing.T) {
	store, err := capture.NewStore(t.TempDir())
	require.NoError(t, err)
	tel, err := newTelemetry(store)
	require.NoError(t, err)
	tool := attribute.String("gen_ai.operation.name", "execute_tool")
	for _, attrs := range [][]attribute.KeyValue{{tool, attribute.String("gymtrace.rollout.id", "0-0")}, {tool}} {
		_, s := tel.tp.Tracer("t").Start(t.Context(), "execute_tool x", trace.WithAttributes(attrs...))
		s.End()
	}
	c, err := tel.shutdown(t.Context())
	assert.Equal(t, ObservationCounts{Written: 1, Lost: 1}, c)
	require.EqualError(t, err, "observations files: 1 observation span(s) not written")
}
