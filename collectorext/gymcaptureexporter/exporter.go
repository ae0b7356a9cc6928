package gymcaptureexporter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
)

var (
	// errNotStarted is returned by pushTraces before Start.
	errNotStarted = errors.New("gymcapture: exporter not started")
	// errShutdown is returned for model-call and observation spans received after Shutdown.
	errShutdown = errors.New("gymcapture: exporter shut down")
)

// captureExporter writes the capture record of every model-call span it is pushed, and the
// observation line of every agent-observation span (observations.go). Its methods are the start,
// shutdown and push functions of an exporterhelper traces exporter. It is safe for concurrent use:
// lines of different rollouts never wait for each other, concurrent lines of one file share one
// fsync (capture.Store group commit).
type captureExporter struct {
	dir             string
	storeOpts       []capture.StoreOption
	includePayloads bool
	observations    bool
	queueEnabled    bool
	logger          *zap.Logger
	tel             *telemetry

	store  atomic.Pointer[capture.Store]
	closed atomic.Bool
	bufs   sync.Pool
}

func newCaptureExporter(cfg *Config, set exporter.Settings) (*captureExporter, error) {
	opts, err := cfg.storeOptions()
	if err != nil {
		return nil, fmt.Errorf("gymcapture: %w", err)
	}
	tel, err := newTelemetry(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	e := &captureExporter{
		dir:             cfg.CaptureDir,
		storeOpts:       opts,
		includePayloads: cfg.IncludePayloads,
		observations:    cfg.Observations,
		queueEnabled:    cfg.QueueConfig.HasValue(),
		logger:          set.Logger,
		tel:             tel,
	}
	e.bufs.New = func() any { b := make([]byte, 0, 4096); return &b }
	return e, nil
}

// start opens the capture store: it creates capture_dir and missing parents with dir_mode (SPEC
// §2.1). The error names the directory or the mode.
func (e *captureExporter) start(context.Context, component.Host) error {
	store, err := capture.NewStore(e.dir, e.storeOpts...)
	if err != nil {
		return fmt.Errorf("gymcapture: %w", err)
	}
	e.store.Store(store)
	if e.queueEnabled {
		e.logger.Warn("gymcapture: sending_queue is enabled: OTLP requests are acknowledged before their records are on stable storage, so a Collector crash can lose acknowledged records (disable the queue to keep the capture durability contract)",
			zap.String("capture_dir", e.dir))
	}
	return nil
}

// shutdown stops writing: later pushes write nothing, mark the model-call spans' rollouts
// incomplete (observation spans mark nothing) and return an error. The store holds no open files,
// so there is nothing to flush or close: every line already pushed is on stable storage. It is
// safe without start and when called more than once.
func (e *captureExporter) shutdown(context.Context) error {
	e.closed.Store(true)
	return nil
}

// pushTraces writes the record of every model-call span of td, in order, each durably (flock,
// write, fsync; capture.Store.Append or AppendStream) before it returns: with the sending queue disabled,
// ConsumeTraces, and so the OTLP response, returns only after the fsync.
//
// A span is a model-call span when it carries a string gymtrace.rollout.id and a
// gymtrace.model_call.id; other spans are ignored and counted. A model-call span whose record
// cannot be rebuilt (a required attribute missing or mistyped, a rollout id that is not a safe
// file name) is rejected: its rollout is marked incomplete and the span gives a permanent error,
// while the other spans are still written. A record written with a payload set to null (cut by an
// attribute limit, stripped, not a JSON object, or attributes dropped by a count limit) marks its
// rollout incomplete and is no error. A record not written because of an I/O error (or because
// ctx ended before it was started) marks its rollout incomplete and gives a retryable error
// carrying only the failed spans (consumererror.NewTraces), so exporterhelper retries those and
// never rewrites the others; when the batch has both, the error is retryable and names the
// rejected spans too.
//
// With observations enabled, an agent-observation span (agentobs.ObservationKind: invoke_agent,
// execute_tool, compaction and sandbox spans) gets its line appended to
// <rollout_id>.observations.jsonl the same way, in the same pass (pushObservation, which gives its
// outcomes). A span that is both a model-call span and an observation span (the conventions never
// make one) gets both, the observation line first: when that line fails, the record is not started
// (the span fails, its rollout is marked incomplete and a retry of the span writes both), so a
// retry never writes a record twice; a repeated observation line is harmless (the mapping keeps
// the first line of a span id). Such a span is counted once, by its record's outcome.
func (e *captureExporter) pushTraces(ctx context.Context, td ptrace.Traces) error {
	store := e.store.Load()
	if store == nil {
		return errNotStarted
	}
	var b batch
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		rs := rss.At(i)
		sss := rs.ScopeSpans()
		for j := range sss.Len() {
			ss := sss.At(j)
			spans := ss.Spans()
			for k := range spans.Len() {
				sp := spans.At(k)
				o, err := e.pushSpan(ctx, store, sp)
				e.tel.add(ctx, o)
				switch o {
				case outcomeRejected:
					b.reject(err)
				case outcomeFailed, outcomeDropped:
					b.fail(err, i, j, rs, ss, sp)
				}
			}
		}
	}
	return b.err()
}

