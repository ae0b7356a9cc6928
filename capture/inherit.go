package capture

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/semconv"
)

// UnattributedRolloutID is the name the unattributed file takes in place of a rollout id:
// <store dir>/_unattributed<suffix>, for observations _unattributed.observations.jsonl (SPEC §0
// D18). No rollout can take it: every gymtrace entry point that names a rollout holds SPEC §0 D12's
// rule ([rollout.ValidateID], a leading letter or digit), which refuses the leading "_". It is a
// valid capture file name (SPEC §2.2 allows a leading "_"), so the store's readers read it.
const UnattributedRolloutID = "_unattributed"

// UnattributedObservationsFile is the unattributed file of observation lines,
// _unattributed.observations.jsonl (SPEC §0 D18).
const UnattributedObservationsFile = UnattributedRolloutID + ObservationsFileSuffix

// CarriedRolloutID returns the rollout a span names itself (SPEC §0 D18: span, then resource): its
// gymtrace.rollout.id attribute when it has one, else its resource's; ok is false when neither has
// the attribute. The span's wins whatever it holds: a present attribute that is not a non-empty
// string names no rollout and is no cue to look further, so rolloutID is then "" with ok true — a
// span the [Writer] rejects, naming the key and its type as for a model-call span, or D12's rule
// for the empty string ([CheckRolloutID]), never one it files under its resource's or its trace's
// rollout. It does not check a non-empty id. Safe for concurrent use.
func CarriedRolloutID(s *Span) (rolloutID string, ok bool) {
	v, _, ok := carriedRolloutAttr(s)
	if !ok || v.Type() != attribute.STRING {
		return "", ok
	}
	return v.AsString(), true
}

// carriedRolloutAttr returns the gymtrace.rollout.id a span carries (SPEC §0 D18: the span's,
// else its resource's; onResource tells which) whatever its type; ok is false when neither has it.
func carriedRolloutAttr(s *Span) (v attribute.Value, onResource, ok bool) {
	for i, a := range [...]AttributeLookup{s.Attributes, s.Resource} {
		if a == nil {
			continue
		}
		if v, ok := a.Lookup(string(semconv.GymtraceRolloutIDKey)); ok {
			return v, i == 1, true
		}
	}
	return attribute.Value{}, false, false
}

// carriedIDError returns why the gymtrace.rollout.id s carries ([CarriedRolloutID]) names no
// rollout when it is not a string (on the span, or on its resource when the span has none), naming
// the key, where it is and its type; nil otherwise (a string's rules are [CheckRolloutID]'s).
func carriedIDError(s *Span) error {
	v, onResource, ok := carriedRolloutAttr(s)
	switch {
	case !ok || v.Type() == attribute.STRING:
		return nil
	case onResource:
		return fmt.Errorf("%w (the span's resource attribute; the span has none)", typeError(semconv.GymtraceRolloutIDKey, v, "a string"))
	}
	return typeError(semconv.GymtraceRolloutIDKey, v, "a string")
}

// TraceRouting is implemented by a [LineMapping] whose spans may take their rollout from their
// trace (SPEC §0 D18; agentobs's observation lines). A [Writer] over such a mapping gives a span of
// the mapping's kind that names no rollout ([LineMapping.Route] false, Unrouted true) the rollout
// of any span of the same trace it saw carrying one ([CarriedRolloutID]) within its trace window
// ([TraceWindow]); a span that arrives before any such span is held (a copy, [TraceRouting.Detach])
// until one arrives, or written to the unattributed file when the window ends. Implementations must
// be safe for concurrent use.
type TraceRouting interface {
	LineMapping
	// Unrouted reports whether s is a span of the mapping's kind that names no rollout.
	Unrouted(s *Span) bool
	// Detach returns a copy of s holding everything NewLine and NewUnattributedLine read, in memory
	// of its own: the producer of s may reuse its memory once the writer returns.
	Detach(s *Span) Span
	// NewUnattributedLine reads the line of s for the unattributed file
	// (<store dir>/[UnattributedRolloutID]<suffix>), naming reason (a
	// semconv.GymtraceUnattributed* value); an error rejects the span.
	NewUnattributedLine(s *Span, reason string) (Line, error)
}

// TraceWindow bounds what a [Writer] over a [TraceRouting] mapping remembers of traces (SPEC §0
// D18). A zero or negative field takes its default.
type TraceWindow struct {
	// Duration is how long a trace's rollout is remembered after the last span that carried it, and
	// how long a span that names no rollout is held waiting for one (from the first held span of its
	// trace). Default 1 minute.
	Duration time.Duration
	// MaxTraces bounds the traces remembered (the least recently seen is forgotten first) and,
	// apart, the traces with held spans (the oldest is written to the unattributed file first,
	// reason window_full). Default 4096.
	MaxTraces int
	// MaxHeldSpans bounds the held spans of all traces together (past it, the oldest held trace is
	// written to the unattributed file, reason window_full). Default 16384.
	MaxHeldSpans int
	// MaxHeldBytes bounds the memory of the held spans of all traces together, in bytes as
	// [HeldSize] estimates it (past it, the oldest held trace is written to the unattributed file,
	// reason window_full; a span larger than the whole bound is written there at once, with the
	// same reason). Default 64 MiB.
	MaxHeldBytes int64
}

