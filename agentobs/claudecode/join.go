package claudecode

import (
	"fmt"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
)

// resolverFunc is the compaction resolver's signature; JoinCalls uses AssociateCompactionCalls,
// tests substitute a failing one (SPEC §8 #99).
type resolverFunc func(agentobs.AgentObservationBundle, []capture.ModelCallRecord) (agentobs.AgentObservationBundle, error)

// JoinCalls joins an ng_agent_observations bundle with the captured calls of its rollout the way
// SPEC §5.4 does inside the merge: the bundle is validated; when its source is "claude_code" the
// compaction resolver ([AssociateCompactionCalls]) runs first, and if it fails, gap
// compaction_model_call_join_failed is appended and the join continues without it; then the
// generic join (agentobs.Join, SPEC §6.5) runs with the same calls. Bundles of other sources get
// the generic join only.
//
// The error is non-nil only when bundle is invalid (agentobs validation, SPEC §6.2); the caller
// then records agent_observation_join_failed and leaves the bundle untouched (SPEC §5.3). bundle
// and calls are not modified. Joining the result again with the same calls gives the same result
// (SPEC D11). Safe for concurrent use.
func JoinCalls(bundle agentobs.AgentObservationBundle, calls []capture.ModelCallRecord) (agentobs.AgentObservationBundle, error) {
	return joinCalls(bundle, calls, AssociateCompactionCalls)
}

func joinCalls(bundle agentobs.AgentObservationBundle, calls []capture.ModelCallRecord, resolve resolverFunc) (agentobs.AgentObservationBundle, error) {
	if err := bundle.Validate(); err != nil {
		return agentobs.AgentObservationBundle{}, fmt.Errorf("claudecode: join: %w", err)
	}
	if bundle.Source == Source {
		resolved, err := runResolver(resolve, bundle, calls)
		if err != nil {
			resolved = bundle.Clone()
			resolved.Gaps = append(resolved.Gaps, newGap(GapCompactionModelCallJoinFailed, nil, nil))
		}
		bundle = resolved
	}
	return agentobs.Join(bundle, calls), nil
}

// runResolver calls resolve and turns a panic into an error: whatever goes wrong in the resolver,
// SPEC §5.4 wants the gap and the generic join, as the reference's "except Exception" gives.
func runResolver(resolve resolverFunc, bundle agentobs.AgentObservationBundle, calls []capture.ModelCallRecord) (out agentobs.AgentObservationBundle, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("claudecode: compaction resolver panicked: %v", r)
		}
	}()
	return resolve(bundle, calls)
}
