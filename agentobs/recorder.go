package agentobs

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/rollout"
	"github.com/gymtrace/gymtrace/semconv"
)

// instrumentationName is the tracer name of the recorder's spans.
const instrumentationName = "github.com/gymtrace/gymtrace/agentobs"

// Option configures a [Recorder] built by [NewRecorder].
type Option func(*recorderConfig)

type recorderConfig struct {
	runID string
	clock func() time.Time
}

// WithRunID puts the rollout in the run namespace runID (the proxy's --run-id, [proxy.WithRunID]):
// spans started without a parent in the rollout's trace get the run's rollout root
// (rollout.ID{Run: runID, Rollout: id}.RootSpanContext()) as their parent. Default "": no run namespace. A non-empty runID
// must pass rollout.ValidateRun, else NewRecorder fails.
func WithRunID(runID string) Option {
	return func(c *recorderConfig) { c.runID = runID }
}

// WithClock replaces the clock the recorder measures with (default time.Now). All times of one
// recorder are taken as one wall-clock reading at NewRecorder plus the clock's elapsed time since
// then (monotonic when the clock's readings carry one, as time.Now's do), so intervals never run
// backwards when the wall clock is stepped. Meant for tests; nil keeps the default.
func WithClock(clock func() time.Time) Option {
	return func(c *recorderConfig) {
		if clock != nil {
			c.clock = clock
		}
	}
}

// Recorder records one rollout's agent observations — invocations ([Recorder.StartInvocation]),
// tool calls ([StartToolCall]), compactions ([StartCompaction]), sandbox runs ([RecordSandbox])
// and the model calls each made ([Transport], [RecordModelCall]) — as spans in the rollout's trace
// and as the bundle Gym reads ([Recorder.Bundle]).
//
// The API is context-first: StartInvocation returns a context that carries the invocation, and the
// package-level functions find the invocation (and the tool call or compaction in progress) in
// the context they are given. Spans follow the GenAI conventions (SPEC §0 "Agent observations"):
// "invoke_agent {name}", "execute_tool {name}", "context_compaction", "sandbox {role}", all kind
// INTERNAL, with the attributes [BundleFromSpans] maps. A span started from a context without a
// span of the rollout's trace gets the rollout's root (rollout.ID{Run: runID, Rollout: id}.RootSpanContext()) as its parent,
// so every observation lands in the rollout's trace.
//
// A Recorder never waits for export: spans end with span.End, which runs the tracer provider's
// span processors — a BatchSpanProcessor only enqueues, while an [ObservationProcessor] appends
// the span's line durably (one group-committed fsync) before End returns, by design.
// The recorder never holds its locks while a span ends.
//
// The recorder keeps its own view of every observation (for [Recorder.Bundle]) for as long as it
// lives: use one Recorder per rollout.
//
// # Span limits
//
// The provider's span limits (sdktrace.SpanLimits, or OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT and the
// other OTEL_*_LIMIT variables; the SDK's defaults: no value length limit, 128 attributes, events
// and links) apply to the recorder's spans, never to its own view. They never damage an
// observation unseen (SPEC §0 D18). When a span of an otel-go SDK provider (a span that is an
// sdktrace.ReadOnlySpan) ends, the recorder compares what it set with what the span kept, once and
// only for what the observation line keeps (the attributes [BundleFromSpans] reads and the
// model-call references of its events and links):
//
//   - a value cut by the value length limit (e.g. gen_ai.operation.name "invoke_a",
//     gen_ai.tool.call.id or an element of gymtrace.model_call.ids shortened), or a kept attribute
//     dropped by a count limit, is reported to otel.Handle — an error wrapping [ErrSpanLimits] that
//     names the span, the attribute, the bytes kept of the bytes set and the limit to raise, with
//     the least value that keeps everything — and an [ObservationProcessor] of the provider rejects
//     the span's line with that cause (outcome rejected): the file lacks the observation rather
//     than holding a wrong one;
//   - gymtrace.model_call events or links dropped by the event or link count limit (the oldest go
//     first) are reported the same way, and the processor writes the line as the span holds it,
//     with its dropped counts, as partial: the span's gymtrace.model_call.ids list still carries
//     every model_call_id, but references without one and a compaction's before/after rule see
//     only the events kept.
//
// In both cases [Recorder.Bundle] then differs from the file's bundle. Raise the limits for long
// ids or names, or for agents with more than 128 model calls per invocation. Spans of other
// providers are not checked.
//
// A Recorder is safe for concurrent use: any number of goroutines may record tool calls and model
// calls of one invocation at once. Make one with [NewRecorder]: a nil or zero Recorder records
// nothing ([Recorder.StartInvocation] returns ctx and a nil *Invocation, whose methods do nothing;
// RolloutID is "" and Bundle the empty bundle).
type Recorder struct {
	tracer    trace.Tracer
	rolloutID string
	runID     string
	traceID   trace.TraceID
	clock     func() time.Time
	base      time.Time // clock reading at NewRecorder
	wall0     time.Time // base without its monotonic reading

	mu      sync.Mutex // guards entries; never held across span calls
	entries []*entry
}