// Defaults of [TraceWindow].
const (
	DefaultTraceWindowDuration     = time.Minute
	DefaultTraceWindowMaxTraces    = 4096
	DefaultTraceWindowMaxHeldSpans = 16384
	DefaultTraceWindowMaxHeldBytes = 64 << 20
)

func (w TraceWindow) withDefaults() TraceWindow {
	if w.Duration <= 0 {
		w.Duration = DefaultTraceWindowDuration
	}
	if w.MaxTraces <= 0 {
		w.MaxTraces = DefaultTraceWindowMaxTraces
	}
	if w.MaxHeldSpans <= 0 {
		w.MaxHeldSpans = DefaultTraceWindowMaxHeldSpans
	}
	if w.MaxHeldBytes <= 0 {
		w.MaxHeldBytes = DefaultTraceWindowMaxHeldBytes
	}
	return w
}

// WithTraceWindow sets the trace window of a writer over a [TraceRouting] mapping (see
// [TraceWindow] for the defaults); it does nothing for other mappings.
func WithTraceWindow(tw TraceWindow) WriterOption {
	return writerOptionFunc(func(c *writerConfig) { c.window = tw })
}

// Deferred is what a [Writer] did with the held spans of one trace (SPEC §0 D18) when it wrote
// them: to the rollout a later span of the trace carried, or to the unattributed file.
type Deferred struct {
	TraceID trace.TraceID
	// Reason is "" when the spans went to their trace's rollout, else why they went to the
	// unattributed file (a semconv.GymtraceUnattributed* value).
	Reason string
	// Spans are the held copies ([TraceRouting.Detach]) in arrival order, Results what was done
	// with each.
	Spans   []Span
	Results []Result
}

// WithDeferredResults makes the writer call f once for each trace whose held spans it wrote
// (resolved or unattributed), so that an adapter can log what it did (once per trace). f runs on
// the goroutine of the Write, ForceFlush or Shutdown that released the spans, or on the window's
// timer; it must not call the writer. Default: none.
func WithDeferredResults(f func(ctx context.Context, d Deferred)) WriterOption {
	return writerOptionFunc(func(c *writerConfig) { c.deferred = f })
}

