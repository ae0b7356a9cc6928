package agentobs

// AgentObservationBundle is one rollout's observations from one producer (SPEC §6.2), the value of
// the rollout key ng_agent_observations. JSON keys in order: source, records, gaps.
//
// Records are unordered (list position implies no execution order). Valid bundles have unique
// invocation ids among their AgentInvocations and no cycle in the parent graph of the invocations
// present; a parent id that is not present is allowed ([AgentObservationBundle.Validate]).
type AgentObservationBundle struct {
	Source  string           // required: the producer, e.g. "claude_code", "gymtrace"
	Records []Record         // nil is written as []; nil entries are invalid
	Gaps    []ObservationGap // nil is written as []
}