// NewRecorder returns a recorder of rollout rolloutID whose spans come from tp. rolloutID names
// the rollout's files and must pass the id check every span writer holds ([capture.CheckRolloutID]:
// SPEC §0 D12, a letter or digit first, at most [rollout.MaxIDBytes] bytes), so that a recorder
// is never made whose spans every writer would reject. A nil tp records no spans (a no-op provider): the bundle is
// still recorded. The error names an invalid id or option value. An invalid id's message states
// the one rule that refused it, D12's (e.g. `invalid rollout id "": must match ^...$ (a letter or
// digit, then ...)`), and the error wraps [rollout.ErrInvalidID], and also
// [capture.ErrInvalidRolloutID] when the id is not even a file name of the store (SPEC §2.2).
func NewRecorder(tp trace.TracerProvider, rolloutID string, opts ...Option) (*Recorder, error) {
	cfg := recorderConfig{clock: time.Now}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if err := checkRecorderID(rolloutID); err != nil {
		return nil, fmt.Errorf("agentobs: recorder: %w", err)
	}
	if cfg.runID != "" {
		if err := rollout.ValidateRun(cfg.runID); err != nil {
			return nil, fmt.Errorf("agentobs: recorder: WithRunID: %w", err)
		}
	}
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	base := cfg.clock()
	return &Recorder{
		tracer:    tp.Tracer(instrumentationName, trace.WithSchemaURL(semconv.SchemaURL)),
		rolloutID: rolloutID,
		runID:     cfg.runID,
		traceID:   rollout.ID{Run: cfg.runID, Rollout: rolloutID}.TraceID(),
		clock:     cfg.clock,
		base:      base,
		wall0:     base.Round(0),
	}, nil
}

// checkRecorderID is [capture.CheckRolloutID] with one message: D12's rule (rollout.ValidateID),
// the stricter one, which refuses every id the store's file-name rule refuses; the store's error
// is wrapped too, not printed.
func checkRecorderID(rid string) error {
	err := rollout.ValidateID(rid)
	if err == nil {
		return nil
	}
	if storeErr := capture.ValidateRolloutID(rid); storeErr != nil {
		return idError{rule: err, store: storeErr}
	}
	return err
}

// idError is a rollout id refused by both rules: its text is the rule's, it matches both.
type idError struct{ rule, store error }

func (e idError) Error() string   { return e.rule.Error() }
func (e idError) Unwrap() []error { return []error{e.rule, e.store} }

// RolloutID returns the rollout id the recorder records.
func (r *Recorder) RolloutID() string {
	if r == nil {
		return ""
	}
	return r.rolloutID
}

// now returns the recorder's current time (see [WithClock]): no monotonic reading, never before an
// earlier result when the clock is monotonic.
func (r *Recorder) now() time.Time { return r.wall0.Add(r.clock().Sub(r.base)) }

