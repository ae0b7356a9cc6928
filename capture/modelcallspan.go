package capture

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/gymtrace/gymtrace/semconv"
)

// ModelCallRollout reports whether the span whose attributes a holds is a model-call span, and its
// rollout id: it is one when it carries a string gymtrace.rollout.id and a gymtrace.model_call.id
// of any type (a mistyped id is the record's problem, not a reason to ignore the span). It is the
// one rule by which the SDK exporter and the Collector exporter pick the spans they write.
func ModelCallRollout(a AttributeLookup) (rolloutID string, ok bool) {
	rid, ok := a.Lookup(string(semconv.GymtraceRolloutIDKey))
	if !ok || rid.Type() != attribute.STRING {
		return "", false
	}
	if _, ok := a.Lookup(string(semconv.GymtraceModelCallIDKey)); !ok {
		return "", false
	}
	return rid.AsString(), true
}
