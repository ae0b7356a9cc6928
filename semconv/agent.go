package semconv

import "go.opentelemetry.io/otel/attribute"

// Agent observations as spans (SPEC §0 "Agent observations", DESIGN.md "Observations are spans
// first"). A span written with the GenAI conventions alone (invoke_agent, execute_tool,
// gen_ai.conversation.compacted) plus gymtrace.rollout.id maps to an observation; the project keys
// below, NOT semantic conventions, make the mapping exact where the conventions are silent.

// Span names of agent observations (the GenAI conventions' "{gen_ai.operation.name} {name}" shape).
const (
	// CompactionSpanName is the name of a context-compaction span.
	CompactionSpanName = "context_compaction"
	// sandboxSpanNamePrefix starts the name of a sandbox span: "sandbox {role}".
	sandboxSpanNamePrefix = "sandbox"
)

// InvokeAgentSpanName returns "invoke_agent {agent name}", or "invoke_agent" when the name is "".
func InvokeAgentSpanName(agentName string) string {
	return joinName(GenAIOperationNameInvokeAgent, agentName)
}

// ExecuteToolSpanName returns "execute_tool {tool name}", or "execute_tool" when the name is "".
func ExecuteToolSpanName(toolName string) string {
	return joinName(GenAIOperationNameExecuteTool, toolName)
}

// SandboxSpanName returns "sandbox {role}", or "sandbox" when the role is "".
func SandboxSpanName(role string) string { return joinName(sandboxSpanNamePrefix, role) }

func joinName(op, name string) string {
	if name == "" {
		return op
	}
	return op + " " + name
}

// GymtraceModelCallEventName is the name of the span event that says an observation (invocation or
// compaction) made one model call. Its attributes are gymtrace.model_call.id and/or
// gen_ai.response.id with gymtrace.model_ref.type and gymtrace.model_ref.name: the fields of a
// ModelCallRef (SPEC §6.2). A span link carrying the same attributes means the same. Not a
// semantic convention.
const GymtraceModelCallEventName = "gymtrace.model_call"

