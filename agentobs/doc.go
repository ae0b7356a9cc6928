// Package agentobs holds gymtrace's agent observations: what an agent knows about its own run that
// the model-server boundary cannot see — its invocations (root agent and subagents), tool-call
// intervals, context compactions and sandbox runs — in the shape NeMo Gym reads as the rollout key
// ng_agent_observations (SPEC.md §6), and the join of those observations with the captured model
// calls (SPEC §6.5, §0 D11).
//
// # Types and JSON shape
//
// [AgentObservationBundle] is one rollout's observations: a source, an unordered list of [Record]s
// ([AgentInvocation], [ToolCallObservation], [ContextCompactionObservation], [SandboxObservation],
// told apart by their "kind" key) and a list of [ObservationGap]s. Model calls are referenced by
// [ModelCallRef]. Every type dumps (MarshalJSON) the way Gym dumps its pydantic models in JSON mode
// (SPEC §6.1): every field, nulls and defaults included, keys in the declared order of SPEC §6.2,
// compact, strings and floats written like orjson (floats per SPEC §0 D6: 100.0, 0.00001, 1e16).
// Optional (nullable) fields are pointers; nil is JSON null. Enum fields are typed strings whose
// zero value "" stands for the SPEC default (unknown) where one exists.
//
// Decoding is strict, like Gym's models (extra="forbid"): [DecodeBundle] and each type's
// UnmarshalJSON reject unknown keys (naming the key; [ModelServerRef] alone ignores extra keys),
// unknown record kinds, values of the wrong JSON type and missing required keys, and then run the
// type's Validate, so whatever decodes is valid. Every type has a Validate method implementing the
// rules of SPEC §6.2 with the SPEC's error texts.
//
// # Join
//
// [Join] resolves each model-call reference against the captured calls of the rollout
// ([capture.ModelCallRecord]) by exact identifiers only — never by time or position — assigns each
// captured call to at most one invocation and reports what it could not resolve as gaps (SPEC
// §6.5). Join is idempotent (SPEC D11): joining a joined bundle with the same calls changes nothing.
//
// # Trajectory projection
//
// [ProjectTrajectory] is NeMo Gym's projection of a rollout's evidence onto the standardized
// ng_trajectory ([TrajectoryRecord], SPEC §5.6): identity from the dispatched input row, the
// producer's trajectory, the observations, one model call per captured call, gaps. It works on
// ordered JSON values and validates like Gym's pydantic models in lax mode (numeric strings and
// booleans coerced, conversation items normalized to the Responses item Gym's union picks), so its
// dump is byte for byte Gym's. [AttachTrajectory] is the collector's step around it (payloads
// move into the trajectory, or the trajectory_projection_failed gap; SPEC §5.5) and
// [RolloutForExport] the export view that drops it.
//
// # Recorder, sandboxes and spans
//
// A [Recorder] records one rollout's observations as OpenTelemetry spans in the rollout's trace
// (DESIGN.md "Trace per rollout") and in its own bundle ([Recorder.Bundle]). It is context-first:
// [Recorder.StartInvocation] returns a context carrying the invocation, to which [StartToolCall],
// [StartCompaction], [RunSandboxed] / [RecordSandbox] and the model calls that [Transport] (or
// [RecordModelCall]) sees attach. [RunSandboxed] fills a SandboxObservation with measured values
// only; a configured limit is never reported as usage (SPEC §6.2).
//
// One mapping turns spans into observations ([ObservationSpan], [BundleFromSpans]). It reads only
// GenAI semantic-convention keys plus gymtrace.rollout.id (and optional gymtrace.* keys), so a
// Python or TypeScript agent's spans build the same bundle. [NewObservationProcessor] appends every
// observation span to <rollout_id>.observations.jsonl beside the capture file; [ReadBundle] reads
// that file back into the bundle that `gymtrace attach` joins when a rollout line carries no
// ng_agent_observations of its own.
//
// # Concurrency
//
// The types are plain values: safe for concurrent reads, not for concurrent mutation. The
// functions of this package keep no state and are safe for concurrent use.
package agentobs
