package agentobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"go.opentelemetry.io/otel/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/sdkspan"
	"github.com/gymtrace/gymtrace/internal/drain"
	"github.com/gymtrace/gymtrace/semconv"
)

// ProcessorOption configures an [ObservationProcessor].
type ProcessorOption func(*processorConfig)

type processorConfig struct {
	logger        *slog.Logger
	meterProvider metric.MeterProvider
	window        capture.TraceWindow
}

// WithProcessorLogger sets the logger of write failures and dropped spans (default: slog.Default()
// at the time NewObservationProcessor runs). A nil logger keeps the default.
func WithProcessorLogger(l *slog.Logger) ProcessorOption {
	return func(c *processorConfig) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithProcessorMeterProvider sets the meter provider of the processor's counters: the span
// writer's gymtrace.capture.writer.spans, .duplicates, .bytes and .unattributed with
// gymtrace.capture.line_kind "observation" (see [capture.WithMeterProvider]). An observation span
// that did not reach its rollout's file shows as gymtrace.capture.writer.spans with
// gymtrace.capture.outcome "failed" (not written, or ended after Shutdown) or "rejected" (a rollout
// id that is not a safe file name, or a span the span limits cut: see [ObservationLines]), or in
// gymtrace.capture.writer.unattributed (no rollout id on the span, its resource or its trace:
// written to _unattributed.observations.jsonl, SPEC §0 D18); a line written without the events,
// links or attributes its span lost to a count limit shows as outcome "partial".
// Default: a no-op provider (libraries never read the global one); nil keeps the default.
func WithProcessorMeterProvider(mp metric.MeterProvider) ProcessorOption {
	return func(c *processorConfig) { c.meterProvider = mp }
}

// WithProcessorTraceWindow sets the trace window within which an observation span that names no
// rollout inherits its trace's (SPEC §0 D18; [capture.TraceWindow], defaults 1 minute, 4096 traces,
// 16384 held spans, 64 MiB held). Default: the defaults.
func WithProcessorTraceWindow(tw capture.TraceWindow) ProcessorOption {
	return func(c *processorConfig) { c.window = tw }
}

// errShutdown is the cause of an observation span that ended after Shutdown.
var errShutdown = errors.New("agentobs: observation processor shut down")

// ObservationProcessor is an sdktrace.SpanProcessor that appends every observation span
// ([ObservationKind]) to its rollout's observations file, <rollout_id>.observations.jsonl beside the
// capture file, synchronously in OnEnd: when span.End returns, the line ([ObservationLine]) is on
// stable storage or its failure was counted and logged. It is a thin adapter: the span's view
// ([sdkspan.FromReadOnly]) goes to a [capture.Writer] with the [ObservationLines] mapping. The
// rollout is the span's gymtrace.rollout.id, else its resource's (OTEL_RESOURCE_ATTRIBUTES), which
// must hold SPEC §0 D12's rule; a span with an unsafe one is rejected. A span with neither takes
// the rollout of its trace as any span this processor saw carrying one named it (the proxy's
// model-call spans, when they end in the same provider, or the agent's own attributed spans),
// within the trace window ([WithProcessorTraceWindow]); until one does, it is held in memory, and
// it goes to _unattributed.observations.jsonl when the window ends, at ForceFlush or at Shutdown
// (SPEC §0 D18), logged once per trace with the reason. A held span is not durable when span.End
// returns.
// Span limits never damage a line unseen ([ObservationLines]): a span whose limits cut what its
// line keeps — its gen_ai.operation.name cut to a strict prefix of invoke_agent or execute_tool, or
// a [Recorder] span whose kept attributes were cut or dropped — is rejected (logged with the value
// and the limit to raise, counted as "rejected"), and a span that lost events, links or attributes
// to a count limit is written with its dropped counts and counted and logged as "partial".
// Other spans are ignored, and so is the sampled flag (observations never depend on sampling).
// Counters go to the meter provider of [WithProcessorMeterProvider].
//
// It is safe for concurrent use; concurrent OnEnd calls for the same rollout share one fsync
// (group commit), different rollouts never wait for each other. After Shutdown, OnEnd writes
// nothing and counts observation spans as failed. Build one with [NewObservationProcessor]: a nil
// or zero ObservationProcessor writes nothing (OnEnd does nothing; ForceFlush returns ctx's error,
// Shutdown nil), as a zero exporter.DurableProcessor does.
type ObservationProcessor struct {
	w      *capture.Writer
	logger *slog.Logger

	gate drain.Gate // OnEnd calls in flight; closed by Shutdown

	shutdownOnce sync.Once
	shutdownErr  error
}

var _ sdktrace.SpanProcessor = (*ObservationProcessor)(nil)

// NewObservationProcessor returns a processor appending to store's observations files. It returns
// an error when store is nil.
func NewObservationProcessor(store *capture.Store, opts ...ProcessorOption) (*ObservationProcessor, error) {
	if store == nil {
		return nil, errors.New("agentobs: observation processor: store is nil")
	}
	cfg := processorConfig{logger: slog.Default()}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	p := &ObservationProcessor{logger: cfg.logger}
	w, err := capture.NewWriter(store, ObservationLines{}, capture.WithMeterProvider(cfg.meterProvider),
		capture.WithTraceWindow(cfg.window), capture.WithDeferredResults(p.logDeferred))
	if err != nil {
		return nil, fmt.Errorf("agentobs: observation processor: %w", err)
	}
	p.w = w
	return p, nil
}

// unbuilt reports a nil or zero processor (not made by [NewObservationProcessor]).
func (p *ObservationProcessor) unbuilt() bool { return p == nil || p.w == nil }

// OnStart does nothing.
func (p *ObservationProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd appends s's line when s is an observation span (see [ObservationProcessor]).
func (p *ObservationProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	if p.unbuilt() || s == nil {
		return
	}
	view := sdkspan.FromReadOnly(s)
	ctx := context.Background()
	if !p.gate.Enter() {
		if r := p.w.Discard(ctx, &view, errShutdown); r.Outcome != capture.OutcomeIgnored {
			p.logger.Error("gymtrace observations: span ended after shutdown; not written",
				"rollout_id", r.RolloutID, "span_id", view.SpanID.String())
		}
		return
	}
	defer p.gate.Leave()
	p.logResult(p.w.Write(ctx, &view), view.TraceID.String(), view.SpanID.String())
}

// logResult logs what the writer did with one observation span.
func (p *ObservationProcessor) logResult(r capture.Result, traceID, spanID string) {
	switch r.Outcome {
	case capture.OutcomeIgnored, capture.OutcomeHeld:
		return
	case capture.OutcomeWritten:
		switch r.Unattributed {
		case "":
		case semconv.GymtraceUnattributedNoTraceID:
			p.logger.Warn("gymtrace observations: observation span without a valid trace id; written to "+capture.UnattributedObservationsFile,
				"span_id", spanID, "reason", r.Unattributed)
		default:
			p.logger.Warn("gymtrace observations: observation span names no rollout (no gymtrace.rollout.id on the span, its resource or its trace); written to "+capture.UnattributedObservationsFile,
				"trace_id", traceID, "span_id", spanID, "reason", r.Unattributed)
		}
	case capture.OutcomeWrittenDirUnsynced:
		p.logger.Warn("gymtrace observations: line written and fsynced, but its new file's directory entry may not survive a power loss (directory fsync failed)",
			"rollout_id", r.RolloutID, "span_id", spanID, "error", r.Err)
	case capture.OutcomePartial:
		p.logger.Warn("gymtrace observations: line written without what the span's limits dropped (its bundle lacks it)",
			"rollout_id", r.RolloutID, "span_id", spanID, "unattributed_reason", r.Unattributed, "error", r.Err)
	case capture.OutcomeRejected:
		p.logger.Warn("gymtrace observations: observation span rejected (retrying cannot help); not written",
			"rollout_id", r.RolloutID, "span_id", spanID, "error", r.Err)
	default:
		p.logger.Error("gymtrace observations: line not written", "rollout_id", r.RolloutID,
			"span_id", spanID, "unattributed_reason", r.Unattributed, "error", r.Err)
	}
}

// logDeferred logs what the writer did with the held spans of one trace: once for the trace when
// they went to the unattributed file, and each failure.
func (p *ObservationProcessor) logDeferred(_ context.Context, d capture.Deferred) {
	tid := d.TraceID.String()
	if d.Reason != "" {
		p.logger.Warn("gymtrace observations: no span of the trace named a rollout (gymtrace.rollout.id on a span or its resource) within the trace window; its observation spans were written to "+capture.UnattributedObservationsFile,
			"trace_id", tid, "spans", len(d.Spans), "reason", d.Reason)
	}
	for i, r := range d.Results {
		if r.Outcome != capture.OutcomeWritten {
			r.Unattributed = "" // logged above
			p.logResult(r, tid, d.Spans[i].SpanID.String())
		}
	}
}

// ForceFlush writes the held observation spans — those whose trace has named no rollout yet — to
// _unattributed.observations.jsonl (reason "flushed", SPEC §0 D18; every other line is written
// synchronously in OnEnd) and returns the errors of lines that failed, joined with ctx's error.
func (p *ObservationProcessor) ForceFlush(ctx context.Context) error {
	if p.unbuilt() {
		return ctx.Err()
	}
	err := p.w.ForceFlush(ctx)
	if err != nil {
		err = fmt.Errorf("agentobs: observation processor flush: %w", err)
	}
	return errors.Join(err, ctx.Err())
}

// Shutdown stops writing and waits for OnEnd calls in progress to finish, or for ctx to be done
// (then it returns an error wrapping ctx's; those writes still complete), then writes the held
// spans like ForceFlush. It runs once; later calls return the first result.
func (p *ObservationProcessor) Shutdown(ctx context.Context) error {
	if p.unbuilt() {
		return nil
	}
	p.shutdownOnce.Do(func() {
		err := p.gate.Drain(ctx)
		err = errors.Join(err, p.w.Shutdown(ctx))
		if err != nil {
			p.shutdownErr = fmt.Errorf("agentobs: observation processor shutdown: %w", err)
		}
	})
	return p.shutdownErr
}
