package sdk

import (
	"context"
	"crypto/sha256"

	"go.opentelemetry.io/otel/trace"
)

// rolloutTraceDomain separates rollout trace ids from other uses of SHA-256 over the same ids.
const rolloutTraceDomain = "gymtrace/rollout/"

func rolloutDigest(id string) [sha256.Size]byte {
	return sha256.Sum256([]byte(rolloutTraceDomain + id))
}

// RolloutTraceID returns the trace id of a rollout: the first 16 bytes of
// SHA-256("gymtrace/rollout/" + id) (DESIGN.md "Trace per rollout"). Every process computes the same
// id, so a rollout's trace can be found from its id alone. The id is used as given (no validation).
func RolloutTraceID(id string) trace.TraceID {
	d := rolloutDigest(id)
	var t trace.TraceID
	copy(t[:], d[:16])
	return t
}

// RolloutRootSpanID returns the span id of a rollout's root span: bytes 16–23 of
// SHA-256("gymtrace/rollout/" + id). No process needs to have recorded that span: it is the remote
// parent of model-call spans that arrive without the rollout's trace context.
func RolloutRootSpanID(id string) trace.SpanID {
	d := rolloutDigest(id)
	var s trace.SpanID
	copy(s[:], d[16:24])
	return s
}

// RolloutSpanContext returns the span context of a rollout's root span: RolloutTraceID,
// RolloutRootSpanID, sampled, remote, no trace state.
func RolloutSpanContext(id string) trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    RolloutTraceID(id),
		SpanID:     RolloutRootSpanID(id),
		TraceFlags: trace.FlagsSampled,
		Remote:     true,
	})
}

// ParentForModelCall chooses the parent of a model-call span of rollout rolloutID (DESIGN.md "Trace
// per rollout"). ctx carries the incoming span context (extracted from the request's traceparent, or
// the active server span). When that span context is valid and in the rollout's trace, it is the
// parent: parent is ctx unchanged and links is nil. Otherwise parent is ctx with the rollout root
// (RolloutSpanContext) as remote parent, and a valid foreign incoming span context becomes the single
// link, so the agent's own trace still leads to the call. Other context values (baggage) are kept.
// Start the span with trace.WithLinks(links...).
func ParentForModelCall(ctx context.Context, rolloutID string) (parent context.Context, links []trace.Link) {
	incoming := trace.SpanContextFromContext(ctx)
	rollout := RolloutSpanContext(rolloutID)
	if incoming.IsValid() && incoming.TraceID() == rollout.TraceID() {
		return ctx, nil
	}
	// Drop any local span from ctx so the remote rollout root is the parent.
	parent = trace.ContextWithRemoteSpanContext(ctx, rollout)
	if incoming.IsValid() {
		links = []trace.Link{{SpanContext: incoming}}
	}
	return parent, links
}
