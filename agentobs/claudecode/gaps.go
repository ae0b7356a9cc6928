package claudecode

import "github.com/gymtrace/gymtrace/agentobs"

// Gap codes the Claude Code producer writes into a bundle's gaps (SPEC §6.3, §6.4, §6.6). A gap
// says what could not be observed exactly; it never carries transcript content: details are file
// names with line numbers, tool call ids, invocation ids, block types or Python type names.
// Unless noted, invocation_id is the invocation the event belongs to and detail is null.
const (
	// GapTranscriptDirMissing: the config dir is not a directory, or (detail "projects") its
	// projects/ subdirectory is not. invocation_id null.
	GapTranscriptDirMissing = "transcript_dir_missing"
	// GapTranscriptDirUnreadable: projects/ (or a directory below it) could not be listed; nothing
	// is read. invocation_id null.
	GapTranscriptDirUnreadable = "transcript_dir_unreadable"
	// GapTranscriptUnreadable: one *.jsonl could not be read; detail = its file name.
	GapTranscriptUnreadable = "transcript_unreadable"
	// GapClaudeCodeTranscriptUnreadable: an entry below the config dir breaks the reading rules of
	// SPEC §0 D16 (a symbolic link, a transcript that is not a regular file or is too large); nothing
	// of the run is read and [Observe]'s bundle holds only this gap and no_sandbox_runtime. detail =
	// the entry's path below the config dir and the rule. invocation_id null.
	GapClaudeCodeTranscriptUnreadable = "claude_code_transcript_unreadable"
	// GapMalformedTranscriptLine: a line is not JSON; detail "<file name>:<line number>".
	GapMalformedTranscriptLine = "malformed_transcript_line"
	// GapInvalidTranscriptRecord: a line is JSON but not an object; detail "<file name>:<line number>".
	GapInvalidTranscriptRecord = "invalid_transcript_record"
	// GapAgentTranscriptUnavailable: no transcript event was found.
	GapAgentTranscriptUnavailable = "agent_transcript_unavailable"

	// GapModelResponseIDMissing: an assistant event has no message id.
	GapModelResponseIDMissing = "model_response_id_missing"
	// GapUnsupportedAssistantContent: an assistant content block of another type (detail = its
	// type when a string, else null) or content that is neither a list nor a string (detail =
	// Python type name: NoneType, dict, int, float, bool).
	GapUnsupportedAssistantContent = "unsupported_assistant_content_block"
	// GapInvalidAssistantContent: an assistant content block that is not an object.
	GapInvalidAssistantContent = "invalid_assistant_content"
	// GapAssistantItemIDMissing: a text block whose event has neither uuid nor message id.
	GapAssistantItemIDMissing = "assistant_item_id_missing"
	// GapReasoningItemIDMissing: a thinking block whose event has neither uuid nor message id.
	GapReasoningItemIDMissing = "reasoning_item_id_missing"
	// GapToolCallIDMissing: a tool_use block without a non-empty string id.
	GapToolCallIDMissing = "tool_call_id_missing"
	// GapUnsupportedUserContent: a user/system/developer block of another type (detail = its type
	// when a string, else null), a text block whose text is not a string (detail "text"), or
	// content that is neither a list, a string nor null (detail = Python type name).
	GapUnsupportedUserContent = "unsupported_user_content_block"
	// GapInvalidUserContent: a user/system/developer content block that is not an object.
	GapInvalidUserContent = "invalid_user_content"
	// GapToolResultIDMissing: a tool_result block without a non-empty string tool_use_id.
	GapToolResultIDMissing = "tool_result_id_missing"

	// GapAmbiguousSubagentRelation: toolUseResult.agentId is set but the event does not hold
	// exactly one tool_result with a string tool_use_id.
	GapAmbiguousSubagentRelation = "ambiguous_subagent_relation"
	// GapConflictingSubagentParent: a subagent was linked from two different tool calls; both
	// links are dropped. invocation_id = the subagent.
	GapConflictingSubagentParent = "conflicting_subagent_parent"
	// GapCyclicSubagentParent: a link would make the subagent its own ancestor; it is dropped.
	// invocation_id = the subagent, detail = the would-be parent.
	GapCyclicSubagentParent = "cyclic_subagent_parent"
	// GapSubagentTranscriptMissing: a linked subagent has no transcript of its own.
	// invocation_id = the subagent.
	GapSubagentTranscriptMissing = "subagent_transcript_missing"
	// GapSubagentParentUnavailable: a subagent transcript (agentId) without a parent link.
	GapSubagentParentUnavailable = "subagent_parent_unavailable"
	// GapInvocationOutcomeUnavailable: an invocation whose status is unknown (an unlinked
	// subagent, or a root when the run's status is unknown).
	GapInvocationOutcomeUnavailable = "invocation_outcome_unavailable"

	// GapAmbiguousToolArtifact: a tool call id started or finished more than once; no observation.
	// This and the other tool gaps carry detail = the tool call id.
	GapAmbiguousToolArtifact = "ambiguous_tool_artifact"
	// GapToolStartMissing: a tool_result without its tool_use.
	GapToolStartMissing = "tool_start_missing"
	// GapToolResultMissing: a tool_use without its tool_result (status incomplete).
	GapToolResultMissing = "tool_result_missing"
	// GapToolStartTimestampMissing: the tool_use event has no usable timestamp.
	GapToolStartTimestampMissing = "tool_start_timestamp_missing"
	// GapToolResultTimestampMissing: the tool_result event has no usable timestamp.
	GapToolResultTimestampMissing = "tool_result_timestamp_missing"
	// GapToolTimingInvalid: the result precedes the start; completed_at is dropped.
	GapToolTimingInvalid = "tool_timing_invalid"

	// GapCompactionBeforeUnavailable: a compaction with no model call before it in its invocation.
	GapCompactionBeforeUnavailable = "compaction_before_model_call_unavailable"
	// GapCompactionAfterUnavailable: a compaction not followed by a new model call.
	GapCompactionAfterUnavailable = "compaction_after_model_call_unavailable"
	// GapCompactionReferenceUnavailable: the summarizing call of a compaction is not known; the
	// resolver removes it once every compaction of the invocation is linked (SPEC §6.6).
	GapCompactionReferenceUnavailable = "compaction_model_call_reference_unavailable"
	// GapCompactionOutcomeUnavailable: a compaction whose outcome is unknown.
	GapCompactionOutcomeUnavailable = "compaction_outcome_unavailable"
	// GapCompactionTimestampMissing: a compaction without a usable timestamp.
	GapCompactionTimestampMissing = "compaction_timestamp_missing"
	// GapCompactionMatchAmbiguous: the resolver found several candidate summarizing calls, or one
	// shared with another compaction; detail "candidate_count=<n>".
	GapCompactionMatchAmbiguous = "compaction_model_call_match_ambiguous"
	// GapCompactionModelCallJoinFailed: the resolver failed; the generic join still ran (SPEC §5.4).
	GapCompactionModelCallJoinFailed = agentobs.GapCompactionModelCallJoinFailed

	// GapModelCallOwnershipUnavailable: no model server was configured, so no call can be
	// attributed (SPEC §6.3). invocation_id and detail null.
	GapModelCallOwnershipUnavailable = agentobs.GapModelCallOwnershipUnavailable
	// GapObservationParseFailed: extraction failed; the bundle holds only this gap (and
	// no_sandbox_runtime) (SPEC §6.3).
	GapObservationParseFailed = "observation_parse_failed"
	// GapNoSandboxRuntime: Claude Code reports no sandbox; always the last gap of [Observe].
	GapNoSandboxRuntime = "no_sandbox_runtime"
)

// newGap builds an ObservationGap; nil pointers are JSON null.
func newGap(code string, invocationID, detail *string) agentobs.ObservationGap {
	return agentobs.ObservationGap{Code: code, InvocationID: invocationID, Detail: detail}
}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }
