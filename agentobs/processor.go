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
	"github.com/gymtrace/gymtrace/internal/ojson"
	"github.com/gymtrace/gymtrace/semconv"
)

// ObservationLines is the [capture.LineMapping] of the observations file: an observation span
// ([ObservationKind]) with a non-empty string gymtrace.rollout.id becomes its [ObservationLine],
// appended to <rollout_id>.observations.jsonl beside the capture file. Other spans, and observation
// spans without a rollout id, are ignored (there is no file to write them to). A line is identified
// by its span (trace_id and span_id): a span whose line is already in the file (a sender's retry) is
// not appended again, as [BundleFromSpans] would keep only the first line of a span anyway. Lines
// not written mark nothing: the incomplete marker speaks for the capture file only. The zero value
// is ready to use and safe for concurrent use.
type ObservationLines struct{}

var _ capture.LineMapping = ObservationLines{}

// Kind returns semconv.GymtraceCaptureLineKindObservation.
func (ObservationLines) Kind() string { return semconv.GymtraceCaptureLineKindObservation }

// FileSuffix returns [capture.ObservationsFileSuffix].
func (ObservationLines) FileSuffix() string { return capture.ObservationsFileSuffix }

// MarksIncomplete returns false.
func (ObservationLines) MarksIncomplete() bool { return false }

// Route returns the rollout id of an observation span ([RolloutIDOf]).
func (ObservationLines) Route(s *capture.Span) (string, bool) {
	if _, ok := ObservationKind(s.Attributes); !ok {
		return "", false
	}
	return RolloutIDOf(s.Attributes)
}

// NewLine returns the span's [ObservationLine]; it never fails.
func (ObservationLines) NewLine(rolloutID string, s *capture.Span) (capture.Line, error) {
	return observationLine{NewObservationLine(rolloutID, *s)}, nil
}

// KeyOf returns the span identity (trace_id and span_id) of an observation line that is a strict
// JSON object, "" otherwise.
func (ObservationLines) KeyOf(line []byte) string {
	v, err := ojson.Parse(line)
	if err != nil {
		return ""
	}
	tid, _ := v.Get("trace_id")
	sid, _ := v.Get("span_id")
	t, ok1 := tid.AsString()
	s, ok2 := sid.AsString()
	if !ok1 || !ok2 || t == "" || s == "" {
		return ""
	}
	return t + s
}

// observationLine is an ObservationLine as a capture.Line.
type observationLine struct{ l ObservationLine }

func (o observationLine) Key() string {
	if !o.l.TraceID.IsValid() || !o.l.SpanID.IsValid() {
		return ""
	}
	return o.l.TraceID.String() + o.l.SpanID.String()
}

func (o observationLine) AppendTo(dst []byte) []byte { return o.l.AppendJSON(dst) }
func (o observationLine) Problems() capture.Problems { return nil }

// ProcessorOption configures an [ObservationProcessor].
type ProcessorOption func(*processorConfig)

