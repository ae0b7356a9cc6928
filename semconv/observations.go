package semconv

// Gap codes of ng_agent_observations (SPEC §5.3, §6.5): the gaps the model-call join and the
// attachment step add to an agent observation bundle. Like every gap code they are plain strings
// written into the bundle's "gaps" list, not span attributes.
const (
	// GapModelCallReferenceAmbiguous: a model-call reference matches more than one captured call;
	// the reference is kept unresolved (SPEC §6.5).
	GapModelCallReferenceAmbiguous = "model_call_reference_ambiguous"
	// GapModelCallReferenceConflict: a reference matches exactly one captured call that another
	// reference already owns (SPEC §6.5).
	GapModelCallReferenceConflict = "model_call_reference_conflict"
	// GapModelCallReferenceUnmatched: a reference matches no captured call (SPEC §6.5).
	GapModelCallReferenceUnmatched = "model_call_reference_unmatched"
	// GapModelCallOwnershipUnavailable: a captured call no invocation owns (detail
	// "capture:<id>:call_index=<n>"), a compaction call no invocation owns (detail
	// "model_calls:<id>"), or a producer that could not attribute its calls (SPEC §6.3, §6.5).
	GapModelCallOwnershipUnavailable = "model_call_ownership_unavailable"
	// GapCompactionModelCallJoinFailed: the Claude Code compaction resolver failed; the generic join
	// still ran (SPEC §5.3, §5.4).
	GapCompactionModelCallJoinFailed = "compaction_model_call_join_failed"
	// GapAgentObservationJoinFailed: ng_agent_observations is present but did not validate or join;
	// it is left untouched (SPEC §5.3).
	GapAgentObservationJoinFailed = "agent_observation_join_failed"
)
