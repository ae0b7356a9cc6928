package capture

import (
	"fmt"

	"go.opentelemetry.io/otel/attribute"

	"github.com/gymtrace/gymtrace/semconv"
)

// ModelCallRollout reports whether the span whose attributes a holds is a model-call span, and its
// rollout id. A span is a model-call span when it carries gymtrace.model_call.id or
// gymtrace.dialect, of any type (the proxy and the middleware set both on every call's span; no
// observation span carries either on the span itself): a mistyped or missing attribute of such a
// span is the record's problem, never a reason to ignore the span. rolloutID is the span's
// gymtrace.rollout.id when it is a string, "" when it is missing or of another type: the
// [Writer] rejects such a span with an error naming the key and the type (nothing is marked, as
// no rollout is named). It is the one rule by
// which the SDK exporter and the Collector exporter pick the spans they write.
func ModelCallRollout(a AttributeLookup) (rolloutID string, ok bool) {
	_, hasID := a.Lookup(string(semconv.GymtraceModelCallIDKey))
	_, hasDialect := a.Lookup(string(semconv.GymtraceDialectKey))
	if !hasID && !hasDialect {
		return "", false
	}
	if rid, ok := a.Lookup(string(semconv.GymtraceRolloutIDKey)); ok && rid.Type() == attribute.STRING {
		return rid.AsString(), true
	}
	return "", true
}

// rolloutIDError returns why a span's gymtrace.rollout.id names no rollout: it is missing, or not
// a string (the error names the key and the type it has); nil when it is a string (whose rules
// CheckRolloutID checks).
func rolloutIDError(a AttributeLookup) error {
	rid, ok := a.Lookup(string(semconv.GymtraceRolloutIDKey))
	switch {
	case !ok:
		return fmt.Errorf("capture attributes: %s is required on a model-call span (one with %s or %s)",
			semconv.GymtraceRolloutIDKey, semconv.GymtraceModelCallIDKey, semconv.GymtraceDialectKey)
	case rid.Type() != attribute.STRING:
		return typeError(semconv.GymtraceRolloutIDKey, rid, "a string")
	}
	return nil
}
