package proxy

import (
	"errors"
	"fmt"
	"sync"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// errAbandoned is the cause logged and counted for a captured call that [Handler.Shutdown] stopped
// waiting for.
var errAbandoned = errors.New("proxy capture handler: Shutdown's ctx ended while the call was in flight; its record is not written")

// inFlightCalls is the set of captured calls whose span has not ended: admitted by the handler's
// drain gate and not yet recorded. When [Handler.Shutdown]'s ctx ends before the gate drains, these
// are the calls whose records will never be written; Shutdown abandons them (marks their rollouts
// incomplete and counts them lost) before it returns. The zero value is an empty set. Safe for
// concurrent use.
type inFlightCalls struct {
	mu    sync.Mutex
	calls map[*inFlightCall]struct{}
}

// inFlightCall is one captured call of an [inFlightCalls] set. Its fields other than the ids are
// guarded by the set's mutex.
type inFlightCall struct {
	rolloutID, modelCallID string
	span                   trace.Span // nil until the call's span started
	counted                bool       // its span was counted as a record not written
}

// add enters a call of rolloutID (its model_call_id id) into the set.
func (f *inFlightCalls) add(rolloutID, id string) *inFlightCall {
	c := &inFlightCall{rolloutID: rolloutID, modelCallID: id}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = make(map[*inFlightCall]struct{})
	}
	f.calls[c] = struct{}{}
	return c
}

// started records the span of c once it started.
func (f *inFlightCalls) started(c *inFlightCall, span trace.Span) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c.span = span
}

// remove takes c out of the set: its span ended, or it ends without one. Idempotent.
func (f *inFlightCalls) remove(c *inFlightCall) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.calls, c)
}

// abandon takes every call out of the set (Shutdown stopped waiting for them) and returns them;
// those with a span are marked counted (the caller counts them). An abandoned call never enters
// the set again.
func (f *inFlightCalls) abandon() []*inFlightCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	left := make([]*inFlightCall, 0, len(f.calls))
	for c := range f.calls {
		c.counted = c.span != nil
		left = append(left, c)
	}
	clear(f.calls)
	return left
}

// spanOf returns c's span when it has one (nil otherwise); guarded read for the abandoning side.
func (f *inFlightCalls) spanOf(c *inFlightCall) trace.Span {
	f.mu.Lock()
	defer f.mu.Unlock()
	return c.span
}

// countOnce reports whether c's span is still to be counted as a record not written, and marks it
// counted.
func (f *inFlightCalls) countOnce(c *inFlightCall) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	first := !c.counted
	c.counted = true
	return first
}

// abandonInFlight gives up on the calls Shutdown stopped waiting for (left, from
// [inFlightCalls.abandon]): each call's rollout is marked incomplete (SPEC §2.6, durably: the
// marker's directory is fsynced) and each call with a span is counted as
// gymtrace.capture.writer.spans{line_kind="model_call",outcome="failed"} through the durable
// processor ([exporter.DurableProcessor.Abandon]); a call whose span has not started yet is counted
// when it ends ([Handler.endSpan]). It returns the errors of the markers not written (each logged).
func (h *Handler) abandonInFlight(left []*inFlightCall) []error {
	var errs []error
	for _, c := range left {
		if ro, ok := h.inflight.spanOf(c).(sdktrace.ReadOnlySpan); ok {
			if err := h.durable.Abandon(ro, errAbandoned); err != nil {
				errs = append(errs, fmt.Errorf("rollout %q: %w", c.rolloutID, err))
			}
			continue
		}
		h.cfg.logger.Error("gymtrace capture: Shutdown's ctx ended while the call was in flight; record not written, marking the rollout incomplete",
			"rollout_id", c.rolloutID, "model_call_id", c.modelCallID)
		if err := h.store.MarkIncomplete(c.rolloutID); err != nil {
			h.cfg.logger.Error("gymtrace capture: mark incomplete failed", "rollout_id", c.rolloutID, "error", err)
			errs = append(errs, fmt.Errorf("rollout %q: %w", c.rolloutID, err))
		}
	}
	return errs
}

// inFlightError is Shutdown's one error when ctx (whose error is ctxErr) ended before the calls in
// flight did: how many records will not be written and that their rollouts were marked incomplete;
// markErrs are the markers that could not be written (the first is wrapped, all were logged);
// processorsCut: the tracer provider's shutdown stopped at ctx too, so not every span processor
// was shut down.
func inFlightError(ctxErr error, abandoned int, markErrs []error, processorsCut bool) error {
	var msg string
	switch abandoned {
	case 0:
		msg = "the calls still in flight were past their records (every record was written)"
	case 1:
		msg = "1 captured call was still in flight: its record will not be written and its rollout was marked incomplete"
	default:
		msg = fmt.Sprintf("%d captured calls were still in flight: their records will not be written and their rollouts were marked incomplete", abandoned)
	}
	if processorsCut {
		msg += "; not every span processor was shut down"
	}
	if len(markErrs) > 0 {
		return fmt.Errorf("proxy capture handler shutdown: %w: %s, but %d incomplete marker(s) could not be written (first: %w)",
			ctxErr, msg, len(markErrs), markErrs[0])
	}
	return fmt.Errorf("proxy capture handler shutdown: %w: %s", ctxErr, msg)
}
