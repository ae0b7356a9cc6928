package proxy

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/rollout"
	"github.com/gymtrace/gymtrace/semconv"
)

// RolloutSpanNamePrefix starts the name of a rollout root span: "rollout <rollout_id>".
const RolloutSpanNamePrefix = "rollout "

// rootMarker, under the context key rootMarkerKey, asks RolloutIDGenerator for fixed ids, once.
type rootMarkerKey struct{}

type rootMarker struct {
	traceID trace.TraceID
	spanID  trace.SpanID
	used    atomic.Bool
}

// RolloutIDGenerator returns an sdktrace.IDGenerator for the agent's TracerProvider that lets
// [StartRollout] give the rollout root span the deterministic ids of its [rollout.ID] (DESIGN.md
// "Trace per rollout"), once per StartRollout call; every other span's ids come from base, or, when
// base is nil, from a random generator like the SDK's default. Install it once:
//
//	tp := sdktrace.NewTracerProvider(
//		sdktrace.WithIDGenerator(proxy.RolloutIDGenerator(nil)),
//		sdktrace.WithBatcher(exp))
//
// Without it, the rollout's root span is a child of the (never recorded) rollout root, so trace UIs
// flag a missing parent. Safe for concurrent use.
func RolloutIDGenerator(base sdktrace.IDGenerator) sdktrace.IDGenerator {
	if base == nil {
		base = randomIDs{}
	}
	return rolloutIDGenerator{base: base}
}

type rolloutIDGenerator struct{ base sdktrace.IDGenerator }

// NewIDs returns the rollout root's ids for the root span StartRollout starts, else base's.
func (g rolloutIDGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if m, _ := ctx.Value(rootMarkerKey{}).(*rootMarker); m != nil && m.used.CompareAndSwap(false, true) {
		return m.traceID, m.spanID
	}
	return g.base.NewIDs(ctx)
}

// NewSpanID returns base's span id.
func (g rolloutIDGenerator) NewSpanID(ctx context.Context, traceID trace.TraceID) trace.SpanID {
	return g.base.NewSpanID(ctx, traceID)
}

// randomIDs is a random IDGenerator (the SDK's default is not exported).
type randomIDs struct{}

func (randomIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	var t trace.TraceID
	for !t.IsValid() {
		binary.NativeEndian.PutUint64(t[:8], rand.Uint64())
		binary.NativeEndian.PutUint64(t[8:], rand.Uint64())
	}
	return t, randomIDs{}.NewSpanID(ctx, t)
}

func (randomIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	var s trace.SpanID
	for !s.IsValid() {
		binary.NativeEndian.PutUint64(s[:], rand.Uint64())
	}
	return s
}

// RolloutOption configures [StartRollout].
type RolloutOption interface {
	applyRollout(*rolloutConfig)
}

type rolloutConfig struct {
	runID string
	attrs []attribute.KeyValue
	start []trace.SpanStartOption
}

type rolloutOptionFunc func(*rolloutConfig)

func (f rolloutOptionFunc) applyRollout(c *rolloutConfig) { f(c) }

// WithRolloutRunID puts the rollout in the run namespace runID (its trace is rollout.ID{Run: runID,
// Rollout: rolloutID}.TraceID()). Use the proxy's run id ([WithRunID], `gymtrace proxy --run-id`),
// or its model-call spans land in another trace (linked, not nested). Default "": no run.
func WithRolloutRunID(runID string) RolloutOption {
	return rolloutOptionFunc(func(c *rolloutConfig) { c.runID = runID })
}

// WithRolloutAttributes adds attributes to the rollout root span (after gymtrace.rollout.id).
func WithRolloutAttributes(attrs ...attribute.KeyValue) RolloutOption {
	return rolloutOptionFunc(func(c *rolloutConfig) { c.attrs = append(c.attrs, attrs...) })
}

// WithRolloutSpanOptions adds span start options to the rollout root span (for example
// trace.WithTimestamp). Parent-related options are overridden: the root never has a parent.
func WithRolloutSpanOptions(opts ...trace.SpanStartOption) RolloutOption {
	return rolloutOptionFunc(func(c *rolloutConfig) { c.start = append(c.start, opts...) })
}