// pushSpan handles one span and returns its outcome, with the error of a rejected, failed or
// dropped one.
func (e *captureExporter) pushSpan(ctx context.Context, store *capture.Store, sp ptrace.Span) (outcome, error) {
	attrs := spanAttributes(sp.Attributes())
	rid, isCall := capture.ModelCallRollout(attrs)
	if e.observations {
		obs := observationAttributes{attrs}
		if _, ok := agentobs.ObservationKind(obs); ok {
			o, err := e.pushObservation(ctx, store, obs, sp)
			if !isCall {
				return o, err
			}
			if o == outcomeFailed {
				return outcomeFailed, e.fail(store, rid, sp, fmt.Errorf("gymcapture: record not started: %w", err))
			}
		}
	}
	if !isCall {
		return outcomeIgnored, nil
	}
	if err := checkRolloutID(rid); err != nil {
		return outcomeRejected, e.reject(store, rid, sp, fmt.Errorf("gymcapture: %w", err))
	}
	if e.closed.Load() {
		e.logger.Error("gymcapture: model-call span received after shutdown; record not written, marking the rollout incomplete",
			zap.String("rollout_id", rid), zap.String("span_id", sp.SpanID().String()))
		e.markIncomplete(store, rid)
		return outcomeDropped, errShutdown
	}
	if err := ctx.Err(); err != nil {
		return outcomeFailed, e.fail(store, rid, sp, fmt.Errorf("gymcapture: record not started: %w", err))
	}

	line, err := e.spanLine(attrs, sp)
	if err != nil {
		return outcomeRejected, e.reject(store, rid, sp, fmt.Errorf("gymcapture: build record: %w", err))
	}
	bp := e.bufs.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= 1<<20 {
			*bp = (*bp)[:0]
			e.bufs.Put(bp)
		}
	}()
	if *bp, err = store.AppendSpanLine(context.WithoutCancel(ctx), rid, line, *bp); err != nil {
		if errors.Is(err, capture.ErrInvalidRolloutID) {
			return outcomeRejected, e.reject(store, rid, sp, fmt.Errorf("gymcapture: %w", err))
		}
		return outcomeFailed, e.fail(store, rid, sp, fmt.Errorf("gymcapture: %w", err))
	}
	problems := line.Problems()
	if n := sp.DroppedAttributesCount(); n > 0 {
		// A count limit dropped attributes: a payload and its size may be among them, so the
		// record cannot be trusted whole (DESIGN.md "Payloads travel on the span").
		problems = append(problems, capture.Problem{Key: droppedAttributesKey, Reason: fmt.Sprintf("%d attributes dropped by a span attribute count limit", n)})
	}
	if len(problems) > 0 {
		e.logger.Warn("gymcapture: record written with a cut payload set to null; marking the rollout incomplete",
			zap.String("rollout_id", rid), zap.String("span_id", sp.SpanID().String()), zap.String("problems", problems.Error()))
		e.markIncomplete(store, rid)
		return outcomePartial, nil
	}
	return outcomeWritten, nil
}

// droppedAttributesKey names the span's dropped attributes in a capture.Problem, as the SDK
// exporter does.
const droppedAttributesKey = "(dropped attributes)"

// spanLine reads the capture line of model-call span sp (capture.NewSpanLine: the one record <->
// attribute mapping, with the span's ids); without payloads when the config leaves them out.
func (e *captureExporter) spanLine(attrs spanAttributes, sp ptrace.Span) (*capture.SpanLine, error) {
	var look capture.AttributeLookup = attrs
	if !e.includePayloads {
		look = withoutPayloads{attrs}
	}
	var traceID, spanID string
	if tid := sp.TraceID(); !tid.IsEmpty() {
		traceID = tid.String()
	}
	if sid := sp.SpanID(); !sid.IsEmpty() {
		spanID = sid.String()
	}
	return capture.NewSpanLine(look, sp.StartTimestamp().AsTime(), sp.EndTimestamp().AsTime(), traceID, spanID)
}

