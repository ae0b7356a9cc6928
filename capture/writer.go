package capture

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"syscall"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/gymtrace/gymtrace/rollout"
	"github.com/gymtrace/gymtrace/semconv"
)

// Outcome is what a [Writer] did with one span.
type Outcome uint8

const (
	// OutcomeIgnored: the span is not of the writer's kind of line (e.g. not a model-call span);
	// nothing is written or marked.
	OutcomeIgnored Outcome = iota
	// OutcomeWritten: the span's line is on stable storage: appended whole, or found already in the
	// rollout file (a retry or a second sender; counted as a duplicate, not appended again).
	OutcomeWritten
	// OutcomePartial: the line was appended with a payload it could not use whole written as null
	// (cut by an attribute limit, stripped, not a JSON object, or attributes dropped by a count
	// limit); the rollout is marked incomplete where the kind of line marks (SPEC §2.6).
	OutcomePartial
	// OutcomeRejected: no line can be made from the span (a required attribute missing or
	// mistyped, a rollout id that is not a safe file name, SPEC §2.2), the file system refuses
	// its file's name (ENAMETOOLONG: the store directory's path and the id are too long together),
	// or its file is not one the store writes ([ErrNotRegularFile]: a symbolic link, a directory,
	// a file with a second hard link); retrying cannot help.
	OutcomeRejected
	// OutcomeFailed: the line was not written (an I/O error, a context done before the write was
	// started, or a span the adapter discarded, e.g. after shutdown); a retry may succeed.
	OutcomeFailed
	// OutcomeWrittenDirUnsynced: the line was appended whole and fsynced into a file its commit
	// created, but the fsync of the store directory failed ([ErrDirNotSynced], in Result.Err): the
	// line is there, the file's directory entry may not survive a power loss. Nothing is marked
	// (the marker would need the same directory fsync); a retry appends nothing.
	OutcomeWrittenDirUnsynced
	// OutcomeHeld: a span of a [TraceRouting] mapping that names no rollout, held until a span of
	// its trace names one or the trace window ends (SPEC §0 D18); what is then done with it goes to
	// the [WithDeferredResults] function. Not counted: the span counts once, with its final outcome.
	OutcomeHeld
	numOutcomes
)

var outcomeNames = [numOutcomes]string{"ignored", "written", "partial", "rejected", "failed", "written_dir_unsynced", "held"}

