package capture

import (
	"context"
	"errors"
	"fmt"

	"github.com/gymtrace/gymtrace/semconv"
)

// This file is the trace-inheritance half of the [Writer] (SPEC §0 D18): the window's use, the
// unattributed file, ForceFlush and Shutdown.

// unattributedReasons are the values of gymtrace.capture.unattributed_reason.
var unattributedReasons = []string{
	semconv.GymtraceUnattributedNoRolloutID, semconv.GymtraceUnattributedNoTraceID,
	semconv.GymtraceUnattributedWindowFull, semconv.GymtraceUnattributedFlushed,
}

// observe remembers the rollout s carries for its trace and writes the spans held for the trace.
func (w *Writer) observe(ctx context.Context, s *Span) {
	rid, ok := carried(s)
	if !ok || !s.TraceID.IsValid() {
		return
	}
	spans := w.win.note(s.TraceID, rid)
	if len(spans) == 0 {
		return
	}
	ctx = context.WithoutCancel(ctx) // they were accepted already
	d := Deferred{TraceID: s.TraceID, Spans: spans, Results: make([]Result, len(spans))}
	var failed []Span
	for i := range spans {
		d.Results[i] = w.writeLine(ctx, rid, &spans[i], nil)
		if d.Results[i].Outcome == OutcomeFailed {
			failed = append(failed, spans[i])
		}
	}
	// A line that failed (an I/O error: a full disk) was acknowledged to its sender already, who
	// will not send it again: it stays held, and the next span of the trace that carries the
	// rollout (the sender's retry of the one whose push failed with it) writes it again.
	w.win.rehold(s.TraceID, failed)
	w.report(ctx, d)
}

// inherit gives s, a span of the writer's kind that names no rollout, its trace's rollout, or holds
// it, or writes it to the unattributed file.
func (w *Writer) inherit(ctx context.Context, s *Span) Result {
	if !s.TraceID.IsValid() {
		return w.unattributed(ctx, s, semconv.GymtraceUnattributedNoTraceID)
	}
	rid, held, reason, out := w.win.resolve(s.TraceID, func() Span { return w.tr.Detach(s) })
	w.writeOut(context.WithoutCancel(ctx), out)
	switch {
	case held:
		return Result{Outcome: OutcomeHeld}
	case rid != "":
		return w.writeLine(ctx, rid, s, nil)
	}
	return w.unattributed(ctx, s, reason) // the window is closed, or the span is too large to hold
}

// unattributed writes the line of s to the unattributed file, naming reason.
func (w *Writer) unattributed(ctx context.Context, s *Span, reason string) Result {
	r := Result{Unattributed: reason}
	if err := ctx.Err(); err != nil {
		r.Outcome, r.Err = OutcomeFailed, fmt.Errorf("line not started: %w", err)
		return w.done(ctx, r)
	}
	line, err := w.tr.NewUnattributedLine(s, reason)
	if err != nil {
		r.Outcome, r.Err = OutcomeRejected, fmt.Errorf("build line: %w", err)
		return w.done(ctx, r)
	}
	return w.commit(ctx, r, UnattributedRolloutID, line, nil)
}

// writeOut writes the spans of held traces that left the window to the unattributed file.
func (w *Writer) writeOut(ctx context.Context, hs []*heldTrace) []Result {
	var all []Result
	for _, h := range hs {
		d := Deferred{TraceID: h.id, Reason: h.reason, Spans: h.spans, Results: make([]Result, len(h.spans))}
		for i := range h.spans {
			d.Results[i] = w.unattributed(ctx, &h.spans[i], h.reason)
		}
		w.report(ctx, d)
		all = append(all, d.Results...)
	}
	return all
}

func (w *Writer) report(ctx context.Context, d Deferred) {
	if w.deferred != nil {
		w.deferred(ctx, d)
	}
}

// onTimer writes the held traces whose window ended.
func (w *Writer) onTimer() {
	defer w.win.timers.Done()
	w.writeOut(context.Background(), w.win.expired())
}

// ForceFlush writes every held span (SPEC §0 D18) to the unattributed file (reason flushed), each
// trace reported to the [WithDeferredResults] function, and returns the errors of the lines that
// failed, joined. The writes run even when ctx is done. A writer whose mapping does not route by
// trace holds nothing: it returns nil. Safe for concurrent use.
func (w *Writer) ForceFlush(ctx context.Context) error {
	if w.win == nil {
		return nil
	}
	return failures(w.writeOut(context.WithoutCancel(ctx), w.win.drain(false)))
}

// Shutdown closes the trace window: it stops its timer, writes every held span like
// [Writer.ForceFlush] and waits for a timer write in progress, or for ctx to be done (then it
// returns an error wrapping ctx's; that write still completes). Later spans that name no rollout
// and whose trace the window does not know go to the unattributed file at once (reason flushed).
// Writes of other spans go on as before. It runs once; later calls return the first result. A
// writer whose mapping does not route by trace has nothing to shut down.
func (w *Writer) Shutdown(ctx context.Context) error {
	if w.win == nil {
		return nil
	}
	w.shutdown.Do(func() {
		err := failures(w.writeOut(context.WithoutCancel(ctx), w.win.drain(true)))
		done := make(chan struct{})
		go func() { w.win.timers.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			err = errors.Join(err, fmt.Errorf("capture writer shutdown: %w", ctx.Err()))
		}
		w.shutErr = err
	})
	return w.shutErr
}

// failures joins the errors of the results that were not written.
func failures(rs []Result) error {
	var errs []error
	for _, r := range rs {
		if r.Outcome == OutcomeFailed || r.Outcome == OutcomeRejected {
			errs = append(errs, fmt.Errorf("a line (%s): %w", r.Unattributed, r.Err))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("capture writer: unattributed file: %w", errors.Join(errs...))
}
