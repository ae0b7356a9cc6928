package agentobs

import "encoding/json"

// AgentInvocation is one root agent or subagent conversation (SPEC §6.2), kind "agent_invocation".
// JSON keys in order: kind, invocation_id, parent_invocation_id, spawned_by_tool_call_id, status,
// duration_ms, error_type, model_calls, conversation.
type AgentInvocation struct {
	InvocationID        string           // required; unique within a bundle
	ParentInvocationID  *string          // parent invocation (may be absent from the bundle); nil = root
	SpawnedByToolCallID *string          // tool call of the parent that started this subagent
	Status              InvocationStatus // "" = unknown
	DurationMS          *float64         // wall time in milliseconds, >= 0
	ErrorType           *string          // short error class when Status is failed/incomplete
	ModelCalls          []ModelCallRef   // the calls this invocation made, in order; nil is written as []
	// Conversation holds Responses API input items (SPEC §6.7), each one JSON object as compact
	// text. They are kept as given: gymtrace checks that each is a JSON object but does not
	// re-validate or re-dump them through the OpenAI item models as Gym does. nil is written as [].
	Conversation []json.RawMessage
}

// ToolCallObservation is the interval of one tool call at an agent-owned boundary (SPEC §6.2),
// kind "tool_call". JSON keys in order: kind, invocation_id, tool_call_id, sandbox_id, tool_name,
// started_at, completed_at, duration_ms, timing_source, status, error_type. It has no "output"
// (only a trajectory's tool call has one).
type ToolCallObservation struct {
	InvocationID string        // required: the invocation that called the tool
	ToolCallID   string        // required: the model's tool call id (gen_ai.tool.call.id)
	SandboxID    *string       // the enclosing sandbox (shared by concurrent calls); not per-call resource attribution
	ToolName     *string       // tool name
	StartedAt    *float64      // UTC Unix seconds
	CompletedAt  *float64      // UTC Unix seconds; must not precede StartedAt
	DurationMS   *float64      // milliseconds, >= 0
	TimingSource *TimingSource // who measured the interval; nil = null
	Status       ToolCallStatus
	ErrorType    *string
}

// ContextCompactionObservation is one explicit context compaction (SPEC §6.2), kind
// "context_compaction". JSON keys in order: kind, invocation_id, observed_at, trigger,
// tokens_before, tokens_after, outcome, summary, first_kept_item_id, before_model_call,
// model_calls, after_model_call.
type ContextCompactionObservation struct {
	InvocationID    string            // required: the invocation whose context was compacted
	ObservedAt      *float64          // UTC Unix seconds
	Trigger         *string           // e.g. "auto", "manual"
	TokensBefore    *int              // producer-reported context tokens before, >= 0
	TokensAfter     *int              // producer-reported context tokens after, >= 0 (may exceed TokensBefore)
	Outcome         CompactionOutcome // "" = unknown
	Summary         *string           // the summary text that replaced the context
	FirstKeptItemID *string           // first conversation item kept verbatim
	BeforeModelCall *ModelCallRef     // the invocation's last call before the compaction
	ModelCalls      []ModelCallRef    // calls that performed the compaction (summarizing calls); nil is written as []
	AfterModelCall  *ModelCallRef     // the invocation's first call after the compaction
}

// SandboxObservation is the outcome and measured lifetime resource usage of one sandbox (SPEC
// §6.2), kind "sandbox". JSON keys in order: kind, role, provider, sandbox_id, outcome, exit_code,
// wall_time_s, cpu_time_s, peak_memory_mib, resource_usage_source, error_type. Usage values are
// measured, never configured limits or allocations.
type SandboxObservation struct {
	Role                SandboxRole    // required
	Provider            *string        // e.g. "local", "docker"
	SandboxID           *string        // sandbox instance id
	Outcome             SandboxOutcome // "" = unknown
	ExitCode            *int           // process exit code
	WallTimeS           *float64       // wall time in seconds, >= 0
	CPUTimeS            *float64       // cumulative measured CPU time in seconds, >= 0
	PeakMemoryMiB       *float64       // measured high-water mark in MiB (1 MiB = 2^20 bytes), >= 0
	ResourceUsageSource *string        // where the usage came from, e.g. "rusage", "cgroup"
	ErrorType           *string
}

// Kind returns "agent_invocation".
func (AgentInvocation) Kind() string { return KindAgentInvocation }

// Kind returns "tool_call".
func (ToolCallObservation) Kind() string { return KindToolCall }

// Kind returns "context_compaction".
func (ContextCompactionObservation) Kind() string { return KindContextCompaction }

// Kind returns "sandbox".
func (SandboxObservation) Kind() string { return KindSandbox }
