package agentobs

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/gymtrace/gymtrace/semconv"
)

// ToolCallOption configures a tool call started by [StartToolCall].
type ToolCallOption func(*toolCallConfig)

type toolCallConfig struct {
	sandboxID string
}

// WithSandboxID names the sandbox the tool runs in (sandbox_id, gymtrace.sandbox.id): the
// enclosing sandbox, shared by every call that runs there — not a per-call resource attribution.
// Default: none.
func WithSandboxID(id string) ToolCallOption {
	return func(c *toolCallConfig) { c.sandboxID = id }
}

// ToolCall is one tool call in progress (SPEC §6.2 ToolCallObservation), timed by the recorder
// (timing_source executor). Its methods are safe for concurrent use and do nothing on a nil or
// zero *ToolCall.
type ToolCall struct {
	rec    *Recorder
	e      *entry
	callID string
}

// StartToolCall starts the tool call toolCallID (the model's id of the call, gen_ai.tool.call.id) of
// tool name (gen_ai.tool.name) in the invocation ctx carries, and returns a context carrying it: a
// subagent started from that context is spawned by this tool call. The interval starts now; [End]
// ends it.
//
// Its span is "execute_tool {name}", kind INTERNAL, child of ctx's span, with gen_ai.operation.name
// execute_tool, gen_ai.tool.name, gen_ai.tool.call.id, gymtrace.rollout.id,
// gymtrace.agent.invocation.id (the invocation), gymtrace.tool.timing_source executor and
// gymtrace.sandbox.id ([WithSandboxID]). An empty toolCallID is recorded as missing: the mapping
// then reports gap observation_span_invalid instead of a tool call (tool_call_id is required).
//
// Without an invocation in ctx nothing is recorded: it returns ctx and a nil *ToolCall, whose End
// does nothing.
func StartToolCall(ctx context.Context, name, toolCallID string, opts ...ToolCallOption) (context.Context, *ToolCall) {
	s := scopeFrom(ctx)
	if s == nil || s.inv == nil {
		return ctx, nil
	}
	var cfg toolCallConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	r := s.rec
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationName(semconv.GenAIOperationNameExecuteTool),
		semconv.GymtraceRolloutID(r.rolloutID),
		semconv.GymtraceAgentInvocationIDKey.String(s.inv.id),
		semconv.GymtraceToolTimingSourceKey.String(string(TimingSourceExecutor)),
	}
	if name != "" {
		attrs = append(attrs, semconv.GenAIToolName(name))
	}
	if toolCallID != "" {
		attrs = append(attrs, semconv.GenAIToolCallID(toolCallID))
	}
	if cfg.sandboxID != "" {
		attrs = append(attrs, semconv.GymtraceSandboxIDKey.String(cfg.sandboxID))
	}
	sctx, e := r.startSpan(ctx, semconv.ExecuteToolSpanName(name), r.now(), attrs)
	tc := &ToolCall{rec: r, e: e, callID: toolCallID}
	return withScope(sctx, &scope{rec: r, inv: s.inv, tool: tc, comp: s.comp}), tc
}

// End ends the tool call's interval now; later calls do nothing. Its status is
// [WithToolCallStatus], else derived from err: nil → completed; context.DeadlineExceeded
// (errors.Is) → timeout; context.Canceled → cancelled; any other error → failed. error_type
// follows the rule of [Invocation.End]. The span gets gymtrace.observation.status, error.type and
// status Error (with err's text) unless completed or unknown.
func (tc *ToolCall) End(err error, opts ...EndOption) {
	if tc == nil || tc.e == nil {
		return
	}
	cfg := newEndConfig(opts)
	status := endStatus(cfg.toolStatus, toolCallStatuses, err, ToolCallStatusCompleted, ToolCallStatusTimeout,
		ToolCallStatusCancelled, ToolCallStatusFailed)
	tc.e.finish(tc.rec, string(status), err, cfg.errorType)
}