// StartRollout starts the root span of a rollout, "rollout <rolloutID>" (kind INTERNAL, attribute
// gymtrace.rollout.id), with the ids of rollout.ID{Run: runID, Rollout: rolloutID} (DESIGN.md "Trace
// per rollout"), the parent the proxy gives a model call that arrives without the rollout's
// traceparent. The returned ctx carries the span and the baggage member rollout.BaggageKey, so the
// agent's spans, the client spans of [NewHTTPClient] and the proxy's model-call spans form one tree:
//
//	rollout <id>  →  agent spans  →  HTTP POST (client)  →  chat <model> (proxy)
//
// The caller ends the span when the rollout ends; ctx's own span is not the parent (a rollout is a
// trace of its own), its baggage and values are kept. The span gets the fixed ids only when tp has
// [RolloutIDGenerator] installed (nothing else can choose a span id). Otherwise:
//
//   - tp is an SDK provider without the generator: the span that got random ids is discarded
//     (never ended, so never exported), the error is reported to otel.Handle, and the root span is
//     started as a child of the remote rollout root ([rollout.ID.RootSpanContext]): still in the rollout's
//     trace, with a missing parent;
//   - tp is nil or a no-op provider: ctx carries the rollout root's span context as a non-recording
//     span, so propagated requests still name the rollout's trace and root.
//
// A rolloutID that fails [rollout.ValidateID] (SPEC §0 D12) still gets its span and trace, but no
// baggage: the span's status is Error with a message naming the id and the rule.
//
// The ids are a function of (run, rollout id) only, so calling StartRollout twice with the same
// ones — a retried rollout, in this process or another — starts and exports two spans with the
// same trace id and span id: a backend then holds two roots with one identity, and every span of
// both attempts lands in one trace. Nothing
// refuses it: StartRollout keeps no state (the retry is usually another process, where no state
// could see it), and the ids are the contract the proxy relies on to parent a call that arrives
// without a traceparent. Give a retry a rollout id of its own, or start the root once and reuse
// the returned ctx.
// Safe for concurrent use.
func StartRollout(ctx context.Context, tp trace.TracerProvider, rolloutID string, opts ...RolloutOption) (context.Context, trace.Span) {
	var cfg rolloutConfig
	for _, o := range opts {
		if o != nil {
			o.applyRollout(&cfg)
		}
	}
	root := rollout.ID{Run: cfg.runID, Rollout: rolloutID}.RootSpanContext()
	bctx, idErr := rollout.ContextWithID(ctx, rolloutID)

	if tp == nil {
		sctx := trace.ContextWithRemoteSpanContext(bctx, root)
		span := trace.SpanFromContext(sctx)
		return sctx, span
	}
	tracer := tp.Tracer(instrumentationName, trace.WithSchemaURL(semconv.SchemaURL))
	start := append(append([]trace.SpanStartOption(nil), cfg.start...),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(semconv.GymtraceRolloutIDKey.String(rolloutID)),
		trace.WithAttributes(cfg.attrs...),
	)
	name := RolloutSpanNamePrefix + rolloutID

	marker := &rootMarker{traceID: root.TraceID(), spanID: root.SpanID()}
	mctx := context.WithValue(bctx, rootMarkerKey{}, marker)
	sctx, span := tracer.Start(mctx, name, append(start, trace.WithNewRoot())...)
	// Drop the marker: a later WithNewRoot span must never get the rollout's ids.
	sctx = context.WithValue(sctx, rootMarkerKey{}, (*rootMarker)(nil))
	got := span.SpanContext()
	if !(got.TraceID() == root.TraceID() && got.SpanID() == root.SpanID()) {
		if !marker.used.Load() && got.IsValid() && got.SpanID() != trace.SpanContextFromContext(bctx).SpanID() {
			// Fresh ids that are not ours: an SDK provider without the generator (a no-op provider
			// returns ctx's own span context or an invalid one).
			otel.Handle(fmt.Errorf("gymtrace rollout %q: the tracer provider lacks proxy.RolloutIDGenerator: the rollout root span is a child of the unrecorded root %s", rolloutID, root.SpanID()))
		}
		// The discarded span is never ended. Start the root under the remote rollout root instead.
		pctx := trace.ContextWithRemoteSpanContext(bctx, root)
		sctx, span = tracer.Start(pctx, name, start...)
		if !span.SpanContext().IsValid() {
			// A no-op provider: keep the rollout root's context for propagation.
			sctx = pctx
			span = trace.SpanFromContext(pctx)
		}
	}
	if idErr != nil {
		span.SetStatus(codes.Error, idErr.Error())
	}
	return sctx, span
}