// Bundle returns the bundle of everything recorded so far ([BundleFromSpans] over the recorder's own
// view of its spans; source "gymtrace"). Observations still in progress are included as such: an
// invocation or tool call that has not ended has status incomplete and no duration, a compaction in
// progress outcome unknown. Once every observation ended it equals the bundle built from the
// recorder's exported spans and from the observations file, unless the provider's span limits cut
// or dropped part of a span (reported, never silent: see "Span limits" at [Recorder]). It is valid
// by construction. Safe for concurrent use.
func (r *Recorder) Bundle() AgentObservationBundle {
	if r == nil {
		return BundleFromSpans(nil)
	}
	r.mu.Lock()
	entries := slices.Clone(r.entries)
	r.mu.Unlock()
	spans := make([]ObservationSpan, len(entries))
	for i, e := range entries {
		spans[i] = e.snapshot()
	}
	return BundleFromSpans(spans)
}

// entry is the recorder's own view of one observation span, kept beside the span so that the
// bundle does not depend on export.
type entry struct {
	span trace.Span

	mu       sync.Mutex
	traceID  trace.TraceID
	spanID   trace.SpanID
	parentID trace.SpanID
	name     string
	start    time.Time
	end      time.Time // zero until ended
	status   codes.Code
	attrs    []attribute.KeyValue
	events   []SpanEvent
	links    []SpanLink
	calls    []string // model_call_ids recorded, for gymtrace.model_call.ids
	ended    bool
}

// snapshot returns the entry as a mapping input (copies of its slices).
func (e *entry) snapshot() ObservationSpan {
	e.mu.Lock()
	defer e.mu.Unlock()
	return ObservationSpan{
		TraceID: e.traceID, SpanID: e.spanID, ParentSpanID: e.parentID, Name: e.name,
		Kind: trace.SpanKindInternal, StartTime: e.start, EndTime: e.end, StatusCode: e.status,
		Attributes: capture.Attributes(slices.Clone(e.attrs)), Events: slices.Clone(e.events), Links: slices.Clone(e.links),
	}
}

// startSpan starts an observation span at time at with attrs, below ctx's span when that span is
// in the rollout's trace, else below the rollout root, and registers its entry.
func (r *Recorder) startSpan(ctx context.Context, name string, at time.Time, attrs []attribute.KeyValue) (context.Context, *entry) {
	pctx, links := rollout.ID{Run: r.runID, Rollout: r.rolloutID}.ParentForModelCall(ctx)
	parent := trace.SpanContextFromContext(pctx)
	sctx, span := r.tracer.Start(pctx, name,
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(at),
		trace.WithAttributes(attrs...),
		trace.WithLinks(links...))
	e := &entry{span: span, name: name, start: at, attrs: attrs, traceID: r.traceID}
	if sc := span.SpanContext(); sc.IsValid() && sc.SpanID() != parent.SpanID() {
		e.traceID, e.spanID = sc.TraceID(), sc.SpanID()
	} else {
		e.spanID = randomSpanID() // no recording span (no-op provider): an id of our own
	}
	if parent.IsValid() && parent.TraceID() == e.traceID {
		e.parentID = parent.SpanID()
	}
	r.mu.Lock()
	r.entries = append(r.entries, e)
	r.mu.Unlock()
	return sctx, e
}

// setAttributes adds attributes to the span and its view. The caller holds e.mu.
func (e *entry) setAttributes(attrs ...attribute.KeyValue) {
	e.attrs = append(e.attrs, attrs...)
	e.span.SetAttributes(attrs...)
}