// reject logs a span whose record cannot be rebuilt and marks its rollout incomplete; it returns
// err.
func (e *captureExporter) reject(store *capture.Store, rid string, sp ptrace.Span, err error) error {
	e.logger.Error("gymcapture: model-call span rejected; record not written, marking the rollout incomplete",
		zap.String("rollout_id", rid), zap.String("span_id", sp.SpanID().String()), zap.Error(err))
	e.markIncomplete(store, rid)
	return err
}

// fail logs a record that was not written and marks its rollout incomplete (SPEC §2.6: at least
// one write for the rollout failed, even if a retry later succeeds); it returns err.
func (e *captureExporter) fail(store *capture.Store, rid string, sp ptrace.Span, err error) error {
	e.logger.Error("gymcapture: record not written (will be retried if retries are enabled); marking the rollout incomplete",
		zap.String("rollout_id", rid), zap.String("span_id", sp.SpanID().String()), zap.Error(err))
	e.markIncomplete(store, rid)
	return err
}

func (e *captureExporter) markIncomplete(store *capture.Store, rid string) {
	if checkRolloutID(rid) != nil {
		return // no file may be named after it; the rejection was logged
	}
	if err := store.MarkIncomplete(rid); err != nil {
		e.logger.Error("gymcapture: mark incomplete failed", zap.String("rollout_id", rid), zap.Error(err))
	}
}

// batch collects the errors of one push and the spans to retry.
type batch struct {
	rejected []error // model-call and observation spans
	nObs     int     // how many of rejected are observation spans
	failed   []error
	retry    ptrace.Traces
	rsIdx    map[int]ptrace.ResourceSpans
	ssIdx    map[[2]int]ptrace.ScopeSpans
}

// reject records the error of a rejected span.
func (b *batch) reject(err error) {
	b.rejected = append(b.rejected, err)
	var oe observationError
	if errors.As(err, &oe) {
		b.nObs++
	}
}

// fail records err and copies sp, under copies of its resource and scope, into the retry data.
func (b *batch) fail(err error, i, j int, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, sp ptrace.Span) {
	b.failed = append(b.failed, err)
	if b.rsIdx == nil {
		b.retry = ptrace.NewTraces()
		b.rsIdx = map[int]ptrace.ResourceSpans{}
		b.ssIdx = map[[2]int]ptrace.ScopeSpans{}
	}
	r, ok := b.rsIdx[i]
	if !ok {
		r = b.retry.ResourceSpans().AppendEmpty()
		rs.Resource().CopyTo(r.Resource())
		r.SetSchemaUrl(rs.SchemaUrl())
		b.rsIdx[i] = r
	}
	s, ok := b.ssIdx[[2]int{i, j}]
	if !ok {
		s = r.ScopeSpans().AppendEmpty()
		ss.Scope().CopyTo(s.Scope())
		s.SetSchemaUrl(ss.SchemaUrl())
		b.ssIdx[[2]int{i, j}] = s
	}
	sp.CopyTo(s.Spans().AppendEmpty())
}

// err returns the push's result: nil; a retryable consumererror.Traces holding only the failed
// spans (naming the rejected ones too); or a permanent error for rejected spans alone.
func (b *batch) err() error {
	switch {
	case len(b.failed) > 0:
		errs := b.failed
		if len(b.rejected) > 0 {
			errs = append(errs, fmt.Errorf("%s rejected (not retried): %w", b.rejectedCounts(), errors.Join(b.rejected...)))
		}
		return consumererror.NewTraces(errors.Join(errs...), b.retry)
	case len(b.rejected) > 0:
		return consumererror.NewPermanent(errors.Join(b.rejected...))
	}
	return nil
}

// rejectedCounts says how many spans of each kind were rejected, e.g. "2 model-call spans, 1
// observation spans".
func (b *batch) rejectedCounts() string {
	calls := len(b.rejected) - b.nObs
	switch {
	case b.nObs == 0:
		return fmt.Sprintf("%d model-call spans", calls)
	case calls == 0:
		return fmt.Sprintf("%d observation spans", b.nObs)
	}
	return fmt.Sprintf("%d model-call spans, %d observation spans", calls, b.nObs)
}
