package gymcaptureexporter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
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
	skipRecorded    bool
	observations    bool
	queueEnabled    bool
	logger          *zap.Logger
	meterProvider   metric.MeterProvider // the Collector's, for the span writers' counters
	traceWindow     capture.TraceWindow  // of the observations writer (SPEC §0 D18); zero: defaults

	writers atomic.Pointer[writers] // set by start
	closed  atomic.Bool
	store   atomic.Pointer[capture.Store] // set by start, closed by shutdown
}

// writers are the exporter's span writers over its store: records, and observation lines (nil
// when observations are off).
type writers struct {
	records, observations *capture.Writer
}

func newCaptureExporter(cfg *Config, set exporter.Settings) (*captureExporter, error) {
	opts, err := cfg.storeOptions()
	if err != nil {
		return nil, fmt.Errorf("gymcapture: %w", err)
	}
	e := &captureExporter{
		dir:             cfg.CaptureDir,
		storeOpts:       opts,
		includePayloads: cfg.IncludePayloads,
		skipRecorded:    cfg.SkipRecorded,
		observations:    cfg.Observations,
		traceWindow:     cfg.ObservationsTraceWindow.traceWindow(),
		queueEnabled:    cfg.QueueConfig.HasValue(),
		logger:          set.Logger,
		meterProvider:   set.TelemetrySettings.MeterProvider,
	}
	return e, nil
}

// start opens the capture store: it creates capture_dir and missing parents with dir_mode (SPEC
// §2.1), recovers the journals crashed writers left there (SPEC §0 D17) and, with durability
// "journal", opens the exporter's own. The error names the directory, the mode or the journal.
func (e *captureExporter) start(context.Context, component.Host) (err error) {
	recoverer, err := capture.NewStore(e.dir, append(slices.Clone(e.storeOpts), capture.WithDurability(capture.DurabilityPerRecord))...)
	if err != nil {
		return fmt.Errorf("gymcapture: %w", err)
	}
	rec, err := recoverer.RecoverJournals()
	if err != nil {
		return fmt.Errorf("gymcapture: %w", err)
	}
	if rec.Journals > 0 {
		e.logger.Info("gymcapture: recovered the journals of crashed writers", zap.String("capture_dir", e.dir),
			zap.Int("journals", rec.Journals), zap.Int("records", rec.Records), zap.Int("appended", rec.Appended))
	}
	for _, w := range rec.Warnings() {
		e.logger.Warn("gymcapture: "+w, zap.String("capture_dir", e.dir))
	}
	store, err := capture.NewStore(e.dir, e.storeOpts...)
	if err != nil {
		return fmt.Errorf("gymcapture: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, store.Close())
		}
	}()
	mp := capture.WithMeterProvider(e.meterProvider)
	w := &writers{}
	if w.records, err = capture.NewWriter(store, capture.ModelCallLines{WithoutPayloads: !e.includePayloads, SkipRecorded: e.skipRecorded}, mp); err != nil {
		return fmt.Errorf("gymcapture: %w", err)
	}
	if e.observations {
		if w.observations, err = capture.NewWriter(store, agentobs.ObservationLines{}, mp,
			capture.WithTraceWindow(e.traceWindow), capture.WithDeferredResults(e.logDeferred)); err != nil {
			return fmt.Errorf("gymcapture: %w", err)
		}
	}
	e.writers.Store(w)
	e.store.Store(store)
	if e.queueEnabled {
		e.logger.Warn("gymcapture: sending_queue is enabled: OTLP requests are acknowledged before their records are on stable storage, so a Collector crash can lose acknowledged records (disable the queue to keep the capture durability contract)",
			zap.String("capture_dir", e.dir))
	}
	return nil
}

// shutdown stops writing: later pushes write nothing, mark the model-call spans' rollouts
// incomplete (observation spans mark nothing) and return an error. The observation spans still
// held, waiting for their trace to name a rollout, are written to _unattributed.observations.jsonl
// (SPEC §0 D18). Every line already pushed is then on stable storage; a journaled store is closed
// (its rollout files fsynced, its journal removed), a per-record store holds nothing to close. It
// is safe without start and when called more than once.
func (e *captureExporter) shutdown(ctx context.Context) error {
	e.closed.Store(true)
	var err error
	if w := e.writers.Load(); w != nil && w.observations != nil {
		err = w.observations.Shutdown(ctx)
	}
	if s := e.store.Load(); s != nil {
		err = errors.Join(err, s.Close())
	}
	if err != nil {
		return fmt.Errorf("gymcapture: %w", err)
	}
	return nil
}