// finish ends the entry at the recorder's current time with gymtrace.observation.status status,
// attrs, error.type ([errorType] of err and explicitType), the gymtrace.model_call.ids of its calls
// and span status Error (err's text, else status) unless status is completed or unknown. Later
// calls do nothing. The span ends after e.mu is released, checked against the span limits first
// ([checkLimits], [entry.endSpan]).
func (e *entry) finish(r *Recorder, status string, err error, explicitType string, attrs ...attribute.KeyValue) {
	attrs = append([]attribute.KeyValue{semconv.GymtraceObservationStatusKey.String(status)}, attrs...)
	if t := errorType(err, explicitType); t != "" {
		attrs = append(attrs, semconv.ErrorType(t))
	}
	e.mu.Lock()
	if e.ended {
		e.mu.Unlock()
		return
	}
	e.ended = true
	if len(e.calls) > 0 {
		attrs = append(attrs, semconv.GymtraceModelCallIDsKey.StringSlice(slices.Clone(e.calls)))
	}
	e.setAttributes(attrs...)
	if status != string(InvocationStatusCompleted) && status != string(InvocationStatusUnknown) {
		e.status = codes.Error
		if err != nil {
			status = err.Error()
		}
		e.span.SetStatus(codes.Error, status)
	}
	end := r.now()
	e.end = end
	rep := checkLimits(e.span, e.attrs, e.events, e.links)
	e.mu.Unlock()
	e.endSpan(r.rolloutID, rep, trace.WithTimestamp(end))
}

// errEnded is returned when a model call is recorded on an observation that has ended.
var errEnded = errors.New("agentobs: the observation has ended")

// recordCall adds a model-call reference to the entry (a gymtrace.model_call event, and a link when
// the model call's span context is known) at the recorder's current time.
func (e *entry) recordCall(r *Recorder, ref ModelCallRef, target trace.SpanContext) error {
	attrs := refAttributes(ref)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ended {
		return errEnded
	}
	at := r.now()
	e.events = append(e.events, SpanEvent{Name: semconv.GymtraceModelCallEventName, Time: at, Attributes: capture.Attributes(attrs)})
	if ref.ModelCallID != nil {
		e.calls = append(e.calls, *ref.ModelCallID)
	}
	e.span.AddEvent(semconv.GymtraceModelCallEventName, trace.WithTimestamp(at), trace.WithAttributes(attrs...))
	if target.IsValid() {
		e.links = append(e.links, SpanLink{TraceID: target.TraceID(), SpanID: target.SpanID(), Attributes: capture.Attributes(attrs)})
		e.span.AddLink(trace.Link{SpanContext: target, Attributes: attrs})
	}
	return nil
}

// refAttributes returns the event/link attributes of a reference.
func refAttributes(ref ModelCallRef) []attribute.KeyValue {
	var attrs []attribute.KeyValue
	if ref.ModelCallID != nil {
		attrs = append(attrs, semconv.GymtraceModelCallID(*ref.ModelCallID))
	}
	if ref.ResponseID != nil {
		attrs = append(attrs, semconv.GenAIResponseID(*ref.ResponseID))
	}
	if ref.ModelRef != nil {
		attrs = append(attrs, semconv.GymtraceModelRefType(ref.ModelRef.Type), semconv.GymtraceModelRefName(ref.ModelRef.Name))
	}
	return attrs
}

func randomSpanID() trace.SpanID {
	var s trace.SpanID
	for !s.IsValid() {
		binary.NativeEndian.PutUint64(s[:], rand.Uint64())
	}
	return s
}

// scopeKey is the context key of the observation scope.
type scopeKey struct{}

// scope is what a context carries: the recorder, the invocation in progress, and the tool call and
// compaction in progress inside it (each may be nil).
type scope struct {
	rec  *Recorder
	inv  *Invocation
	tool *ToolCall
	comp *Compaction
}

func scopeFrom(ctx context.Context) *scope {
	s, _ := ctx.Value(scopeKey{}).(*scope)
	return s
}

func withScope(ctx context.Context, s *scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, s)
}

// InvocationFromContext returns the invocation ctx carries (the innermost one started with
// [Recorder.StartInvocation] on ctx or a parent context), or nil.
func InvocationFromContext(ctx context.Context) *Invocation {
	if s := scopeFrom(ctx); s != nil {
		return s.inv
	}
	return nil
}
