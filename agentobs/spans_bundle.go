package agentobs

import (
	"bytes"
	"fmt"
	"slices"

	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/semconv"
)

// spanKey identifies a span among the spans of a bundle.
type spanKey struct {
	trace trace.TraceID
	span  trace.SpanID
}

// BundleFromSpans builds one rollout's [AgentObservationBundle] (source [BundleSource]) from its
// observation spans: the one mapping from spans to observations (SPEC §0 "Agent observations",
// DESIGN.md "Observations are spans first"). Spans that are not observation spans
// ([ObservationKind]) are ignored; the caller passes the spans of one rollout. The result is always
// valid ([AgentObservationBundle.Validate]): what cannot be mapped becomes a gap instead of a record.
//
// # Records
//
// An invoke_agent span is an [AgentInvocation]: invocation_id = gymtrace.agent.invocation.id, else
// the span id (16 lowercase hex chars); status = gymtrace.observation.status, else completed, or
// failed when the span status is Error (incomplete for a span that has not ended); duration_ms = end
// − start; error_type = error.type; model_calls = the span's model-call references (below).
//
// An execute_tool span is a [ToolCallObservation]: tool_call_id = gen_ai.tool.call.id (required),
// tool_name = gen_ai.tool.name, sandbox_id = gymtrace.sandbox.id, started_at / completed_at = the
// span's start / end in UTC Unix seconds, duration_ms = end − start, timing_source =
// gymtrace.tool.timing_source, else executor (the span measured the call); status =
// gymtrace.observation.status, else completed, or for span status Error the error.type when it is
// timeout or cancelled, else failed; error_type = error.type.
//
// A compaction span is a [ContextCompactionObservation]: observed_at = the span's end, trigger,
// tokens_before, tokens_after, summary, first_kept_item_id from the gymtrace.compaction.* keys,
// outcome = gymtrace.observation.status, else completed, or for span status Error aborted (when
// error.type is aborted) or failed; model_calls = the span's references (the summarizing calls).
//
// A sandbox span is a [SandboxObservation] whose fields come from the gymtrace.sandbox.* keys and
// error.type; outcome = gymtrace.observation.status, else completed, or for span status Error the
// error.type when it is timeout, oom, sandbox_error or cancelled, else failed. Usage values are
// never derived from the span's timing: they are the measured values the producer recorded.
//
// # Model-call references
//
// A span's references are, in this order and each once: the model_call_ids of its
// gymtrace.model_call.ids list; then each gymtrace.model_call event's reference; then each link
// that carries reference attributes. An event's or link's reference is gymtrace.model_call.id
// and/or gen_ai.response.id with gymtrace.model_ref.type/name (SPEC §6.2 ModelCallRef).
//
// # Relations: the span parent chain
//
// Relations come from explicit attributes when present (gymtrace.agent.invocation.id on tool and
// compaction spans, gymtrace.agent.parent_invocation.id and gymtrace.agent.spawned_by_tool_call.id
// on invocations, gymtrace.compaction.before_model_call.id / after_model_call.id). Otherwise they
// are read from the parent chain among the given observation spans: starting at a span's parent,
// the walk goes up from parent to parent while the parent is one of the given observation spans.
// It stops at the first invoke_agent span (that invocation is the owner, or the parent of a
// subagent), at an execute_tool or compaction span that names its invocation explicitly (that
// invocation), or at a parent that is not among the given observation spans (a span of some other
// kind, or one that was not recorded): then there is no invocation. execute_tool spans passed on
// the way are not invocations; the nearest one is a subagent's spawned_by_tool_call_id. Compaction
// and sandbox spans on the way are passed through. So a tool call nested in another tool call, or
// under a sandbox span, belongs to the invocation above them; but any span that is not an
// observation span cuts the chain, and a span written below one then needs the explicit attribute.
//
// A tool call or compaction whose invocation is not found this way is left out, with gap
// observation_invocation_unavailable. An invocation without a found parent is a root
// (parent_invocation_id null).
//
// A compaction's before_model_call without its attribute is the owner invocation's reference
// whose gymtrace.model_call event is the last at or before the compaction span's start, and its
// after_model_call the first at or after the compaction span's end (events of one producer's clock:
// the producer's own order, never a match against captured calls).
//
// # Order, duplicates and invalid records
//
// Records are sorted by span start time, then trace id and span id. A span id that repeats keeps
// its first span. An invocation whose id an earlier invocation already has, a record that fails
// its Validate, and an invocation whose parent would close a cycle (it keeps a null parent) give
// gap observation_span_invalid (detail "span:<span id>:<reason>"), as does a span whose attributes
// cannot be read; invalid event or link references give the same gap and are left out. Gaps follow
// record order. Safe for concurrent use.
func BundleFromSpans(spans []ObservationSpan) AgentObservationBundle {
	b := AgentObservationBundle{Source: BundleSource, Records: []Record{}, Gaps: []ObservationGap{}}
	order := make([]*ObservationSpan, 0, len(spans))
	for i := range spans {
		if _, ok := ObservationKind(spans[i].Attributes); ok {
			order = append(order, &spans[i])
		}
	}
	slices.SortStableFunc(order, func(x, y *ObservationSpan) int {
		if c := x.StartTime.Compare(y.StartTime); c != 0 {
			return c
		}
		if c := bytes.Compare(x.TraceID[:], y.TraceID[:]); c != 0 {
			return c
		}
		return bytes.Compare(x.SpanID[:], y.SpanID[:])
	})

	all := make([]*mapped, 0, len(order))
	bySpan := make(map[spanKey]*mapped, len(order))
	for _, s := range order {
		k := spanKey{s.TraceID, s.SpanID}
		if _, dup := bySpan[k]; dup {
			continue
		}
		kind, _ := ObservationKind(s.Attributes)
		m, err := mapSpan(s, kind)
		if err != nil {
			// Keep the span in the chain without a record: an invocation still names its id.
			m = &mapped{span: s, kind: kind, dropped: true}
			m.gaps = append(m.gaps, spanGap(s, err.Error()))
		}
		bySpan[k] = m
		all = append(all, m)
	}

	res := resolver{bySpan: bySpan, invocations: make(map[string]*mapped)}
	for _, m := range all {
		if m.inv == nil {
			continue
		}
		if _, dup := res.invocations[m.inv.InvocationID]; dup {
			m.dropped = true
			m.gaps = append(m.gaps, spanGap(m.span, fmt.Sprintf("invocation_id %q is not unique", m.inv.InvocationID)))
			continue
		}
		res.invocations[m.inv.InvocationID] = m
	}
	for _, m := range all {
		if !m.dropped {
			res.resolve(m)
		}
	}
	res.breakCycles(all)

	for _, m := range all {
		b.Gaps = append(b.Gaps, m.gaps...)
		if m.dropped {
			continue
		}
		r := m.rec
		if err := r.Validate(); err != nil {
			b.Gaps = append(b.Gaps, spanGapFor(m, err.Error()))
			continue
		}
		b.Records = append(b.Records, r)
	}
	return b
}

