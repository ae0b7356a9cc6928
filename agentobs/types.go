package agentobs

import "github.com/gymtrace/gymtrace/semconv"

// AttachmentKey is the rollout-record key that holds an [AgentObservationBundle] (SPEC §5.4, §6).
const AttachmentKey = "ng_agent_observations"

// ModelRefTypeResponsesAPIModels is the only valid [ModelServerRef.Type] (SPEC §6.2).
const ModelRefTypeResponsesAPIModels = semconv.ModelRefTypeResponsesAPIModels

// ModelServerRef names the model server a call went to (SPEC §6.2): JSON {"type","name"}. Type must
// be [ModelRefTypeResponsesAPIModels]; both keys are required when decoding and extra keys are
// ignored (Gym's ModelServerRef does not forbid them).
type ModelServerRef struct {
	Type string // "responses_api_models"
	Name string // model server name, e.g. "policy_model"
}

// ModelCallRef identifies one model call an agent made (SPEC §6.2): JSON {"model_call_id",
// "model_ref","response_id"}, each nullable. It is valid when ModelCallID is non-empty, or when
// ModelRef is set and ResponseID is non-empty ([ModelCallRef.Validate]). The capture proxy's
// model_call_id is the exact key; model_ref plus the provider's response id is the fallback.
type ModelCallRef struct {
	ModelCallID *string         // the capture record's model_call_id; nil = null
	ModelRef    *ModelServerRef // model server of the call; nil = null
	ResponseID  *string         // the provider's response id (response.id); nil = null
}

// ObservationGap is a fact a producer (or the join) could not observe or join exactly (SPEC §6.2):
// JSON {"code","invocation_id","detail"}; inside a bundle both nullable keys are always written,
// as null when nil (SPEC §9 #13).
type ObservationGap struct {
	Code         string  // gap code, e.g. [GapModelCallReferenceUnmatched]
	InvocationID *string // invocation the gap belongs to; nil = null
	Detail       *string // free-form detail, e.g. "capture:<id>:call_index=3"; nil = null
}

// Record kinds: the "kind" value that tells the records of a bundle apart (SPEC §6.2).
const (
	KindAgentInvocation   = "agent_invocation"
	KindToolCall          = "tool_call"
	KindContextCompaction = "context_compaction"
	KindSandbox           = "sandbox"
)

// Record is one entry of [AgentObservationBundle.Records]: exactly one of *[AgentInvocation],
// *[ToolCallObservation], *[ContextCompactionObservation] or *[SandboxObservation] (the interface
// is sealed; only those pointer types implement it). Kind returns the record's "kind" value,
// Validate its SPEC §6.2 rules, MarshalJSON its JSON-mode dump including "kind".
type Record interface {
	Kind() string
	Validate() error
	MarshalJSON() ([]byte, error)
	validate() error
	appendJSON([]byte) ([]byte, error)
	fields() []field
}

// InvocationStatus is [AgentInvocation.Status] (SPEC §6.2). The zero value "" stands for the default
// [InvocationStatusUnknown] and is written as "unknown".
type InvocationStatus string

// The AgentInvocation status values.
const (
	InvocationStatusCompleted  InvocationStatus = "completed"
	InvocationStatusFailed     InvocationStatus = "failed"
	InvocationStatusIncomplete InvocationStatus = "incomplete"
	InvocationStatusUnknown    InvocationStatus = "unknown" // default
)

// ToolCallStatus is [ToolCallObservation.Status] (SPEC §6.2). The zero value "" stands for the
// default [ToolCallStatusUnknown] and is written as "unknown".
type ToolCallStatus string

// The ToolCallObservation status values.
const (
	ToolCallStatusCompleted  ToolCallStatus = "completed"
	ToolCallStatusFailed     ToolCallStatus = "failed"
	ToolCallStatusTimeout    ToolCallStatus = "timeout"
	ToolCallStatusCancelled  ToolCallStatus = "cancelled"
	ToolCallStatusIncomplete ToolCallStatus = "incomplete"
	ToolCallStatusUnknown    ToolCallStatus = "unknown" // default
)

// TimingSource says who measured a tool call's interval ([ToolCallObservation.TimingSource], SPEC
// §6.2): the executor that ran the tool (gymtrace's recorder), an artifact written by the agent
// (Claude Code transcripts, opencode) or the harness around the agent (hermes, pi).
type TimingSource string

// The TimingSource values.
const (
	TimingSourceExecutor TimingSource = "executor"
	TimingSourceArtifact TimingSource = "artifact"
	TimingSourceHarness  TimingSource = "harness"
)

// CompactionOutcome is [ContextCompactionObservation.Outcome] (SPEC §6.2). The zero value "" stands
// for the default [CompactionOutcomeUnknown] and is written as "unknown".
type CompactionOutcome string

// The ContextCompactionObservation outcome values.
const (
	CompactionOutcomeCompleted CompactionOutcome = "completed"
	CompactionOutcomeFailed    CompactionOutcome = "failed"
	CompactionOutcomeAborted   CompactionOutcome = "aborted"
	CompactionOutcomeUnknown   CompactionOutcome = "unknown" // default
)

// SandboxRole is [SandboxObservation.Role] (SPEC §6.2): what the sandbox ran. It is required: the
// zero value "" is invalid.
type SandboxRole string

// The SandboxObservation role values.
const (
	SandboxRoleAgent       SandboxRole = "agent"
	SandboxRoleVerifier    SandboxRole = "verifier"
	SandboxRoleEnvironment SandboxRole = "environment"
)

// SandboxOutcome is [SandboxObservation.Outcome] (SPEC §6.2). The zero value "" stands for the
// default [SandboxOutcomeUnknown] and is written as "unknown".
type SandboxOutcome string

// The SandboxObservation outcome values.
const (
	SandboxOutcomeCompleted    SandboxOutcome = "completed"
	SandboxOutcomeFailed       SandboxOutcome = "failed"
	SandboxOutcomeTimeout      SandboxOutcome = "timeout"       // its deadline killed it
	SandboxOutcomeOOM          SandboxOutcome = "oom"           // the kernel's OOM killer ended it
	SandboxOutcomeSandboxError SandboxOutcome = "sandbox_error" // the sandbox itself failed
	SandboxOutcomeCancelled    SandboxOutcome = "cancelled"
	SandboxOutcomeUnknown      SandboxOutcome = "unknown" // default
)

// Ptr returns a pointer to a copy of v, for filling nullable fields:
// ToolCallObservation{TimingSource: agentobs.Ptr(agentobs.TimingSourceExecutor)}.
func Ptr[T any](v T) *T { return &v }

// Gap codes the join and the attachment step add (SPEC §5.3, §6.5); see the semconv constants of
// the same names for when each is used.
const (
	GapModelCallReferenceAmbiguous   = semconv.GapModelCallReferenceAmbiguous
	GapModelCallReferenceConflict    = semconv.GapModelCallReferenceConflict
	GapModelCallReferenceUnmatched   = semconv.GapModelCallReferenceUnmatched
	GapModelCallOwnershipUnavailable = semconv.GapModelCallOwnershipUnavailable
	GapCompactionModelCallJoinFailed = semconv.GapCompactionModelCallJoinFailed
	GapAgentObservationJoinFailed    = semconv.GapAgentObservationJoinFailed
)

var (
	_ Record = (*AgentInvocation)(nil)
	_ Record = (*ToolCallObservation)(nil)
	_ Record = (*ContextCompactionObservation)(nil)
	_ Record = (*SandboxObservation)(nil)
)
