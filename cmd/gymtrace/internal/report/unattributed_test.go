package report

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gymtrace/gymtrace/agentobs"
)

// TestUnattributedMessage: the sentence counts the traces only when some span had one (a span
// without a valid trace id belongs to none: a user trial read "1 observation span of 0 traces"),
// and says what a no_trace_id span needs.
func TestUnattributedMessage(t *testing.T) {
	const path = "/d/_unattributed.observations.jsonl"
	const advice = ": no rollout's observations include them; set gymtrace.rollout.id on the spans or their resource (OTEL_RESOURCE_ATTRIBUTES), or put them in the rollout's trace (SPEC §0 D18)"
	tests := []struct {
		name string
		u    agentobs.UnattributedSummary
		want string
	}{
		{"flushed", agentobs.UnattributedSummary{Exists: true, Spans: 3, Traces: 2, Reasons: map[string]int{"flushed": 2, "no_rollout_id": 1}},
			path + " holds 3 observation spans of 2 traces that name no rollout (reasons: 2 flushed, 1 no_rollout_id)" + advice},
		{"no trace id only", agentobs.UnattributedSummary{Exists: true, Spans: 1, Reasons: map[string]int{"no_trace_id": 1}},
			path + " holds 1 observation span that names no rollout (reasons: 1 no_trace_id)" + advice +
				"; a span without a valid trace id (no_trace_id) goes here even when it names a rollout: its sender must give it one"},
		{"damaged", agentobs.UnattributedSummary{Exists: true, Spans: 1, Traces: 1, Reasons: map[string]int{"window_full": 1}, Damaged: 2},
			path + " holds 1 observation span of 1 trace that names no rollout (reasons: 1 window_full) and 2 damaged lines" + advice},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, UnattributedMessage(path, tt.u))
		})
	}
}