// spanGap is an observation_span_invalid gap about span s.
func spanGap(s *ObservationSpan, reason string) ObservationGap {
	return ObservationGap{Code: semconv.GapObservationSpanInvalid, Detail: Ptr("span:" + s.SpanID.String() + ":" + reason)}
}

// spanGapFor is spanGap naming the record's invocation.
func spanGapFor(m *mapped, reason string) ObservationGap {
	g := spanGap(m.span, reason)
	id := m.owner // a tool call's or compaction's invocation; "" for a sandbox
	if m.inv != nil {
		id = m.inv.InvocationID
	}
	if id != "" {
		g.InvocationID = Ptr(id)
	}
	return g
}

// resolver fills the relations of mapped spans from explicit attributes and the parent chain.
type resolver struct {
	bySpan      map[spanKey]*mapped // every observation span, records or not
	invocations map[string]*mapped  // invocation_id → its (first) invocation
}

// walk follows the parent chain from s's parent (see [BundleFromSpans]) and returns the invocation
// found ("" for none) and the nearest execute_tool span passed on the way (nil for none).
func (r *resolver) walk(s *ObservationSpan) (invocationID string, tool *mapped) {
	cur := spanKey{s.TraceID, s.ParentSpanID}
	for steps := 0; steps <= len(r.bySpan) && cur.span.IsValid(); steps++ {
		m, ok := r.bySpan[cur]
		if !ok {
			return "", tool
		}
		switch {
		case m.kind == KindAgentInvocation:
			// An invocation left out as a duplicate still names the invocation that owns its id.
			return invocationAttr(m.span), tool
		case m.kind == KindToolCall:
			if tool == nil {
				tool = m
			}
			if m.owner != "" {
				return m.owner, tool
			}
		case m.kind == KindContextCompaction && m.owner != "":
			return m.owner, tool
		}
		cur = spanKey{m.span.TraceID, m.span.ParentSpanID}
	}
	return "", tool
}

