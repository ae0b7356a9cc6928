package rollout

import (
	"context"
	"crypto/sha256"

	"go.opentelemetry.io/otel/trace"
)

// ID names a rollout in its run namespace: the key of its trace (DESIGN.md "Trace per rollout").
// The zero Run is "no run namespace" (Gym's layout); with a run, files go to DIR/Run/ ([RunDir])
// and the same rollout id gets another trace. The methods use the ids as given ([ValidateID],
// [ValidateRun] check them).
type ID struct {
	// Run is the run namespace (`--run-id`), "" for none.
	Run string
	// Rollout is the rollout id (SPEC §1.2), e.g. "3-1".
	Rollout string
}

// traceDomain separates rollout trace ids from other uses of SHA-256 over the same ids.
const traceDomain = "gymtrace/rollout/"

// TraceID returns the rollout's trace id: the first 16 bytes of SHA-256("gymtrace/rollout/" +
// Rollout), or of "gymtrace/rollout/<Run>/<Rollout>" in a run (validated ids, which hold no "/",
// never collide across runs). Every process computes the same id, so a rollout's trace can be
// found from its id alone.
func (id ID) TraceID() trace.TraceID { return id.RootSpanContext().TraceID() }

// RootSpanID returns the span id of the rollout's root span: bytes 16–23 of the same digest as
// [ID.TraceID]. No process needs to have recorded that span: it is the remote parent of model-call
// spans that arrive without the rollout's trace context.
func (id ID) RootSpanID() trace.SpanID { return id.RootSpanContext().SpanID() }

// RootSpanContext returns the span context of the rollout's root span: [ID.TraceID],
// [ID.RootSpanID], sampled, remote, no trace state.
func (id ID) RootSpanContext() trace.SpanContext {
	key := traceDomain + id.Rollout
	if id.Run != "" {
		key = traceDomain + id.Run + "/" + id.Rollout
	}
	d := sha256.Sum256([]byte(key))
	c := trace.SpanContextConfig{TraceFlags: trace.FlagsSampled, Remote: true}
	copy(c.TraceID[:], d[:16])
	copy(c.SpanID[:], d[16:24])
	return trace.NewSpanContext(c)
}

// ParentForModelCall chooses the parent of a model-call span of the rollout (DESIGN.md "Trace per
// rollout") from ctx's incoming span context (the request's traceparent or the active server
// span): when it is valid and in the rollout's trace, parent is ctx unchanged and links nil;
// otherwise parent is ctx with the rollout root ([ID.RootSpanContext]) as remote parent, and a valid
// foreign incoming span context is the single link. Other context values are kept. Start the span
// with trace.WithLinks(links...).
func (id ID) ParentForModelCall(ctx context.Context) (parent context.Context, links []trace.Link) {
	incoming := trace.SpanContextFromContext(ctx)
	root := id.RootSpanContext()
	if incoming.IsValid() && incoming.TraceID() == root.TraceID() {
		return ctx, nil
	}
	parent = trace.ContextWithRemoteSpanContext(ctx, root)
	if incoming.IsValid() {
		links = []trace.Link{{SpanContext: incoming}}
	}
	return parent, links
}
