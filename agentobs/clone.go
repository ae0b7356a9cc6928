package agentobs

// Clone returns a deep copy of b: no slice, pointer or conversation item of the copy is shared
// with b, so either can be changed without affecting the other.
func (b AgentObservationBundle) Clone() AgentObservationBundle {
	b.Records = cloneSlice(b.Records, cloneRecord)
	b.Gaps = cloneSlice(b.Gaps, ObservationGap.Clone)
	return b
}

// Clone returns a deep copy of a.
func (a AgentInvocation) Clone() AgentInvocation { cloneFields(a.fields()); return a }

// Clone returns a deep copy of t.
func (t ToolCallObservation) Clone() ToolCallObservation { cloneFields(t.fields()); return t }

// Clone returns a deep copy of c.
func (c ContextCompactionObservation) Clone() ContextCompactionObservation {
	cloneFields(c.fields())
	return c
}

// Clone returns a deep copy of s.
func (s SandboxObservation) Clone() SandboxObservation { cloneFields(s.fields()); return s }

// Clone returns a deep copy of r.
func (r ModelCallRef) Clone() ModelCallRef { cloneFields(r.fields()); return r }

// Clone returns a deep copy of g.
func (g ObservationGap) Clone() ObservationGap { cloneFields(g.fields()); return g }

// cloneRecord deep-copies one record; nil (or a typed nil) stays nil of the same type.
func cloneRecord(r Record) Record {
	switch v := r.(type) {
	case *AgentInvocation:
		return cloneWith(v, AgentInvocation.Clone)
	case *ToolCallObservation:
		return cloneWith(v, ToolCallObservation.Clone)
	case *ContextCompactionObservation:
		return cloneWith(v, ContextCompactionObservation.Clone)
	case *SandboxObservation:
		return cloneWith(v, SandboxObservation.Clone)
	}
	return r
}

// cloneWith returns a pointer to clone(*p), or nil for nil.
func cloneWith[T any](p *T, clone func(T) T) *T {
	if p == nil {
		return nil
	}
	c := clone(*p)
	return &c
}

// cloneSlice returns a copy of s with every element copied by clone (nil stays nil).
func cloneSlice[T any](s []T, clone func(T) T) []T {
	if s == nil {
		return nil
	}
	out := make([]T, len(s))
	for i, e := range s {
		out[i] = clone(e)
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
