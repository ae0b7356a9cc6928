package claudecode

import (
	"cmp"
	"encoding/json"
	"slices"

	"github.com/gymtrace/gymtrace/agentobs"
)

// assembleInvocations builds the invocation records (SPEC §6.4 "Invocation assembly") sorted by
// (first seen, id). The invocation-level gaps are emitted in that same order (the reference
// iterates Python sets there: SPEC §9 #14).
func (x *extractor) assembleInvocations() []*agentobs.AgentInvocation {
	for _, child := range x.parentOrder {
		link, ok := x.parents[child]
		if !ok {
			continue
		}
		if _, present := x.invs[child]; !present {
			x.firstSeen[child] = link.ordinal
			x.gap(GapSubagentTranscriptMissing, child, nil)
		}
	}

	ids := slices.Clone(x.order)
	for _, child := range x.parentOrder {
		if _, linked := x.parents[child]; linked {
			if _, present := x.invs[child]; !present {
				ids = append(ids, child)
			}
		}
	}
	slices.SortFunc(ids, func(a, b string) int {
		return cmp.Or(cmp.Compare(x.firstSeen[a], x.firstSeen[b]), cmp.Compare(a, b))
	})

	for _, id := range ids {
		if inv := x.invs[id]; inv != nil && inv.isAgent {
			if _, linked := x.parents[id]; !linked {
				x.gap(GapSubagentParentUnavailable, id, nil)
			}
		}
	}

	rootStatus := x.opts.rootStatus()
	out := make([]*agentobs.AgentInvocation, 0, len(ids))
	for _, id := range ids {
		inv := x.invs[id]
		isAgent := inv != nil && inv.isAgent
		link, linked := x.parents[id]
		isRoot := !linked && !isAgent
		if !linked && (!isRoot || rootStatus == agentobs.InvocationStatusUnknown) {
			x.gap(GapInvocationOutcomeUnavailable, id, nil)
		}
		a := &agentobs.AgentInvocation{InvocationID: id, Status: agentobs.InvocationStatusUnknown}
		switch {
		case isRoot:
			a.Status = rootStatus
			a.DurationMS = clonePtr(x.opts.RootDurationMS)
			a.ErrorType = clonePtr(x.opts.RootErrorType)
		case linked:
			switch link.status {
			case agentobs.ToolCallStatusTimeout, agentobs.ToolCallStatusCancelled:
				a.Status = agentobs.InvocationStatusIncomplete
			default:
				a.Status = agentobs.InvocationStatus(link.status)
			}
			switch link.status {
			case agentobs.ToolCallStatusFailed, agentobs.ToolCallStatusTimeout, agentobs.ToolCallStatusCancelled:
				a.ErrorType = ptr(string(link.status))
			}
		}
		if linked {
			a.ParentInvocationID = ptr(link.invocation)
			a.SpawnedByToolCallID = ptr(link.toolCallID)
		}
		a.ModelCalls = []agentobs.ModelCallRef{}
		a.Conversation = []json.RawMessage{}
		if inv != nil {
			if inv.refs != nil {
				a.ModelCalls = inv.refs
			}
			if inv.conversation != nil {
				a.Conversation = inv.conversation
			}
		}
		out = append(out, a)
	}
	return out
}

func cloneRef(r *agentobs.ModelCallRef) *agentobs.ModelCallRef {
	if r == nil {
		return nil
	}
	c := r.Clone()
	return &c
}

// clonePtr returns a pointer to a copy of *p, or nil for nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	return ptr(*p)
}
