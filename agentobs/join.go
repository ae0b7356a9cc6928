package agentobs

import (
	"strconv"
	"strings"

	"github.com/gymtrace/gymtrace/capture"
)

// Join resolves the model-call references of bundle against calls, the captured calls of the same
// rollout (in capture order), exactly as SPEC §6.5 says, and returns the joined bundle; bundle
// itself is not modified (the result shares nothing with it).
//
// A reference matches by exact identifiers only, never by time or position: a reference with a
// non-empty model_call_id matches the calls with that id (narrowed to those with an equal
// model_ref when the reference has one, and an equal response_id when the reference's is not
// null); any other reference matches the calls with the same (model_ref.type, model_ref.name,
// response_id), counting only calls with a model_ref and a non-empty response_id.
//
// Invocations are visited first (in record order). A reference with exactly one match whose call no
// reference has claimed yet claims the call for its invocation and is replaced by the call's
// canonical reference {model_call_id, model_ref, response_id}; otherwise the reference is kept and
// a gap is added (invocation_id = the invocation): [GapModelCallReferenceUnmatched] (no match) or
// [GapModelCallReferenceAmbiguous] (several), detail = the reference's model_call_id or
// response_id; [GapModelCallReferenceConflict] when the call is already claimed (by any invocation,
// this one included), detail = the call's model_call_id or response_id. Compactions follow (record
// order) and never claim calls: a compaction's model_calls reference resolves only to a call its
// own invocation claimed (else conflict when another invocation did, or
// [GapModelCallOwnershipUnavailable] when none did, detail "model_calls:<call id>");
// before_model_call and after_model_call resolve unless another invocation claimed the call
// (conflict, detail "before_model_call:<call id>" / "after_model_call:<call id>"). Unresolved
// compaction references give unmatched/ambiguous gaps with the field name as detail prefix.
//
// Gaps: the bundle's own gaps are kept except those a join produces (every ambiguous, conflict and
// unmatched gap; ownership gaps with a null invocation_id whose detail starts "capture:"; and, SPEC
// D11, ownership gaps whose detail starts "model_calls:", "before_model_call:" or
// "after_model_call:"); then the join's gaps in the order found; then, for each captured call no
// invocation claimed, in call order, an ownership gap with invocation_id null and detail
// "capture:<model_call_id or response_id or unknown>:call_index=<n>"; finally gaps equal in
// (code, invocation_id, detail) are removed after their first occurrence. Hence Join is idempotent
// (D11): Join(Join(b, calls), calls) equals Join(b, calls).
//
// Join expects a valid bundle (see [AgentObservationBundle.Validate]); nil records are kept as
// they are and a reference without usable identifiers matches nothing. Safe for concurrent use.
func Join(bundle AgentObservationBundle, calls []capture.ModelCallRecord) AgentObservationBundle {
	result := bundle.Clone()
	j := joiner{calls: calls, owner: make(map[int]string)}
	j.index()

	kept := make([]ObservationGap, 0, len(result.Gaps))
	for _, g := range result.Gaps {
		if !producedByJoin(g) {
			kept = append(kept, g)
		}
	}

	var invocations []*AgentInvocation
	var compactions []*ContextCompactionObservation
	for _, r := range result.Records {
		switch v := r.(type) {
		case *AgentInvocation:
			if v != nil {
				invocations = append(invocations, v)
			}
		case *ContextCompactionObservation:
			if v != nil {
				compactions = append(compactions, v)
			}
		}
	}
	for _, inv := range invocations {
		j.joinInvocation(inv)
	}
	for _, c := range compactions {
		j.joinCompaction(c)
	}

	gaps := append(kept, j.gaps...)
	for i := range calls {
		if _, owned := j.owner[i]; owned {
			continue
		}
		c := &calls[i]
		id := "unknown"
		if s := pyOr(c.ModelCallID, c.ResponseID); truthy(s) {
			id = *s
		}
		gaps = append(gaps, newGap(GapModelCallOwnershipUnavailable, nil,
			Ptr("capture:"+id+":call_index="+strconv.Itoa(c.CallIndex))))
	}
	result.Gaps = dedupGaps(gaps)
	return result
}

// compactionDetailPrefixes are the detail prefixes of the gaps the join adds for compactions.
var compactionDetailPrefixes = []string{"model_calls:", "before_model_call:", "after_model_call:"}

// producedByJoin reports whether g is a gap a join produces, which the pre-clean drops (SPEC §6.5,
// extended by D11 to the compaction ownership gaps).
func producedByJoin(g ObservationGap) bool {
	switch g.Code {
	case GapModelCallReferenceAmbiguous, GapModelCallReferenceConflict, GapModelCallReferenceUnmatched:
		return true
	case GapModelCallOwnershipUnavailable:
		if g.Detail == nil {
			return false
		}
		if g.InvocationID == nil && strings.HasPrefix(*g.Detail, "capture:") {
			return true
		}
		for _, p := range compactionDetailPrefixes {
			if strings.HasPrefix(*g.Detail, p) {
				return true
			}
		}
	}
	return false
}

type responseKey struct{ typ, name, responseID string }

// joiner holds one join's indexes and state; calls are identified by their position in calls.
type joiner struct {
	calls      []capture.ModelCallRecord
	byCallID   map[string][]int
	byResponse map[responseKey][]int
	owner      map[int]string // call position → invocation id that claimed it
	gaps       []ObservationGap
}

func (j *joiner) index() {
	j.byCallID = make(map[string][]int)
	j.byResponse = make(map[responseKey][]int)
	for i := range j.calls {
		c := &j.calls[i]
		if truthy(c.ModelCallID) {
			j.byCallID[*c.ModelCallID] = append(j.byCallID[*c.ModelCallID], i)
		}
		if c.ModelRef != nil && truthy(c.ResponseID) {
			k := responseKey{c.ModelRef.Type, c.ModelRef.Name, *c.ResponseID}
			j.byResponse[k] = append(j.byResponse[k], i)
		}
	}
}