// String returns the outcome's name as the gymtrace.capture.outcome metric attribute spells it:
// "ignored", "written", "partial", "rejected", "failed" or "written_dir_unsynced" ("held" is never
// counted).
func (o Outcome) String() string {
	if o < numOutcomes {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// LineMapping turns spans into one kind of line of a rollout file: capture records
// ([ModelCallLines]) or agent-observation lines (package agentobs). The [Writer] owns everything
// else: the file, the group commit, idempotency, the incomplete marker and the outcome.
// Implementations must be safe for concurrent use.
type LineMapping interface {
	// Kind names the kind of line, the gymtrace.capture.line_kind metric attribute (e.g.
	// semconv.GymtraceCaptureLineKindModelCall).
	Kind() string
	// FileSuffix is the suffix of the rollout file the lines go to: <store dir>/<rollout_id><suffix>
	// (e.g. [CaptureFileSuffix]).
	FileSuffix() string
	// MarksIncomplete reports whether a span of this kind that was not written whole marks its
	// rollout incomplete (<rollout_id>.capture.incomplete, SPEC §2.6).
	MarksIncomplete() bool
	// Route returns the rollout id of a span of this kind, and false for any other span (ignored).
	// The writer checks the id (a safe file name, SPEC §2.2, that also holds SPEC §0 D12's rule);
	// an empty id with ok true is a span of this kind whose gymtrace.rollout.id is missing or not a
	// string (for a [TraceRouting] mapping: present on the span, or on its resource when the span
	// has none, but not a non-empty string, [CarriedRolloutID]), which the writer rejects naming the
	// key.
	Route(s *Span) (rolloutID string, ok bool)
	// NewLine reads the line of span s of rollout rolloutID; an error rejects the span.
	NewLine(rolloutID string, s *Span) (Line, error)
	// KeyOf returns the idempotency key of a line already in the file (one non-blank line, without
	// its newline), "" when it has none. A key must be given only for a line that readers count
	// (a strict JSON object), never for a torn one.
	KeyOf(line []byte) string
}

// Line is one line made by a [LineMapping], not yet written.
type Line interface {
	// Key is the line's identity in its file: a line whose key is already in the file is not
	// appended again. "" means the line is appended as it is.
	Key() string
	// AppendTo appends the whole line, one JSON object ending in "}\n", to dst.
	AppendTo(dst []byte) []byte
	// Problems lists what the line writes as null although the span had it, whether or not the line
	// was made (a forwarded line is checked, not made: [Writer.Forward]). A line with problems is
	// partial.
	Problems() Problems
}

// StreamedLine is a [Line] that may be written in pieces, so that a large one is never held whole
// a second time ([Store.AppendStream]).
type StreamedLine interface {
	Line
	// Streamed reports whether the line should be written in pieces.
	Streamed() bool
	// SizeHint estimates the line's length in bytes.
	SizeHint() int
	// WriteTo hands the line to emit in consecutive pieces built in buf, which it returns for reuse;
	// emit's first error stops it and is returned.
	WriteTo(buf []byte, emit func(piece []byte) error) ([]byte, error)
}

// Result is what [Writer.Write] and [Writer.Discard] did with one span.
type Result struct {
	// Outcome is what happened.
	Outcome Outcome
	// RolloutID is the span's rollout ("" when ignored, held or unattributed).
	RolloutID string
	// Unattributed is set when the line went (or was to go) to the unattributed file instead of a
	// rollout's (SPEC §0 D18): why, a semconv.GymtraceUnattributed* value.
	Unattributed string
	// Err is the cause of a rejected or failed span, the [Problems] of a partial one (joined with
	// the [ErrDirNotSynced] error when the directory fsync failed too) and the [ErrDirNotSynced]
	// error of OutcomeWrittenDirUnsynced; nil otherwise.
	Err error
	// Marked is set when the writer marked the rollout incomplete for this span (SPEC §2.6), or
	// tried to (then MarkErr is set); a span that names no valid rollout marks nothing.
	Marked bool
	// MarkErr is the error of writing the rollout's incomplete marker, when that failed too (the
	// loss is then invisible to readers: adapters log it on its own).
	MarkErr error
}

// MarkedSuffix ends an adapter's log message about a span not written whole: "; marking the
// rollout incomplete" when r marked it ([Result].Marked), "; no rollout to mark" otherwise.
func MarkedSuffix(r Result) string {
	if r.Marked {
		return "; marking the rollout incomplete"
	}
	return "; no rollout to mark"
}

// WriterOption configures a [Writer].
type WriterOption interface {
	applyWriter(*writerConfig)
}

type writerConfig struct {
	meterProvider metric.MeterProvider
	window        TraceWindow
	deferred      func(context.Context, Deferred)
	clock         clock // nil: the real one
}

type writerOptionFunc func(*writerConfig)

func (f writerOptionFunc) applyWriter(c *writerConfig) { f(c) }

// WithMeterProvider makes the writer count what it does with mp's meter
// "github.com/gymtrace/gymtrace/capture" (libraries never read the global provider). The
// instruments, not semantic conventions:
//
//   - gymtrace.capture.writer.spans (counter, {span}): every span handed to the writer, by
//     gymtrace.capture.line_kind ("model_call", "observation") and gymtrace.capture.outcome
//     ("written", "partial", "ignored", "rejected", "failed", "written_dir_unsynced");
//   - gymtrace.capture.writer.duplicates (counter, {line}): lines not appended because the file
//     already held their key, by gymtrace.capture.line_kind (their spans count as written);
//   - gymtrace.capture.writer.bytes (counter, By): bytes of lines appended durably, by
//     gymtrace.capture.line_kind;
//   - gymtrace.capture.writer.unattributed (counter, {span}): spans written (or tried) to the
//     unattributed file (SPEC §0 D18), by gymtrace.capture.line_kind and
//     gymtrace.capture.unattributed_reason ("no_rollout_id", "no_trace_id", "window_full",
//     "flushed"); they count in gymtrace.capture.writer.spans too.
//
// Default (and a nil mp): a no-op provider, nothing is recorded.
func WithMeterProvider(mp metric.MeterProvider) WriterOption {
	return writerOptionFunc(func(c *writerConfig) { c.meterProvider = mp })
}

// meterName is the instrumentation scope of the writer's metrics.
const meterName = "github.com/gymtrace/gymtrace/capture"

// Writer is the one span writer: it turns each span into the line its [LineMapping] makes and
// appends it to the span's rollout file, <store dir>/<rollout_id><suffix> (the run namespace, when
// there is one, is the store's directory), durably: flock(LOCK_EX), write, fsync, group-committed
// with the concurrent appends to the same file ([Store.Append]); different files never wait for
// each other. It returns one [Outcome] per span and marks the rollout incomplete when a line of a
// marking kind is not written whole.
//
// Idempotency: a line whose [Line.Key] (a record's model_call_id) is already in the rollout file is
// not appended again. The check runs under the file's lock against what is on disk, so it holds
// across processes, across Stores and across a sender's retries; it reads a file whole only the first
// time (or after the file was replaced), then only what other writers appended since (lineindex.go).
//
// Trace inheritance (SPEC §0 D18): when the mapping is a [TraceRouting] one (observation lines), a
// span of its kind that names no rollout takes the rollout of its trace, as the spans the writer saw
// carrying one named it ([CarriedRolloutID], any kind of span: the proxy's model-call spans carry
// it), within the writer's [TraceWindow]; one that arrives first is held until then, and written to
// the unattributed file, <store dir>/[UnattributedRolloutID]<suffix>, when the window ends, at
// [Writer.ForceFlush] or at [Writer.Shutdown]. Held spans live in memory only: a process that
// dies holding them loses them. Such a writer must be shut down.
//
// Writes run on a context detached from the caller's (context.WithoutCancel) once started, so a
// cancelled request never loses a line half-way. A Writer is safe for concurrent use.
type Writer struct {
	store *Store
	m     LineMapping
	bufs  sync.Pool
	tel   writerTelemetry

	tr       TraceRouting // m, when it routes by trace; nil otherwise
	win      *traceWindow // nil without tr
	deferred func(context.Context, Deferred)
	shutdown sync.Once
	shutErr  error
}

// NewWriter returns a writer of m's lines into store. It returns an error when store or m is nil
// or an instrument cannot be created.
func NewWriter(store *Store, m LineMapping, opts ...WriterOption) (*Writer, error) {
	if store == nil {
		return nil, errors.New("capture writer: store is nil")
	}
	if m == nil {
		return nil, errors.New("capture writer: line mapping is nil")
	}
	var cfg writerConfig
	for _, o := range opts {
		if o != nil {
			o.applyWriter(&cfg)
		}
	}
	if cfg.meterProvider == nil {
		cfg.meterProvider = noop.NewMeterProvider()
	}
	w := &Writer{store: store, m: m, deferred: cfg.deferred}
	w.bufs.New = func() any { b := make([]byte, 0, 4096); return &b }
	if err := w.tel.init(cfg.meterProvider, m.Kind()); err != nil {
		return nil, err
	}
	if tr, ok := m.(TraceRouting); ok {
		w.tr = tr
		w.win = newTraceWindow(cfg.window, cmp.Or[clock](cfg.clock, realClock{}))
		w.win.fire = w.onTimer
	}
	return w, nil
}

// Route returns the rollout id of s when it is a span of the writer's kind (see [LineMapping]).
func (w *Writer) Route(s *Span) (string, bool) { return w.m.Route(s) }

// maxPooledLine is the largest line buffer kept for reuse.
const maxPooledLine = 1 << 20

// Write writes the line of s (see [Writer]) and returns what it did ([Outcome]). The rollout is
// marked incomplete, when the mapping marks, for every outcome but written, written_dir_unsynced
// and ignored, except a rollout id that is not a safe file name (SPEC §2.2) or fails SPEC §0 D12's
// rule (rollout.ValidateID), and a span of the mapping's kind without a string gymtrace.rollout.id
// ([ModelCallRollout]; for a [TraceRouting] mapping one whose span or resource holds it with another
// type, [CarriedRolloutID]): rejected, nothing marked; a file name the file system refuses
// (ENAMETOOLONG) or a rollout file that is not a regular file with one link ([ErrNotRegularFile])
// is rejected too, and marked. A failed append may or may not have left the line in
// the file; a retry never appends it twice. A line whose key is already in the file is
// written, counted as a duplicate; a partial one has its [Problems] in Result.Err. A failed marker
// write is Result.MarkErr (the outcome stays). Safe for concurrent use.
func (w *Writer) Write(ctx context.Context, s *Span) Result { return w.write(ctx, s, nil) }

// Forward is [Writer.Write] for a span whose line another writer makes durable: send delivers the
// span (e.g. a synchronous OTLP export to a capture Collector, whose own Writer appends it) in place
// of the local append. The line is read here but not made: a span that cannot give a line is
// rejected before send runs, and one whose payloads the line would write as null (its
// [Line.Problems], checked without making the line) is partial; a send error is OutcomeFailed.
// Markers go to the local store. Safe for concurrent use.
func (w *Writer) Forward(ctx context.Context, s *Span, send func(context.Context) error) Result {
	return w.write(ctx, s, send)
}

func (w *Writer) write(ctx context.Context, s *Span, send func(context.Context) error) Result {
	if w.win != nil {
		w.observe(ctx, s)
	}
	rid, ok := w.m.Route(s)
	if !ok {
		if w.win != nil && send == nil && w.tr.Unrouted(s) {
			return w.inherit(ctx, s)
		}
		return w.done(ctx, Result{Outcome: OutcomeIgnored})
	}
	if rid == "" {
		// A span of the mapping's kind whose rollout id attribute is missing or mistyped (for a
		// trace-routing mapping: present on the span or its resource, but not a string).
		var err error
		switch {
		case w.tr != nil:
			err = carriedIDError(s)
		case s.Attributes != nil:
			err = rolloutIDError(s.Attributes)
		}
		if err != nil {
			return w.done(ctx, Result{Outcome: OutcomeRejected, Err: err})
		}
	}
	if err := CheckRolloutID(rid); err != nil {
		return w.done(ctx, Result{Outcome: OutcomeRejected, RolloutID: rid, Err: err})
	}
	return w.writeLine(ctx, rid, s, send)
}

// writeLine writes the line of s to rollout rid's file (rid checked).
func (w *Writer) writeLine(ctx context.Context, rid string, s *Span, send func(context.Context) error) Result {
	if err := ctx.Err(); err != nil {
		return w.mark(ctx, Result{Outcome: OutcomeFailed, RolloutID: rid, Err: fmt.Errorf("line not started: %w", err)})
	}
	line, err := w.m.NewLine(rid, s)
	if err != nil {
		return w.mark(ctx, Result{Outcome: OutcomeRejected, RolloutID: rid, Err: fmt.Errorf("build line: %w", err)})
	}
	return w.commit(ctx, Result{RolloutID: rid}, rid, line, send)
}

// commit appends line to the file of name (a rollout id, or UnattributedRolloutID), or sends it,
// and returns r with its outcome.
func (w *Writer) commit(ctx context.Context, r Result, name string, line Line, send func(context.Context) error) Result {
	var n int64
	var dup bool
	var err error
	if send == nil {
		n, dup, err = w.append(name, line) // started: never abandoned (the store has no context)
	} else {
		err = send(context.WithoutCancel(ctx)) // appended, and counted, by the receiver
	}
	var dirErr error
	if errors.Is(err, ErrDirNotSynced) {
		dirErr, err = err, nil
	}
	switch {
	case errors.Is(err, syscall.ENAMETOOLONG):
		r.Outcome, r.Err = OutcomeRejected, fmt.Errorf("file name refused, retrying cannot help: %w", err)
		return w.mark(ctx, r)
	case errors.Is(err, ErrNotRegularFile):
		r.Outcome, r.Err = OutcomeRejected, fmt.Errorf("rollout file refused, retrying cannot help until it is replaced: %w", err)
		return w.mark(ctx, r)
	}
	if err != nil {
		r.Outcome, r.Err = OutcomeFailed, err
		return w.mark(ctx, r)
	}
	if dup {
		w.tel.dups.Add(ctx, 1, w.tel.kindAttr)
		r.Outcome = OutcomeWritten
		return w.done(ctx, r)
	}
	w.tel.bytes.Add(ctx, n, w.tel.kindAttr)
	if p := line.Problems(); len(p) > 0 {
		var perr error = p
		if dirErr != nil {
			perr = errors.Join(p, dirErr)
		}
		r.Outcome, r.Err = OutcomePartial, perr
		return w.mark(ctx, r)
	}
	if dirErr != nil {
		r.Outcome, r.Err = OutcomeWrittenDirUnsynced, dirErr
		return w.done(ctx, r)
	}
	r.Outcome = OutcomeWritten
	return w.done(ctx, r)
}

func (w *Writer) putBuf(bp *[]byte) {
	if cap(*bp) <= maxPooledLine {
		*bp = (*bp)[:0]
		w.bufs.Put(bp)
	}
}

// Discard accounts for a span of the writer's kind that its adapter will not write (received after
// the adapter's shutdown, or after the caller's context ended): OutcomeFailed with cause, its
// rollout marked like a failed write (a [TraceRouting] span that names no rollout fails with an
// empty RolloutID). Other spans give OutcomeIgnored. Safe for concurrent use.
func (w *Writer) Discard(ctx context.Context, s *Span, cause error) Result {
	rid, ok := w.m.Route(s)
	if !ok {
		if w.tr != nil && w.tr.Unrouted(s) { // a span of the writer's kind all the same
			return w.done(ctx, Result{Outcome: OutcomeFailed, Err: cause})
		}
		return w.done(ctx, Result{Outcome: OutcomeIgnored})
	}
	return w.mark(ctx, Result{Outcome: OutcomeFailed, RolloutID: rid, Err: cause})
}

// append appends line to rid's file and returns the bytes written and whether the line was a
// duplicate (also with an error wrapping [ErrDirNotSynced]: the line was written).
func (w *Writer) append(rid string, line Line) (n int64, dup bool, err error) {
	path := filepath.Join(w.store.dir, rid+w.m.FileSuffix())
	req := &appendReq{key: line.Key(), keyOf: w.m.KeyOf}
	bp := w.bufs.Get().(*[]byte)
	defer w.putBuf(bp)
	if sl, ok := line.(StreamedLine); ok && sl.Streamed() {
		req.hint = max(sl.SizeHint(), 0)
		req.write = func(emit func([]byte) error) error {
			var werr error
			*bp, werr = sl.WriteTo(*bp, func(p []byte) error {
				n += int64(len(p))
				return emit(p)
			})
			return werr
		}
	} else {
		*bp = line.AppendTo((*bp)[:0])
		if err := checkLine(*bp); err != nil {
			return 0, false, fmt.Errorf("append %s: %w", filepath.Base(path), err)
		}
		req.line, n = *bp, int64(len(*bp))
	}
	if err := w.store.enqueue(path, req); err != nil {
		err = fmt.Errorf("append %s: %w", filepath.Base(path), err)
		if errors.Is(err, ErrDirNotSynced) { // the line is on stable storage
			return n, req.dup, err
		}
		return 0, false, err
	}
	return n, req.dup, nil
}

// mark marks r's rollout incomplete when the mapping marks, then counts r.
func (w *Writer) mark(ctx context.Context, r Result) Result {
	if w.m.MarksIncomplete() && CheckRolloutID(r.RolloutID) == nil {
		r.Marked, r.MarkErr = true, w.store.MarkIncomplete(r.RolloutID)
	}
	return w.done(ctx, r)
}

// done counts r.
func (w *Writer) done(ctx context.Context, r Result) Result {
	w.tel.spans.Add(ctx, 1, w.tel.outcomeAttrs[r.Outcome])
	if r.Unattributed != "" {
		w.tel.unattributed.Add(ctx, 1, w.tel.reasonAttrs[r.Unattributed])
	}
	return r
}

// writerTelemetry holds a writer's instruments (see [WithMeterProvider]), with the attribute sets
// of its kind of line built once.
type writerTelemetry struct {
	spans, dups, bytes, unattributed metric.Int64Counter
	kindAttr                         metric.AddOption
	outcomeAttrs                     [numOutcomes]metric.AddOption
	reasonAttrs                      map[string]metric.AddOption
}

func (t *writerTelemetry) init(mp metric.MeterProvider, kind string) error {
	meter := mp.Meter(meterName)
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	t.spans = counter(semconv.GymtraceCaptureWriterSpansName, semconv.GymtraceCaptureWriterSpansUnit,
		semconv.GymtraceCaptureWriterSpansDescription)
	t.dups = counter(semconv.GymtraceCaptureWriterDuplicatesName, semconv.GymtraceCaptureWriterDuplicatesUnit,
		semconv.GymtraceCaptureWriterDuplicatesDescription)
	t.bytes = counter(semconv.GymtraceCaptureWriterBytesName, semconv.GymtraceCaptureWriterBytesUnit,
		semconv.GymtraceCaptureWriterBytesDescription)
	t.unattributed = counter(semconv.GymtraceCaptureWriterUnattributedName, semconv.GymtraceCaptureWriterUnattributedUnit,
		semconv.GymtraceCaptureWriterUnattributedDescription)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("capture writer: metrics: %w", err)
	}
	kindKV := semconv.GymtraceCaptureLineKindKey.String(kind)
	t.kindAttr = metric.WithAttributeSet(attribute.NewSet(kindKV))
	for o := range numOutcomes {
		t.outcomeAttrs[o] = metric.WithAttributeSet(attribute.NewSet(kindKV, semconv.GymtraceCaptureOutcomeKey.String(o.String())))
	}
	t.reasonAttrs = make(map[string]metric.AddOption, len(unattributedReasons))
	for _, r := range unattributedReasons {
		t.reasonAttrs[r] = metric.WithAttributeSet(attribute.NewSet(kindKV, semconv.GymtraceCaptureUnattributedReasonKey.String(r)))
	}
	return nil
}

// CheckRolloutID is the writer's id check, for a producer that wants a span's rollout id refused
// before it is recorded rather than at write time (agentobs.NewRecorder): the one id rule every
// entry point holds (SPEC §0 D12, [rollout.ValidateID]); an id that is not even a file name of the
// store (SPEC §2.2) gets the store's error (Gym's "Invalid rollout id: ..." text) joined to the
// rule's, so the message states the rule enforced and matches both [ErrInvalidRolloutID] and
// rollout.ErrInvalidID. Safe for concurrent use.
func CheckRolloutID(rid string) error {
	err := rollout.ValidateID(rid)
	if err == nil {
		return nil // every id D12 accepts is a file name of the store (rollout.ValidateID)
	}
	if storeErr := ValidateRolloutID(rid); storeErr != nil {
		return fmt.Errorf("%w; %w", storeErr, err)
	}
	return err
}