type processorConfig struct {
	logger        *slog.Logger
	meterProvider metric.MeterProvider
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
// writer's gymtrace.capture.writer.spans, .duplicates and .bytes with gymtrace.capture.line_kind
// "observation" (see [capture.WithMeterProvider]), and gymtrace.observations.unattributed
// ([UnattributedCounter]). An observation span that did not reach its file shows as
// gymtrace.capture.writer.spans with gymtrace.capture.outcome "failed" (not written, or ended after
// Shutdown) or "rejected" (a rollout id that is not a safe file name), or as
// gymtrace.observations.unattributed (no rollout id). Default: a no-op provider (libraries never
// read the global one); nil keeps the default.
func WithProcessorMeterProvider(mp metric.MeterProvider) ProcessorOption {
	return func(c *processorConfig) { c.meterProvider = mp }
}

// errShutdown is the cause of an observation span that ended after Shutdown.
var errShutdown = errors.New("agentobs: observation processor shut down")

// ObservationProcessor is an sdktrace.SpanProcessor that appends every observation span
// ([ObservationKind]) to its rollout's observations file, <rollout_id>.observations.jsonl beside the
// capture file, synchronously in OnEnd: when span.End returns, the line ([ObservationLine]) is on
// stable storage or its failure was counted and logged. It is a thin adapter: the span's view
// ([sdkspan.FromReadOnly]) goes to a [capture.Writer] with the [ObservationLines] mapping. The
// rollout is the span's gymtrace.rollout.id, which must be a valid file-name id (SPEC §2.2); a span
// with an unsafe one is rejected, a span without one is counted as unattributed
// ([UnattributedCounter]).
// Other spans are ignored, and so is the sampled flag (observations never depend on sampling).
// Counters go to the meter provider of [WithProcessorMeterProvider].
//
// It is safe for concurrent use; concurrent OnEnd calls for the same rollout share one fsync
// (group commit), different rollouts never wait for each other. After Shutdown, OnEnd writes
// nothing and counts observation spans as failed.
type ObservationProcessor struct {
	w            *capture.Writer
	unattributed *UnattributedCounter
	logger       *slog.Logger

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
	w, err := capture.NewWriter(store, ObservationLines{}, capture.WithMeterProvider(cfg.meterProvider))
	if err != nil {
		return nil, fmt.Errorf("agentobs: observation processor: %w", err)
	}
	u, err := NewUnattributedCounter(cfg.meterProvider)
	if err != nil {
		return nil, fmt.Errorf("agentobs: observation processor: %w", err)
	}
	return &ObservationProcessor{w: w, unattributed: u, logger: cfg.logger}, nil
}

// OnStart does nothing.
func (p *ObservationProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd appends s's line when s is an observation span (see [ObservationProcessor]).
func (p *ObservationProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	view := sdkspan.FromReadOnly(s)
	ctx := context.Background()
	if !p.gate.Enter() {
		if r := p.w.Discard(ctx, &view, errShutdown); r.Outcome != capture.OutcomeIgnored {
			p.logger.Error("gymtrace observations: span ended after shutdown; not written",
				"rollout_id", r.RolloutID, "span_id", view.SpanID.String())
		} else {
			p.countUnattributed(ctx, &view)
		}
		return
	}
	defer p.gate.Leave()
	switch r := p.w.Write(ctx, &view); r.Outcome {
	case capture.OutcomeWritten:
	case capture.OutcomeWrittenDirUnsynced:
		p.logger.Warn("gymtrace observations: line written and fsynced, but its new file's directory entry may not survive a power loss (directory fsync failed)",
			"rollout_id", r.RolloutID, "span_id", view.SpanID.String(), "error", r.Err)
	case capture.OutcomeIgnored:
		p.countUnattributed(ctx, &view)
	case capture.OutcomeRejected:
		p.logger.Warn("gymtrace observations: observation span without a valid gymtrace.rollout.id; not written",
			"span_id", view.SpanID.String(), "error", r.Err)
	default:
		p.logger.Error("gymtrace observations: line not written", "rollout_id", r.RolloutID,
			"span_id", view.SpanID.String(), "error", r.Err)
	}
}

// countUnattributed counts and logs v when it is an observation span that names no rollout.
func (p *ObservationProcessor) countUnattributed(ctx context.Context, v *capture.Span) {
	if kind, ok := p.unattributed.Add(ctx, v); ok {
		p.logger.Warn("gymtrace observations: observation span without a gymtrace.rollout.id; not written",
			"span_id", v.SpanID.String(), "kind", kind)
	}
}

// ForceFlush returns ctx's error, or nil: lines are written synchronously in OnEnd, so nothing is
// ever pending.
func (p *ObservationProcessor) ForceFlush(ctx context.Context) error { return ctx.Err() }

// Shutdown stops writing and waits for OnEnd calls in progress to finish, or for ctx to be done
// (then it returns an error wrapping ctx's; those writes still complete). It runs once; later calls
// return the first result.
func (p *ObservationProcessor) Shutdown(ctx context.Context) error {
	p.shutdownOnce.Do(func() {
		if err := p.gate.Drain(ctx); err != nil {
			p.shutdownErr = fmt.Errorf("agentobs: observation processor shutdown: %w", err)
		}
	})
	return p.shutdownErr
}
