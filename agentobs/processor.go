package agentobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/drain"
)

// ProcessorOption configures an [ObservationProcessor].
type ProcessorOption interface {
	applyProcessor(*processorConfig)
}

type processorConfig struct {
	logger *slog.Logger
}

type processorOptionFunc func(*processorConfig)

func (f processorOptionFunc) applyProcessor(c *processorConfig) { f(c) }

// WithProcessorLogger sets the logger of write failures and dropped spans (default: slog.Default()
// at the time NewObservationProcessor runs). A nil logger keeps the default.
func WithProcessorLogger(l *slog.Logger) ProcessorOption {
	return processorOptionFunc(func(c *processorConfig) {
		if l != nil {
			c.logger = l
		}
	})
}

// ProcessorStats counts what an [ObservationProcessor] did with observation spans.
type ProcessorStats struct {
	// Lines is the number of observation lines appended durably.
	Lines int64
	// Failures is the number of observation spans whose line could not be written.
	Failures int64
	// Unrouted is the number of observation spans without a usable gymtrace.rollout.id (not
	// written: there is no file to write them to).
	Unrouted int64
	// Dropped is the number of observation spans that ended after Shutdown (not written).
	Dropped int64
}

// ObservationProcessor is an sdktrace.SpanProcessor that appends every observation span
// ([ObservationKind]) to its rollout's observations file, <rollout_id>.observations.jsonl beside the
// capture file, synchronously in OnEnd: when span.End returns, the line ([ObservationLine]) is on
// stable storage or its failure was counted and logged. The rollout is the span's
// gymtrace.rollout.id, which must be a valid file-name id (SPEC §2.2); spans without one are
// counted as unrouted. Other spans are ignored, and so is the sampled flag (observations never
// depend on sampling).
//
// It is safe for concurrent use; concurrent OnEnd calls for the same rollout share one fsync
// (group commit, [capture.Store.AppendObservation]), different rollouts never wait for each other.
// After Shutdown, OnEnd writes nothing and counts observation spans as dropped.
type ObservationProcessor struct {
	store  *capture.Store
	logger *slog.Logger

	lines, failures, unrouted, dropped atomic.Int64

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
			o.applyProcessor(&cfg)
		}
	}
	return &ObservationProcessor{store: store, logger: cfg.logger}, nil
}

// OnStart does nothing.
func (p *ObservationProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd appends s's line when s is an observation span (see [ObservationProcessor]).
func (p *ObservationProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	attrs := attrList(s.Attributes())
	if _, ok := ObservationKind(attrs); !ok {
		return
	}
	if !p.gate.Enter() {
		p.dropped.Add(1)
		p.logger.Error("gymtrace observations: span ended after shutdown; not written",
			"span_id", s.SpanContext().SpanID().String())
		return
	}
	defer p.gate.Leave()
	_ = p.write(context.Background(), s)
}

// write appends the line of observation span s; failures are counted and logged.
func (p *ObservationProcessor) write(ctx context.Context, s sdktrace.ReadOnlySpan) error {
	view := SpanFromReadOnly(s)
	rid, ok := RolloutIDOf(view.Attributes)
	if !ok || capture.ValidateRolloutID(rid) != nil {
		p.unrouted.Add(1)
		p.logger.Warn("gymtrace observations: observation span without a valid gymtrace.rollout.id; not written",
			"span_id", view.SpanID.String())
		return errors.New("agentobs: observation span without a valid gymtrace.rollout.id")
	}
	line := NewObservationLine(rid, view).AppendJSON(nil)
	if err := p.store.AppendObservation(context.WithoutCancel(ctx), rid, line); err != nil {
		p.failures.Add(1)
		p.logger.Error("gymtrace observations: line not written", "rollout_id", rid,
			"span_id", view.SpanID.String(), "error", err)
		return fmt.Errorf("agentobs: %w", err)
	}
	p.lines.Add(1)
	return nil
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

// Stats returns the processor's counters. Safe for concurrent use.
func (p *ObservationProcessor) Stats() ProcessorStats {
	return ProcessorStats{Lines: p.lines.Load(), Failures: p.failures.Load(), Unrouted: p.unrouted.Load(), Dropped: p.dropped.Load()}
}