// clock is the time source of a trace window (injectable in tests).
type clock interface {
	Now() time.Time
	// AfterFunc runs f in its own goroutine after d and returns a stop function with time.Timer's
	// Stop semantics.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// withClock makes a writer's trace window use c (tests).
func withClock(c clock) WriterOption {
	return writerOptionFunc(func(cfg *writerConfig) { cfg.clock = c })
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// traceWindow is a writer's memory of traces: the rollouts seen per trace and the held spans. Its
// lock guards the maps only; no I/O runs under it.
type traceWindow struct {
	cfg   TraceWindow
	clock clock

	mu        sync.Mutex
	known     map[trace.TraceID]*list.Element // of *knownTrace
	knownLRU  list.List                       // front: least recently seen
	held      map[trace.TraceID]*list.Element // of *heldTrace
	heldOrder list.List                       // front: oldest held
	nHeld     int
	heldBytes int64       // HeldSize of the held spans
	stop      func() bool // the pending timer's, nil when none
	closed    bool
	fire      func() // the timer's callback
	timers    sync.WaitGroup
}

type knownTrace struct {
	id   trace.TraceID
	rid  string
	seen time.Time
}

type heldTrace struct {
	id       trace.TraceID
	spans    []Span
	bytes    int64 // HeldSize of spans
	deadline time.Time
	reason   string // set when it leaves the window unattributed
}

func newTraceWindow(cfg TraceWindow, c clock) *traceWindow {
	return &traceWindow{cfg: cfg.withDefaults(), clock: c,
		known: make(map[trace.TraceID]*list.Element), held: make(map[trace.TraceID]*list.Element)}
}

// note remembers that trace tid carries rollout rid and returns the spans held for tid, if any.
func (t *traceWindow) note(tid trace.TraceID, rid string) []Span {
	now := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pruneKnown(now)
	if e, ok := t.known[tid]; ok {
		k := e.Value.(*knownTrace)
		k.rid, k.seen = rid, now
		t.knownLRU.MoveToBack(e)
	} else {
		if t.knownLRU.Len() >= t.cfg.MaxTraces {
			old := t.knownLRU.Remove(t.knownLRU.Front()).(*knownTrace)
			delete(t.known, old.id)
		}
		t.known[tid] = t.knownLRU.PushBack(&knownTrace{id: tid, rid: rid, seen: now})
	}
	e, ok := t.held[tid]
	if !ok {
		return nil
	}
	h := t.heldOrder.Remove(e).(*heldTrace)
	delete(t.held, tid)
	t.nHeld -= len(h.spans)
	t.heldBytes -= h.bytes
	return h.spans
}

// pruneKnown forgets the traces not seen within the window.
func (t *traceWindow) pruneKnown(now time.Time) {
	for e := t.knownLRU.Front(); e != nil; e = t.knownLRU.Front() {
		k := e.Value.(*knownTrace)
		if now.Sub(k.seen) < t.cfg.Duration {
			return
		}
		t.knownLRU.Remove(e)
		delete(t.known, k.id)
	}
}

// resolve returns the rollout of tid when the window knows it; otherwise it holds the copy
// detach makes of the span (held true) and returns the traces it had to write out to make room
// (reason window_full). When it neither knows the rollout nor holds the span, reason says why:
// flushed (the window is closed) or window_full (the span alone is larger than MaxHeldBytes).
func (t *traceWindow) resolve(tid trace.TraceID, detach func() Span) (rid string, held bool, reason string, out []*heldTrace) {
	now := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pruneKnown(now)
	if e, ok := t.known[tid]; ok {
		return e.Value.(*knownTrace).rid, false, "", nil
	}
	if t.closed {
		return "", false, semconv.GymtraceUnattributedFlushed, nil
	}
	span := detach()
	size := HeldSize(&span)
	if size > t.cfg.MaxHeldBytes {
		return "", false, semconv.GymtraceUnattributedWindowFull, nil
	}
	_, ok := t.held[tid]
	for t.heldOrder.Len() > 0 && (t.nHeld+1 > t.cfg.MaxHeldSpans || t.heldBytes+size > t.cfg.MaxHeldBytes ||
		(!ok && t.heldOrder.Len() >= t.cfg.MaxTraces)) {
		h := t.popOldest()
		h.reason = semconv.GymtraceUnattributedWindowFull
		out = append(out, h)
		if h.id == tid {
			ok = false
		}
	}
	t.hold(tid, now, span, size)
	t.arm(now)
	return "", true, "", out
}

// hold adds span, of [HeldSize] size, to the held spans of trace tid, holding the trace (its window
// from now, as the newest held trace) when it holds none. Called with t.mu held; the caller arms
// the timer.
func (t *traceWindow) hold(tid trace.TraceID, now time.Time, span Span, size int64) {
	e, ok := t.held[tid]
	if !ok {
		e = t.heldOrder.PushBack(&heldTrace{id: tid, deadline: now.Add(t.cfg.Duration)})
		t.held[tid] = e
	}
	h := e.Value.(*heldTrace)
	h.spans = append(h.spans, span)
	h.bytes += size
	t.nHeld++
	t.heldBytes += size
}

// rehold holds spans of trace tid again, after their write failed (their window starts anew), as
// the newest held trace, unless the window is closed; the bounds apply at the next span held.
func (t *traceWindow) rehold(tid trace.TraceID, spans []Span) {
	if len(spans) == 0 {
		return
	}
	now := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	for i := range spans {
		t.hold(tid, now, spans[i], HeldSize(&spans[i]))
	}
	t.arm(now)
}

func (t *traceWindow) popOldest() *heldTrace {
	h := t.heldOrder.Remove(t.heldOrder.Front()).(*heldTrace)
	delete(t.held, h.id)
	t.nHeld -= len(h.spans)
	t.heldBytes -= h.bytes
	return h
}

// arm starts the timer for the oldest held trace's deadline when none is pending (deadlines grow
// in hold order, so the oldest is always the next). Called with t.mu held.
func (t *traceWindow) arm(now time.Time) {
	if t.stop != nil || t.closed || t.heldOrder.Len() == 0 {
		return
	}
	d := t.heldOrder.Front().Value.(*heldTrace).deadline.Sub(now)
	t.timers.Add(1)
	t.stop = t.clock.AfterFunc(max(d, 0), t.fire)
}

// expired takes the held traces whose deadline has passed (reason no_rollout_id) and re-arms the
// timer for the rest. It runs on the timer.
func (t *traceWindow) expired() []*heldTrace {
	now := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stop = nil
	var out []*heldTrace
	for t.heldOrder.Len() > 0 && !t.heldOrder.Front().Value.(*heldTrace).deadline.After(now) {
		h := t.popOldest()
		h.reason = semconv.GymtraceUnattributedNoRolloutID
		out = append(out, h)
	}
	t.arm(now)
	return out
}

// drain takes every held trace (reason flushed); with close, it also stops the window: the pending
// timer is stopped and later spans are never held.
func (t *traceWindow) drain(close bool) []*heldTrace {
	t.mu.Lock()
	defer t.mu.Unlock()
	if close {
		t.closed = true
		if t.stop != nil && t.stop() {
			t.timers.Done() // it will not run
		}
		t.stop = nil
	}
	var out []*heldTrace
	for t.heldOrder.Len() > 0 {
		h := t.popOldest()
		h.reason = semconv.GymtraceUnattributedFlushed
		out = append(out, h)
	}
	return out
}

// carried returns the valid rollout id s carries (SPEC §0 D12), for the window.
func carried(s *Span) (string, bool) {
	rid, ok := CarriedRolloutID(s)
	if !ok || CheckRolloutID(rid) != nil {
		return "", false
	}
	return rid, true
}