// matches returns the positions of the calls ref matches (SPEC §6.5 matches(ref)).
func (j *joiner) matches(ref ModelCallRef) []int {
	if truthy(ref.ModelCallID) {
		var out []int
		for _, i := range j.byCallID[*ref.ModelCallID] {
			c := &j.calls[i]
			if ref.ModelRef != nil && (c.ModelRef == nil || c.ModelRef.Type != ref.ModelRef.Type || c.ModelRef.Name != ref.ModelRef.Name) {
				continue
			}
			if ref.ResponseID != nil && (c.ResponseID == nil || *c.ResponseID != *ref.ResponseID) {
				continue
			}
			out = append(out, i)
		}
		return out
	}
	if ref.ModelRef == nil || ref.ResponseID == nil {
		return nil // not a valid reference: nothing to look up
	}
	return j.byResponse[responseKey{ref.ModelRef.Type, ref.ModelRef.Name, *ref.ResponseID}]
}

// canonical is the reference that names call i with all its identifiers.
func (j *joiner) canonical(i int) ModelCallRef {
	c := &j.calls[i]
	r := ModelCallRef{ModelCallID: clonePtr(c.ModelCallID), ResponseID: clonePtr(c.ResponseID)}
	if c.ModelRef != nil {
		r.ModelRef = &ModelServerRef{Type: c.ModelRef.Type, Name: c.ModelRef.Name}
	}
	return r
}

// callID is the call's "model_call_id or response_id" (Python or).
func (j *joiner) callID(i int) *string {
	return pyOr(j.calls[i].ModelCallID, j.calls[i].ResponseID)
}

func (j *joiner) gap(code, invocationID string, detail *string) {
	j.gaps = append(j.gaps, newGap(code, &invocationID, detail))
}

func (j *joiner) joinInvocation(inv *AgentInvocation) {
	for k, ref := range inv.ModelCalls {
		candidates := j.matches(ref)
		if len(candidates) != 1 {
			j.gap(unresolvedCode(candidates), inv.InvocationID, clonePtr(pyOr(ref.ModelCallID, ref.ResponseID)))
			continue
		}
		call := candidates[0]
		if _, owned := j.owner[call]; owned {
			j.gap(GapModelCallReferenceConflict, inv.InvocationID, clonePtr(j.callID(call)))
			continue
		}
		j.owner[call] = inv.InvocationID
		inv.ModelCalls[k] = j.canonical(call)
	}
}

func (j *joiner) joinCompaction(c *ContextCompactionObservation) {
	for k, ref := range c.ModelCalls {
		candidates := j.matches(ref)
		if len(candidates) != 1 {
			j.gap(unresolvedCode(candidates), c.InvocationID, Ptr("model_calls:"+pyStr(pyOr(ref.ModelCallID, ref.ResponseID))))
			continue
		}
		call := candidates[0]
		owner, owned := j.owner[call]
		if !owned || owner != c.InvocationID {
			code := GapModelCallOwnershipUnavailable
			if owned {
				code = GapModelCallReferenceConflict
			}
			j.gap(code, c.InvocationID, Ptr("model_calls:"+pyStr(j.callID(call))))
			continue
		}
		c.ModelCalls[k] = j.canonical(call)
	}
	for _, f := range []struct {
		name string
		ref  **ModelCallRef
	}{{"before_model_call", &c.BeforeModelCall}, {"after_model_call", &c.AfterModelCall}} {
		ref := *f.ref
		if ref == nil {
			continue
		}
		candidates := j.matches(*ref)
		if len(candidates) != 1 {
			j.gap(unresolvedCode(candidates), c.InvocationID, Ptr(f.name+":"+pyStr(pyOr(ref.ModelCallID, ref.ResponseID))))
			continue
		}
		call := candidates[0]
		if owner, owned := j.owner[call]; owned && owner != c.InvocationID {
			j.gap(GapModelCallReferenceConflict, c.InvocationID, Ptr(f.name+":"+pyStr(j.callID(call))))
			continue
		}
		canon := j.canonical(call)
		*f.ref = &canon
	}
}

func unresolvedCode(candidates []int) string {
	if len(candidates) > 1 {
		return GapModelCallReferenceAmbiguous
	}
	return GapModelCallReferenceUnmatched
}

// newGap builds a gap whose optional fields are copies of invocationID and detail.
func newGap(code string, invocationID, detail *string) ObservationGap {
	return ObservationGap{Code: code, InvocationID: clonePtr(invocationID), Detail: clonePtr(detail)}
}

type gapKey struct {
	code                     string
	hasInvocation, hasDetail bool
	invocation, detail       string
}

// dedupGaps keeps the first gap of each (code, invocation_id, detail).
func dedupGaps(gaps []ObservationGap) []ObservationGap {
	seen := make(map[gapKey]bool, len(gaps))
	out := make([]ObservationGap, 0, len(gaps))
	for _, g := range gaps {
		k := gapKey{code: g.Code}
		if g.InvocationID != nil {
			k.hasInvocation, k.invocation = true, *g.InvocationID
		}
		if g.Detail != nil {
			k.hasDetail, k.detail = true, *g.Detail
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, g)
	}
	return out
}

// pyOr is Python's `a or b` over Optional[str]: a when it is non-empty, else b.
func pyOr(a, b *string) *string {
	if truthy(a) {
		return a
	}
	return b
}

// pyStr is Python's str() of an Optional[str] inside an f-string: None becomes "None".
func pyStr(s *string) string {
	if s == nil {
		return "None"
	}
	return *s
}