// resolve fills m's relations.
func (r *resolver) resolve(m *mapped) {
	switch {
	case m.inv != nil:
		if m.parentSet && m.spawnedSet {
			return
		}
		parent, tool := r.walk(m.span)
		if !m.parentSet && parent != "" {
			m.inv.ParentInvocationID = Ptr(parent)
		}
		if !m.spawnedSet && tool != nil && tool.tool != nil {
			m.inv.SpawnedByToolCallID = Ptr(tool.tool.ToolCallID)
		}
	case m.tool != nil:
		r.own(m, &m.tool.InvocationID, "tool_call:"+m.tool.ToolCallID)
	case m.comp != nil:
		if !r.own(m, &m.comp.InvocationID, "context_compaction:"+m.span.SpanID.String()) {
			return
		}
		owner := r.invocations[m.owner]
		if owner == nil || (m.beforeSet && m.afterSet) {
			return
		}
		if !m.beforeSet {
			for _, t := range owner.timed {
				if !t.at.After(m.span.StartTime) {
					m.comp.BeforeModelCall = Ptr(t.ref)
				}
			}
		}
		if !m.afterSet && !m.span.EndTime.IsZero() {
			for _, t := range owner.timed {
				if !t.at.Before(m.span.EndTime) {
					m.comp.AfterModelCall = Ptr(t.ref)
					break
				}
			}
		}
	}
}

// own finds the invocation of a tool call or compaction without an explicit one and stores it in
// m.owner and *invocationID; without one m is dropped with a gap (detail names m) and own reports
// false.
func (r *resolver) own(m *mapped, invocationID *string, detail string) bool {
	if m.owner == "" {
		m.owner, _ = r.walk(m.span)
		*invocationID = m.owner
	}
	if m.owner == "" {
		m.dropped = true
		m.gap(semconv.GapObservationInvocationUnavailable, "", detail)
		return false
	}
	return true
}

// breakCycles gives a null parent to each invocation (in record order) whose parent chain among
// the present invocations returns to it, with a gap.
func (r *resolver) breakCycles(all []*mapped) {
	for _, m := range all {
		if m.dropped || m.inv == nil || m.inv.ParentInvocationID == nil {
			continue
		}
		seen := map[string]bool{m.inv.InvocationID: true}
		for p := m.inv.ParentInvocationID; p != nil; {
			if seen[*p] {
				if *p == m.inv.InvocationID {
					m.inv.ParentInvocationID = nil
					m.gaps = append(m.gaps, spanGapFor(m, "parent_invocation_id would form a cycle"))
				}
				break
			}
			seen[*p] = true
			next := r.invocations[*p]
			if next == nil {
				break
			}
			p = next.inv.ParentInvocationID
		}
	}
}

// invocationAttr is the invocation id an invoke_agent span names: gymtrace.agent.invocation.id, else
// its span id.
func invocationAttr(s *ObservationSpan) string {
	if id, _ := (&attrReader{a: s.Attributes}).str(semconv.GymtraceAgentInvocationIDKey); id != "" {
		return id
	}
	return s.SpanID.String()
}