// pushTraces hands every span of td, in order, to the writers (pushSpan), each line durable before
// it returns: with the sending queue disabled, ConsumeTraces, and so the OTLP response, returns only
// after the fsync. A rejected span (no line can be made, the id fails SPEC §0 D12, or its file name
// is refused: capture.OutcomeRejected) is a permanent error, while the other
// spans are still written; a failed one (an I/O error, or ctx ended before it was started) gives a
// retryable error carrying only the failed spans (consumererror.NewTraces), so exporterhelper never
// rewrites the others; when the batch has both, the error is retryable and names the rejected
// spans too. A partial record (a payload written as null) marks its rollout and is no error.
//
// A span that is both a model-call span and an observation span (the conventions never make one)
// gets both lines, the observation line first: when that fails, the record is not started (the
// span fails, its rollout is marked incomplete and a retry writes both). An observation span that
// names no rollout on the span or its resource takes its trace's (SPEC §0 D18): at once when a
// span of its trace pushed earlier carried one, else it is held (no error: the push is
// acknowledged before the line is durable) until one arrives, or written to
// _unattributed.observations.jsonl when the trace window ends or at shutdown, counted by
// gymtrace.capture.writer.unattributed and logged once per trace.
func (e *captureExporter) pushTraces(ctx context.Context, td ptrace.Traces) error {
	w := e.writers.Load()
	if w == nil {
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
				switch o, err := e.pushSpan(ctx, w, sp, rs); o {
				case capture.OutcomeRejected:
					b.reject(err)
				case capture.OutcomeFailed:
					b.fail(err, i, j, rs, ss, sp)
				}
			}
		}
	}
	return b.err()
}

// pushSpan hands one span's view to the writers and returns its outcome for the push (a span
// received after shutdown fails), with the error of a rejected or failed one.
func (e *captureExporter) pushSpan(ctx context.Context, w *writers, sp ptrace.Span, rs ptrace.ResourceSpans) (capture.Outcome, error) {
	v := spanView(sp)
	v.Resource = spanAttributes(rs.Resource().Attributes())
	if e.closed.Load() {
		return e.drop(ctx, w, &v)
	}
	if w.observations != nil {
		r := w.observations.Write(ctx, &v)
		_, isCall := w.records.Route(&v)
		switch {
		case r.Outcome == capture.OutcomeIgnored, r.Outcome == capture.OutcomeHeld:
		case !isCall:
			return e.observationOutcome(r, &v)
		case r.Outcome == capture.OutcomeFailed:
			// Not started, so that a retry of the span never writes the record twice.
			e.observationOutcome(r, &v)
			return e.recordOutcome(w.records.Discard(ctx, &v, fmt.Errorf("record not started: %w", r.Err)), &v)
		case r.Outcome == capture.OutcomeRejected:
			// The record does not depend on the observation line: it is written, and the
			// push reports both (a retry of a failed record meets the same rejection).
			_, obsErr := e.observationOutcome(r, &v)
			o, err := e.recordOutcome(w.records.Write(ctx, &v), &v)
			if o == capture.OutcomeFailed {
				return o, errors.Join(err, obsErr)
			}
			return capture.OutcomeRejected, errors.Join(obsErr, err)
		}
	}
	return e.recordOutcome(w.records.Write(ctx, &v), &v)
}

// drop accounts for a span received after shutdown: the writers count a model-call or observation
// span as failed (capture.Writer.Discard), and the push fails it with errShutdown.
func (e *captureExporter) drop(ctx context.Context, w *writers, v *capture.Span) (capture.Outcome, error) {
	o := capture.OutcomeIgnored
	if w.observations != nil {
		if r := w.observations.Discard(ctx, v, errShutdown); r.Outcome != capture.OutcomeIgnored {
			e.logger.Error("gymcapture: observation span received after shutdown; observation not written",
				zap.String("rollout_id", r.RolloutID), zap.String("span_id", v.SpanID.String()))
			o = capture.OutcomeFailed
		}
	}
	if r := w.records.Discard(ctx, v, errShutdown); r.Outcome != capture.OutcomeIgnored {
		e.logger.Error("gymcapture: model-call span received after shutdown; record not written"+capture.MarkedSuffix(r),
			zap.String("rollout_id", r.RolloutID), zap.String("span_id", v.SpanID.String()))
		e.logMarkErr(r)
		o = capture.OutcomeFailed
	}
	if o == capture.OutcomeFailed {
		return o, errShutdown
	}
	return o, nil
}