// Project keys of agent-observation spans. Not semantic conventions.
const (
	// GymtraceObservationStatusKey is the observation's status (invocation, tool call) or outcome
	// (compaction, sandbox), one of the SPEC §6.2 values of its kind, e.g. "timeout". Without it
	// the status is derived from the span status and error.type.
	GymtraceObservationStatusKey = attribute.Key("gymtrace.observation.status")
	// GymtraceAgentInvocationIDKey is, on an invoke_agent span, its invocation_id; on an
	// execute_tool or compaction span, the invocation_id of the invocation it belongs to. Without
	// it an invocation's id is its span id (16 lowercase hex chars) and a tool call's or
	// compaction's invocation is found through the span parent chain.
	GymtraceAgentInvocationIDKey = attribute.Key("gymtrace.agent.invocation.id")
	// GymtraceAgentParentInvocationIDKey is an invocation's parent_invocation_id (a subagent's
	// parent). Without it the parent is found through the span parent chain.
	GymtraceAgentParentInvocationIDKey = attribute.Key("gymtrace.agent.parent_invocation.id")
	// GymtraceAgentSpawnedByToolCallIDKey is an invocation's spawned_by_tool_call_id: the tool call
	// of the parent that started this subagent. Without it, the nearest execute_tool span on the
	// parent chain.
	GymtraceAgentSpawnedByToolCallIDKey = attribute.Key("gymtrace.agent.spawned_by_tool_call.id")
	// GymtraceModelCallIDsKey is the string slice of the model_call_ids an invocation or compaction
	// made, in order: the complete list, kept although span event and link count limits may drop
	// gymtrace.model_call events.
	GymtraceModelCallIDsKey = attribute.Key("gymtrace.model_call.ids")
	// GymtraceToolTimingSourceKey is a tool call's timing_source (executor, artifact or harness);
	// without it, executor (the span measured the call).
	GymtraceToolTimingSourceKey = attribute.Key("gymtrace.tool.timing_source")

	// GymtraceSandboxRoleKey is a sandbox span's role (agent, verifier or environment). Its presence
	// makes a span a sandbox span.
	GymtraceSandboxRoleKey = attribute.Key("gymtrace.sandbox.role")
	// GymtraceSandboxProviderKey is the sandbox provider, e.g. "local".
	GymtraceSandboxProviderKey = attribute.Key("gymtrace.sandbox.provider")
	// GymtraceSandboxIDKey is the sandbox instance id; on an execute_tool span, the enclosing sandbox.
	GymtraceSandboxIDKey = attribute.Key("gymtrace.sandbox.id")
	// GymtraceSandboxExitCodeKey is the sandboxed process's exit code (int).
	GymtraceSandboxExitCodeKey = attribute.Key("gymtrace.sandbox.exit_code")
	// GymtraceSandboxWallTimeKey is the measured wall time in seconds (double).
	GymtraceSandboxWallTimeKey = attribute.Key("gymtrace.sandbox.wall_time_s")
	// GymtraceSandboxCPUTimeKey is the measured cumulative CPU time in seconds (double).
	GymtraceSandboxCPUTimeKey = attribute.Key("gymtrace.sandbox.cpu_time_s")
	// GymtraceSandboxPeakMemoryKey is the measured peak memory in MiB, 2^20 bytes (double).
	GymtraceSandboxPeakMemoryKey = attribute.Key("gymtrace.sandbox.peak_memory_mib")
	// GymtraceSandboxResourceUsageSourceKey says where the usage values came from, e.g. "cgroup_v2".
	GymtraceSandboxResourceUsageSourceKey = attribute.Key("gymtrace.sandbox.resource_usage_source")

	// GymtraceCompactionTriggerKey is what triggered a compaction, e.g. "auto" or "manual".
	GymtraceCompactionTriggerKey = attribute.Key("gymtrace.compaction.trigger")
	// GymtraceCompactionTokensBeforeKey is the producer-reported context size before, in tokens (int).
	GymtraceCompactionTokensBeforeKey = attribute.Key("gymtrace.compaction.tokens_before")
	// GymtraceCompactionTokensAfterKey is the producer-reported context size after, in tokens (int).
	GymtraceCompactionTokensAfterKey = attribute.Key("gymtrace.compaction.tokens_after")
	// GymtraceCompactionSummaryKey is the summary text that replaced the context.
	GymtraceCompactionSummaryKey = attribute.Key("gymtrace.compaction.summary")
	// GymtraceCompactionFirstKeptItemIDKey is the id of the first conversation item kept verbatim.
	GymtraceCompactionFirstKeptItemIDKey = attribute.Key("gymtrace.compaction.first_kept_item.id")
	// GymtraceCompactionBeforeModelCallIDKey is the model_call_id of the invocation's last call
	// before the compaction. Without it, the invocation's last gymtrace.model_call event at or
	// before the compaction span's start.
	GymtraceCompactionBeforeModelCallIDKey = attribute.Key("gymtrace.compaction.before_model_call.id")
	// GymtraceCompactionAfterModelCallIDKey is the model_call_id of the invocation's first call
	// after the compaction. Without it, the invocation's first gymtrace.model_call event at or
	// after the compaction span's end.
	GymtraceCompactionAfterModelCallIDKey = attribute.Key("gymtrace.compaction.after_model_call.id")
)

// Gap codes the span-to-observation mapping adds to an ng_agent_observations bundle (gymtrace's own;
// Gym's readers accept any code).
const (
	// GapObservationSpanInvalid: an observation span could not be mapped to a valid record (a
	// mistyped or invalid attribute, a duplicate invocation id, a parent cycle); the detail names
	// the span and the rule. The record is left out.
	GapObservationSpanInvalid = "observation_span_invalid"
	// GapObservationInvocationUnavailable: a tool call or compaction span names no invocation and
	// no invoke_agent span is on its parent chain among the recorded spans; the record is left out
	// (detail "tool_call:<tool_call_id>" or "context_compaction:<span id>").
	GapObservationInvocationUnavailable = "observation_invocation_unavailable"
	// GapObservationModelCallsDropped: a span lost events or links to a count limit and carries no
	// gymtrace.model_call.ids list, so some of its model-call references may be missing (detail
	// "span:<span id>:dropped_events=<n>:dropped_links=<n>").
	GapObservationModelCallsDropped = "observation_model_calls_dropped"
	// GapObservationLinesUnreadable: lines of <rollout_id>.observations.jsonl could not be read
	// (detail "count=<n>"; their content is never reported).
	GapObservationLinesUnreadable = "observation_lines_unreadable"
)
