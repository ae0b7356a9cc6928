package agentobs

import (
	"bytes"
	"encoding/json"
)

// Clone returns a deep copy of b: no slice, pointer or conversation item of the copy is shared
// with b, so either can be changed without affecting the other.
func (b AgentObservationBundle) Clone() AgentObservationBundle {
	out := AgentObservationBundle{Source: b.Source}
	if b.Records != nil {
		out.Records = make([]Record, len(b.Records))
		for i, r := range b.Records {
			out.Records[i] = cloneRecord(r)
		}
	}
	out.Gaps = cloneGaps(b.Gaps)
	return out
}

// Clone returns a deep copy of a.
func (a AgentInvocation) Clone() AgentInvocation {
	a.ParentInvocationID = clonePtr(a.ParentInvocationID)
	a.SpawnedByToolCallID = clonePtr(a.SpawnedByToolCallID)
	a.DurationMS = clonePtr(a.DurationMS)
	a.ErrorType = clonePtr(a.ErrorType)
	a.ModelCalls = cloneRefs(a.ModelCalls)
	if a.Conversation != nil {
		conv := make([]json.RawMessage, len(a.Conversation))
		for i, item := range a.Conversation {
			conv[i] = bytes.Clone(item)
		}
		a.Conversation = conv
	}
	return a
}

// Clone returns a deep copy of t.
func (t ToolCallObservation) Clone() ToolCallObservation {
	t.SandboxID = clonePtr(t.SandboxID)
	t.ToolName = clonePtr(t.ToolName)
	t.StartedAt = clonePtr(t.StartedAt)
	t.CompletedAt = clonePtr(t.CompletedAt)
	t.DurationMS = clonePtr(t.DurationMS)
	t.TimingSource = clonePtr(t.TimingSource)
	t.ErrorType = clonePtr(t.ErrorType)
	return t
}

// Clone returns a deep copy of c.
func (c ContextCompactionObservation) Clone() ContextCompactionObservation {
	c.ObservedAt = clonePtr(c.ObservedAt)
	c.Trigger = clonePtr(c.Trigger)
	c.TokensBefore = clonePtr(c.TokensBefore)
	c.TokensAfter = clonePtr(c.TokensAfter)
	c.Summary = clonePtr(c.Summary)
	c.FirstKeptItemID = clonePtr(c.FirstKeptItemID)
	if c.BeforeModelCall != nil {
		r := c.BeforeModelCall.Clone()
		c.BeforeModelCall = &r
	}
	c.ModelCalls = cloneRefs(c.ModelCalls)
	if c.AfterModelCall != nil {
		r := c.AfterModelCall.Clone()
		c.AfterModelCall = &r
	}
	return c
}

// Clone returns a deep copy of s.
func (s SandboxObservation) Clone() SandboxObservation {
	s.Provider = clonePtr(s.Provider)
	s.SandboxID = clonePtr(s.SandboxID)
	s.ExitCode = clonePtr(s.ExitCode)
	s.WallTimeS = clonePtr(s.WallTimeS)
	s.CPUTimeS = clonePtr(s.CPUTimeS)
	s.PeakMemoryMiB = clonePtr(s.PeakMemoryMiB)
	s.ResourceUsageSource = clonePtr(s.ResourceUsageSource)
	s.ErrorType = clonePtr(s.ErrorType)
	return s
}

// Clone returns a deep copy of r.
func (r ModelCallRef) Clone() ModelCallRef {
	r.ModelCallID = clonePtr(r.ModelCallID)
	r.ModelRef = clonePtr(r.ModelRef)
	r.ResponseID = clonePtr(r.ResponseID)
	return r
}

// Clone returns a deep copy of g.
func (g ObservationGap) Clone() ObservationGap {
	g.InvocationID = clonePtr(g.InvocationID)
	g.Detail = clonePtr(g.Detail)
	return g
}

// cloneRecord deep-copies one record; nil (or a typed nil) stays nil of the same type.
func cloneRecord(r Record) Record {
	switch v := r.(type) {
	case *AgentInvocation:
		if v != nil {
			c := v.Clone()
			return &c
		}
	case *ToolCallObservation:
		if v != nil {
			c := v.Clone()
			return &c
		}
	case *ContextCompactionObservation:
		if v != nil {
			c := v.Clone()
			return &c
		}
	case *SandboxObservation:
		if v != nil {
			c := v.Clone()
			return &c
		}
	}
	return r
}

func cloneRefs(refs []ModelCallRef) []ModelCallRef {
	if refs == nil {
		return nil
	}
	out := make([]ModelCallRef, len(refs))
	for i, r := range refs {
		out[i] = r.Clone()
	}
	return out
}

func cloneGaps(gaps []ObservationGap) []ObservationGap {
	if gaps == nil {
		return nil
	}
	out := make([]ObservationGap, len(gaps))
	for i, g := range gaps {
		out[i] = g.Clone()
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