// recordOutcome logs the writer's result for a model-call span and returns its outcome and error.
func (e *captureExporter) recordOutcome(r capture.Result, v *capture.Span) (capture.Outcome, error) {
	e.logMarkErr(r)
	sid := zap.String("span_id", v.SpanID.String())
	switch r.Outcome {
	case capture.OutcomePartial:
		e.logger.Warn("gymcapture: record written with a cut payload set to null; marking the rollout incomplete",
			zap.String("rollout_id", r.RolloutID), sid, zap.String("problems", r.Err.Error()))
		return r.Outcome, nil
	case capture.OutcomeWrittenDirUnsynced:
		e.logger.Warn("gymcapture: record written and fsynced, but its new capture file's directory entry may not survive a power loss (directory fsync failed)",
			zap.String("rollout_id", r.RolloutID), sid, zap.Error(r.Err))
		return r.Outcome, nil
	case capture.OutcomeWritten:
		if ce := e.logger.Check(zap.DebugLevel, "gymcapture: record written"); ce != nil {
			var callID string
			if v.Attributes != nil {
				if id, ok := v.Attributes.Lookup(string(semconv.GymtraceModelCallIDKey)); ok {
					callID = id.AsString()
				}
			}
			ce.Write(zap.String("rollout_id", r.RolloutID), zap.String("model_call_id", callID), sid)
		}
		return r.Outcome, nil
	case capture.OutcomeRejected, capture.OutcomeFailed:
		err := fmt.Errorf("gymcapture: %w", r.Err)
		msg := "gymcapture: model-call span rejected; record not written" + capture.MarkedSuffix(r)
		if r.Outcome == capture.OutcomeFailed {
			msg = "gymcapture: record not written (will be retried if retries are enabled)" + capture.MarkedSuffix(r)
		}
		e.logger.Error(msg, zap.String("rollout_id", r.RolloutID), sid, zap.Error(err))
		return r.Outcome, err
	}
	return r.Outcome, nil
}

// logMarkErr logs a failed incomplete marker: the loss is then invisible to readers.
func (e *captureExporter) logMarkErr(r capture.Result) {
	if r.MarkErr != nil {
		e.logger.Error("gymcapture: mark incomplete failed", zap.String("rollout_id", r.RolloutID), zap.Error(r.MarkErr))
	}
}

// batch collects the errors of one push and the spans to retry.
type batch struct {
	rejected []error // model-call and observation spans
	nObs     int     // how many of rejected are observation spans
	failed   []error
	retry    ptrace.Traces
	rs       ptrace.ResourceSpans // the retry copy of the resource of the last failed span
	ss       ptrace.ScopeSpans    // and of its scope
	at       [2]int               // the indexes of that resource and scope in the push
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
// The push hands spans over in order, so a resource or scope is copied once, at its first failed
// span.
func (b *batch) fail(err error, i, j int, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, sp ptrace.Span) {
	b.failed = append(b.failed, err)
	first := len(b.failed) == 1
	if first {
		b.retry = ptrace.NewTraces()
	}
	if first || b.at[0] != i {
		b.rs = b.retry.ResourceSpans().AppendEmpty()
		rs.Resource().CopyTo(b.rs.Resource())
		b.rs.SetSchemaUrl(rs.SchemaUrl())
	}
	if first || b.at != [2]int{i, j} {
		b.ss = b.rs.ScopeSpans().AppendEmpty()
		ss.Scope().CopyTo(b.ss.Scope())
		b.ss.SetSchemaUrl(ss.SchemaUrl())
	}
	b.at = [2]int{i, j}
	sp.CopyTo(b.ss.Spans().AppendEmpty())
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
