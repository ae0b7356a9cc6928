package agentobs

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.opentelemetry.io/otel/attribute"

	"github.com/gymtrace/gymtrace/semconv"
)

// InvocationOption configures an invocation started by [Recorder.StartInvocation].
type InvocationOption func(*invocationConfig)

type invocationConfig struct {
	agentID string
}

// WithAgentID sets gen_ai.agent.id, the agent's own identifier in the GenAI conventions (e.g. an
// assistant id). It is not the invocation id: many invocations of one agent share it. Default: not
// set.
func WithAgentID(id string) InvocationOption {
	return func(c *invocationConfig) { c.agentID = id }
}

// EndOption configures how an observation ends ([Invocation.End], [ToolCall.End]).
type EndOption func(*endConfig)

type endConfig struct {
	errorType  string
	invStatus  InvocationStatus
	toolStatus ToolCallStatus
}

// WithErrorType sets the error_type (and the span's error.type) instead of the one derived from the
// error (see [Invocation.End]). Ignored when "".
func WithErrorType(t string) EndOption {
	return func(c *endConfig) { c.errorType = t }
}

// WithInvocationStatus sets an invocation's status instead of the one derived from the error.
// Ignored by other observations, and when it is not one of the InvocationStatus values.
func WithInvocationStatus(s InvocationStatus) EndOption {
	return func(c *endConfig) { c.invStatus = s }
}

// WithToolCallStatus sets a tool call's status instead of the one derived from the error. Ignored
// by other observations, and when it is not one of the ToolCallStatus values.
func WithToolCallStatus(s ToolCallStatus) EndOption {
	return func(c *endConfig) { c.toolStatus = s }
}

func newEndConfig(opts []EndOption) endConfig {
	var c endConfig
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// Invocation is one agent invocation in progress (SPEC §6.2 AgentInvocation): a root agent or a
// subagent. Its methods are safe for concurrent use and do nothing on a nil or zero *Invocation.
type Invocation struct {
	rec *Recorder
	e   *entry
	id  string
}

// StartInvocation starts an agent invocation named name (gen_ai.agent.name; "" for none) and
// returns a context carrying it, for the tool calls, compactions, sandbox runs, model calls and
// subagents that belong to it.
//
// Its span is "invoke_agent {name}", kind INTERNAL, child of ctx's span when that span is in the
// rollout's trace, else of the rollout root. Attributes: gen_ai.operation.name invoke_agent,
// gen_ai.agent.name, gen_ai.agent.id ([WithAgentID]), gymtrace.rollout.id,
// gymtrace.agent.invocation.id (the invocation_id: the span id in lowercase hex, or a random id of
// the same shape when the provider records no spans). When ctx carries an invocation of this
// recorder, the new one is its subagent: gymtrace.agent.parent_invocation.id names it, and when ctx
// also carries a tool call of it ([StartToolCall]), gymtrace.agent.spawned_by_tool_call.id names
// that tool call. Invocations of another recorder in ctx are ignored (another rollout).
func (r *Recorder) StartInvocation(ctx context.Context, name string, opts ...InvocationOption) (context.Context, *Invocation) {
	if r == nil || r.tracer == nil {
		return ctx, nil // not made by NewRecorder: records nothing (see Recorder)
	}
	var cfg invocationConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationName(semconv.GenAIOperationNameInvokeAgent),
		semconv.GymtraceRolloutID(r.rolloutID),
	}
	if name != "" {
		attrs = append(attrs, semconv.GenAIAgentName(name))
	}
	if cfg.agentID != "" {
		attrs = append(attrs, semconv.GenAIAgentID(cfg.agentID))
	}
	if s := scopeFrom(ctx); s != nil && s.rec == r && s.inv != nil {
		attrs = append(attrs, semconv.GymtraceAgentParentInvocationIDKey.String(s.inv.id))
		if s.tool != nil {
			attrs = append(attrs, semconv.GymtraceAgentSpawnedByToolCallIDKey.String(s.tool.callID))
		}
	}
	sctx, e := r.startSpan(ctx, semconv.InvokeAgentSpanName(name), r.now(), attrs)
	inv := &Invocation{rec: r, e: e, id: e.spanID.String()}
	e.mu.Lock()
	e.setAttributes(semconv.GymtraceAgentInvocationIDKey.String(inv.id))
	e.mu.Unlock()
	return withScope(sctx, &scope{rec: r, inv: inv}), inv
}

// ID returns the invocation_id ("" for a nil invocation).
func (inv *Invocation) ID() string {
	if inv == nil || inv.e == nil {
		return ""
	}
	return inv.id
}

// End ends the invocation; later calls do nothing. Its status is [WithInvocationStatus], else
// derived from err: nil → completed; context.Canceled or context.DeadlineExceeded (errors.Is) →
// incomplete; any other error → failed. error_type is [WithErrorType], else "cancelled" or
// "timeout" for the context errors, else the Go type of the first error in err's chain that is not
// a plain errors.New/fmt.Errorf wrapper (e.g. "*fs.PathError"), else "_OTHER". The span gets
// gymtrace.observation.status, error.type, the gymtrace.model_call.ids of the invocation's calls,
// and status Error (with err's text) unless completed or unknown. Model calls recorded after End
// are refused ([RecordModelCall]).
func (inv *Invocation) End(err error, opts ...EndOption) {
	if inv == nil || inv.e == nil {
		return
	}
	cfg := newEndConfig(opts)
	status := endStatus(cfg.invStatus, invocationStatuses, err, InvocationStatusCompleted, InvocationStatusIncomplete,
		InvocationStatusIncomplete, InvocationStatusFailed)
	inv.e.finish(inv.rec, string(status), err, cfg.errorType)
}

// endStatus is explicit when it is one of valid, else derived from err: nil → completed,
// context.DeadlineExceeded → deadline, context.Canceled → canceled, any other error → failed.
func endStatus[S ~string](explicit S, valid []string, err error, completed, deadline, canceled, failed S) S {
	switch {
	case slices.Contains(valid, string(explicit)):
		return explicit
	case err == nil:
		return completed
	case errors.Is(err, context.DeadlineExceeded):
		return deadline
	case errors.Is(err, context.Canceled):
		return canceled
	}
	return failed
}

// errorType returns the error type of an ending observation: explicit when set, else derived from
// err ("" for nil).
func errorType(err error, explicit string) string {
	switch {
	case explicit != "":
		return explicit
	case err == nil:
		return ""
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch t := fmt.Sprintf("%T", e); t {
		case "*errors.errorString", "*fmt.wrapError", "*fmt.wrapErrors", "*errors.joinError":
		default:
			return t
		}
	}
	return "_OTHER"
}
