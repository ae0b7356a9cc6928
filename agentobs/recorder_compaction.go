package agentobs

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/gymtrace/gymtrace/semconv"
)

// Compaction is one context compaction in progress (SPEC §6.2 ContextCompactionObservation). Its
// methods are safe for concurrent use and do nothing on a nil or zero *Compaction.
type Compaction struct {
	rec *Recorder
	e   *entry
}

// CompactionResult is how a compaction ended ([Compaction.End]). Nil fields are unknown.
type CompactionResult struct {
	// Outcome is the outcome; "" derives it from Err: nil → completed, context.Canceled or
	// context.DeadlineExceeded → aborted, any other error → failed.
	Outcome CompactionOutcome
	// Err is the error that ended the compaction, if any (the span's status description and
	// error.type).
	Err error
	// TokensBefore and TokensAfter are the producer-reported context sizes in tokens (>= 0).
	TokensBefore, TokensAfter *int
	// Summary is the text that replaced the compacted context.
	Summary *string
	// FirstKeptItemID is the id of the first conversation item kept verbatim.
	FirstKeptItemID *string
}

// StartCompaction starts a compaction of the context of the invocation ctx carries; trigger says
// what triggered it ("auto", "manual"; "" for unknown). It returns a context carrying it: model
// calls made with that context ([Transport], [RecordModelCall]) are the compaction's own calls
// (model_calls, the summarizing calls), not the invocation's.
//
// Its span is "context_compaction", kind INTERNAL, child of ctx's span, with
// gen_ai.conversation.compacted true (and no gen_ai.operation.name: it is not a model call),
// gymtrace.rollout.id, gymtrace.agent.invocation.id and gymtrace.compaction.trigger. The
// compaction's before_model_call and after_model_call are the invocation's own calls recorded last
// before the compaction started and first after it ended (the rule of [BundleFromSpans]).
//
// Without an invocation in ctx nothing is recorded: it returns ctx and a nil *Compaction.
func StartCompaction(ctx context.Context, trigger string) (context.Context, *Compaction) {
	s := scopeFrom(ctx)
	if s == nil || s.inv == nil {
		return ctx, nil
	}
	r := s.rec
	attrs := []attribute.KeyValue{
		semconv.GenAIConversationCompacted(true),
		semconv.GymtraceRolloutID(r.rolloutID),
		semconv.GymtraceAgentInvocationIDKey.String(s.inv.id),
	}
	if trigger != "" {
		attrs = append(attrs, semconv.GymtraceCompactionTriggerKey.String(trigger))
	}
	sctx, e := r.startSpan(ctx, semconv.CompactionSpanName, r.now(), attrs)
	c := &Compaction{rec: r, e: e}
	return withScope(sctx, &scope{rec: r, inv: s.inv, comp: c}), c
}

// End ends the compaction with res; later calls do nothing. The span gets
// gymtrace.observation.status (the outcome), the gymtrace.compaction.* values of res,
// gymtrace.model_call.ids of its calls, error.type (the rule of [Invocation.End]) and status Error
// unless completed or unknown. Model calls recorded with the compaction's context after End belong
// to the invocation again.
func (c *Compaction) End(res CompactionResult) {
	if c == nil || c.e == nil {
		return
	}
	outcome := endStatus(res.Outcome, compactionOutcomes, res.Err, CompactionOutcomeCompleted, CompactionOutcomeAborted,
		CompactionOutcomeAborted, CompactionOutcomeFailed)
	var attrs []attribute.KeyValue
	if res.TokensBefore != nil {
		attrs = append(attrs, semconv.GymtraceCompactionTokensBeforeKey.Int(*res.TokensBefore))
	}
	if res.TokensAfter != nil {
		attrs = append(attrs, semconv.GymtraceCompactionTokensAfterKey.Int(*res.TokensAfter))
	}
	if res.Summary != nil {
		attrs = append(attrs, semconv.GymtraceCompactionSummaryKey.String(*res.Summary))
	}
	if res.FirstKeptItemID != nil {
		attrs = append(attrs, semconv.GymtraceCompactionFirstKeptItemIDKey.String(*res.FirstKeptItemID))
	}
	c.e.finish(c.rec, string(outcome), res.Err, "", attrs...)
}
