package agentobs

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
)

// This file maps ONE span to its observation record, using nothing but that span. Relations
// between spans (which invocation a tool call belongs to, a subagent's parent, a compaction's
// before/after calls) are resolved in spans_bundle.go.

// mapped is one observation span after the per-span mapping.
type mapped struct {
	span *ObservationSpan
	kind string

	rec  Record // the record: one of inv, tool, comp and sb
	inv  *AgentInvocation
	tool *ToolCallObservation
	comp *ContextCompactionObservation
	sb   *SandboxObservation

	// owner is the explicit gymtrace.agent.invocation.id of a tool call or compaction ("" = none).
	owner string
	// Explicit relations of an invocation and compaction (attributes present).
	parentSet, spawnedSet, beforeSet, afterSet bool
	// timed are the references of gymtrace.model_call events with their times, first time per
	// reference, in event order: the before/after rule of compactions reads an invocation's.
	timed []timedRef
	gaps  []ObservationGap
	// dropped: no record (the span could not be mapped, its invocation id repeats, or its
	// invocation is unknown); its gaps still count.
	dropped bool
}

// timedRef is a model-call reference with the time of the event that recorded it.
type timedRef struct {
	ref ModelCallRef
	at  time.Time
}

// mapSpan maps one observation span of the given kind. An error means no record can be built from
// it (a mistyped or invalid attribute); reference problems become gaps on the result instead.
func mapSpan(s *ObservationSpan, kind string) (*mapped, error) {
	r := &attrReader{a: s.Attributes}
	m := &mapped{span: s, kind: kind}
	switch kind {
	case KindAgentInvocation:
		m.mapInvocation(r)
	case KindToolCall:
		m.mapToolCall(r)
	case KindContextCompaction:
		m.mapCompaction(r)
	case KindSandbox:
		m.mapSandbox(r)
	default:
		r.fail(fmt.Errorf("not an observation span"))
	}
	if r.err != nil {
		return nil, r.err
	}
	return m, nil
}

func (m *mapped) mapInvocation(r *attrReader) {
	s := m.span
	inv := &AgentInvocation{InvocationID: s.SpanID.String()}
	if id, _ := r.str(semconv.GymtraceAgentInvocationIDKey); id != "" {
		inv.InvocationID = id
	}
	inv.ParentInvocationID, m.parentSet = r.strPtr(semconv.GymtraceAgentParentInvocationIDKey)
	inv.SpawnedByToolCallID, m.spawnedSet = r.strPtr(semconv.GymtraceAgentSpawnedByToolCallIDKey)
	inv.Status = spanStatus(s, r.status(), "", InvocationStatusIncomplete, InvocationStatusFailed, InvocationStatusCompleted)
	inv.DurationMS = durationMS(s)
	inv.ErrorType, _ = r.strPtr(semconv.ErrorTypeKey)
	inv.ModelCalls = m.collectRefs(r, inv.InvocationID)
	m.inv, m.rec = inv, inv
}

func (m *mapped) mapToolCall(r *attrReader) {
	s := m.span
	t := &ToolCallObservation{}
	if t.ToolCallID, _ = r.str(semconv.GenAIToolCallIDKey); t.ToolCallID == "" {
		r.fail(fmt.Errorf("%s is required on an execute_tool span", semconv.GenAIToolCallIDKey))
	}
	m.owner, _ = r.str(semconv.GymtraceAgentInvocationIDKey)
	t.InvocationID = m.owner
	t.SandboxID, _ = r.strPtr(semconv.GymtraceSandboxIDKey)
	t.ToolName, _ = r.strPtr(semconv.GenAIToolNameKey)
	t.StartedAt = Ptr(capture.UnixSeconds(s.StartTime))
	if !s.EndTime.IsZero() {
		t.CompletedAt = Ptr(capture.UnixSeconds(s.EndTime))
	}
	t.DurationMS = durationMS(s)
	t.TimingSource = Ptr(TimingSourceExecutor)
	if src, ok := r.str(semconv.GymtraceToolTimingSourceKey); ok {
		t.TimingSource = Ptr(TimingSource(src))
	}
	t.ErrorType, _ = r.strPtr(semconv.ErrorTypeKey)
	t.Status = spanStatus(s, r.status(), deref(t.ErrorType), ToolCallStatusIncomplete, ToolCallStatusFailed,
		ToolCallStatusCompleted, ToolCallStatusTimeout, ToolCallStatusCancelled)
	m.tool, m.rec = t, t
}

func (m *mapped) mapCompaction(r *attrReader) {
	s := m.span
	c := &ContextCompactionObservation{}
	m.owner, _ = r.str(semconv.GymtraceAgentInvocationIDKey)
	c.InvocationID = m.owner
	if !s.EndTime.IsZero() {
		c.ObservedAt = Ptr(capture.UnixSeconds(s.EndTime))
	}
	c.Trigger, _ = r.strPtr(semconv.GymtraceCompactionTriggerKey)
	c.TokensBefore = r.intPtr(semconv.GymtraceCompactionTokensBeforeKey)
	c.TokensAfter = r.intPtr(semconv.GymtraceCompactionTokensAfterKey)
	c.Summary, _ = r.strPtr(semconv.GymtraceCompactionSummaryKey)
	c.FirstKeptItemID, _ = r.strPtr(semconv.GymtraceCompactionFirstKeptItemIDKey)
	errType, _ := r.str(semconv.ErrorTypeKey)
	c.Outcome = spanStatus(s, r.status(), errType, CompactionOutcomeUnknown, CompactionOutcomeFailed,
		CompactionOutcomeCompleted, CompactionOutcomeAborted)
	for _, f := range []struct {
		key attribute.Key
		dst **ModelCallRef
		set *bool
	}{
		{semconv.GymtraceCompactionBeforeModelCallIDKey, &c.BeforeModelCall, &m.beforeSet},
		{semconv.GymtraceCompactionAfterModelCallIDKey, &c.AfterModelCall, &m.afterSet},
	} {
		if id, ok := r.str(f.key); ok && id == "" {
			r.fail(fmt.Errorf("%s is empty", f.key))
		} else if ok {
			*f.dst, *f.set = &ModelCallRef{ModelCallID: Ptr(id)}, true
		}
	}
	c.ModelCalls = m.collectRefs(r, c.InvocationID)
	m.comp, m.rec = c, c
}

func (m *mapped) mapSandbox(r *attrReader) {
	s := m.span
	sb := &SandboxObservation{}
	role, _ := r.str(semconv.GymtraceSandboxRoleKey)
	sb.Role = SandboxRole(role)
	sb.Provider, _ = r.strPtr(semconv.GymtraceSandboxProviderKey)
	sb.SandboxID, _ = r.strPtr(semconv.GymtraceSandboxIDKey)
	sb.ExitCode = r.intPtr(semconv.GymtraceSandboxExitCodeKey)
	sb.WallTimeS = r.floatPtr(semconv.GymtraceSandboxWallTimeKey)
	sb.CPUTimeS = r.floatPtr(semconv.GymtraceSandboxCPUTimeKey)
	sb.PeakMemoryMiB = r.floatPtr(semconv.GymtraceSandboxPeakMemoryKey)
	sb.ResourceUsageSource, _ = r.strPtr(semconv.GymtraceSandboxResourceUsageSourceKey)
	sb.ErrorType, _ = r.strPtr(semconv.ErrorTypeKey)
	sb.Outcome = spanStatus(s, r.status(), deref(sb.ErrorType), SandboxOutcomeUnknown, SandboxOutcomeFailed,
		SandboxOutcomeCompleted, SandboxOutcomeTimeout, SandboxOutcomeOOM, SandboxOutcomeSandboxError, SandboxOutcomeCancelled)
	m.sb, m.rec = sb, sb
}

// collectRefs returns the span's model-call references in this order, each reference once: the
// gymtrace.model_call.ids list, then the gymtrace.model_call events, then the links that carry
// reference attributes. An invalid event or link reference becomes a gap (the others are kept); a
// span that lost events or links to a count limit and has no ids list gets a
// GapObservationModelCallsDropped gap. It also fills m.timed from the events.
func (m *mapped) collectRefs(a *attrReader, invocationID string) []ModelCallRef {
	s := m.span
	var refs []ModelCallRef
	seen := make(map[refKey]bool)
	add := func(r ModelCallRef) {
		k := keyOf(r)
		if !seen[k] {
			seen[k] = true
			refs = append(refs, r)
		}
	}
	ids, hasIDs := a.strs(semconv.GymtraceModelCallIDsKey)
	for i, id := range ids {
		if id == "" {
			m.gap(semconv.GapObservationSpanInvalid, invocationID, fmt.Sprintf("%s[%d] is empty", semconv.GymtraceModelCallIDsKey, i))
			continue
		}
		add(ModelCallRef{ModelCallID: Ptr(id)})
	}
	timedSeen := make(map[refKey]bool)
	for i := range s.Events {
		ev := &s.Events[i]
		if ev.Name != semconv.GymtraceModelCallEventName {
			continue
		}
		r, present, err := refFromAttributes(ev.Attributes)
		if err == nil && !present {
			err = errors.New("carries no model-call reference attribute")
		}
		if err != nil {
			m.gap(semconv.GapObservationSpanInvalid, invocationID, fmt.Sprintf("event %d %s: %v", i, ev.Name, err))
			continue
		}
		add(r)
		if k := keyOf(r); !timedSeen[k] {
			timedSeen[k] = true
			m.timed = append(m.timed, timedRef{ref: r, at: ev.Time})
		}
	}
	for i := range s.Links {
		r, present, err := refFromAttributes(s.Links[i].Attributes)
		if err != nil {
			m.gap(semconv.GapObservationSpanInvalid, invocationID, fmt.Sprintf("link %d: %v", i, err))
			continue
		}
		if present {
			add(r)
		}
	}
	if !hasIDs && (s.DroppedEvents > 0 || s.DroppedLinks > 0) {
		m.gap(semconv.GapObservationModelCallsDropped, invocationID,
			fmt.Sprintf("span:%s:dropped_events=%d:dropped_links=%d", s.SpanID, s.DroppedEvents, s.DroppedLinks))
	}
	return refs
}

// gap adds a gap about this span. Details of span-level problems name the span.
func (m *mapped) gap(code, invocationID, detail string) {
	if code == semconv.GapObservationSpanInvalid {
		detail = "span:" + m.span.SpanID.String() + ":" + detail
	}
	g := ObservationGap{Code: code, Detail: Ptr(detail)}
	if invocationID != "" {
		g.InvocationID = Ptr(invocationID)
	}
	m.gaps = append(m.gaps, g)
}

// refKey identifies a reference for de-duplication.
type refKey struct {
	id, refType, refName, responseID string
	hasID, hasRef, hasResp           bool
}

func keyOf(r ModelCallRef) refKey {
	var k refKey
	if r.ModelCallID != nil {
		k.id, k.hasID = *r.ModelCallID, true
	}
	if r.ModelRef != nil {
		k.refType, k.refName, k.hasRef = r.ModelRef.Type, r.ModelRef.Name, true
	}
	if r.ResponseID != nil {
		k.responseID, k.hasResp = *r.ResponseID, true
	}
	return k
}

// refFromAttributes reads a model-call reference from event or link attributes:
// gymtrace.model_call.id, gen_ai.response.id, gymtrace.model_ref.type and gymtrace.model_ref.name
// (the last two together). present is false when none of them is there.
func refFromAttributes(attrs capture.AttributeLookup) (ref ModelCallRef, present bool, err error) {
	r := attrReader{a: attrs}
	var hasID, hasResp bool
	ref.ModelCallID, hasID = r.strPtr(semconv.GymtraceModelCallIDKey)
	ref.ResponseID, hasResp = r.strPtr(semconv.GenAIResponseIDKey)
	refType, hasType := r.str(semconv.GymtraceModelRefTypeKey)
	refName, hasName := r.str(semconv.GymtraceModelRefNameKey)
	switch {
	case r.err != nil:
		return ref, true, r.err
	case hasType && hasName:
		ref.ModelRef = &ModelServerRef{Type: refType, Name: refName}
	case hasType || hasName:
		return ref, true, fmt.Errorf("%s and %s must be set together", semconv.GymtraceModelRefTypeKey, semconv.GymtraceModelRefNameKey)
	case !hasID && !hasResp:
		return ref, false, nil
	}
	return ref, true, ref.Validate()
}

// spanStatus derives an observation's status or outcome from its span, the same way for every
// kind: the explicit gymtrace status attribute wins; a span that has not ended is notEnded; an error
// span is its error.type when that names one of the kind's specific error outcomes (fromErrorType),
// else failed; any other span is completed.
func spanStatus[S ~string](s *ObservationSpan, explicit, errType string, notEnded, failed, completed S, fromErrorType ...S) S {
	switch {
	case explicit != "":
		return S(explicit)
	case s.EndTime.IsZero():
		return notEnded
	case s.StatusCode != codes.Error:
		return completed
	case slices.Contains(fromErrorType, S(errType)):
		return S(errType)
	}
	return failed
}

// deref is *p, or "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// durationMS is the span's duration in milliseconds, or nil when it has not ended or ends before
// it starts.
func durationMS(s *ObservationSpan) *float64 {
	if s.EndTime.IsZero() || s.EndTime.Before(s.StartTime) {
		return nil
	}
	return Ptr(float64(s.EndTime.Sub(s.StartTime).Nanoseconds()) / 1e6)
}

// attrReader reads typed attributes: a present attribute of the wrong type is an error naming the
// key. The first error sticks, and later reads find nothing.
type attrReader struct {
	a   capture.AttributeLookup
	err error
}

func (r *attrReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// value returns the attribute k when it is present and of one of the types ts (want names them).
func (r *attrReader) value(k attribute.Key, want string, ts ...attribute.Type) (attribute.Value, bool) {
	if r.err != nil || r.a == nil {
		return attribute.Value{}, false
	}
	v, ok := r.a.Lookup(string(k))
	if ok && !slices.Contains(ts, v.Type()) {
		r.fail(attrTypeError(k, v, want))
		return attribute.Value{}, false
	}
	return v, ok
}

func (r *attrReader) str(k attribute.Key) (string, bool) {
	v, ok := r.value(k, "a string", attribute.STRING)
	return v.AsString(), ok
}

func (r *attrReader) strPtr(k attribute.Key) (*string, bool) {
	if s, ok := r.str(k); ok {
		return &s, true
	}
	return nil, false
}

func (r *attrReader) strs(k attribute.Key) ([]string, bool) {
	v, ok := r.value(k, "a string slice", attribute.STRINGSLICE)
	return v.AsStringSlice(), ok
}

func (r *attrReader) intPtr(k attribute.Key) *int {
	v, ok := r.value(k, "an integer", attribute.INT64)
	if !ok {
		return nil
	}
	if n := v.AsInt64(); n < math.MinInt || n > math.MaxInt {
		r.fail(fmt.Errorf("%s = %d is out of range", k, n))
		return nil
	}
	return Ptr(int(v.AsInt64()))
}

func (r *attrReader) floatPtr(k attribute.Key) *float64 {
	v, ok := r.value(k, "a number", attribute.FLOAT64, attribute.INT64)
	switch {
	case !ok:
		return nil
	case v.Type() == attribute.INT64:
		return Ptr(float64(v.AsInt64()))
	}
	return Ptr(v.AsFloat64())
}

// status reads gymtrace.observation.status ("" when absent). Whether the value is valid for the
// record's kind is checked with the record.
func (r *attrReader) status() string {
	s, ok := r.str(semconv.GymtraceObservationStatusKey)
	if ok && s == "" {
		r.fail(fmt.Errorf("%s is empty", semconv.GymtraceObservationStatusKey))
	}
	return s
}

func attrTypeError(k attribute.Key, v attribute.Value, want string) error {
	return fmt.Errorf("%s is %s, want %s", k, v.Type(), want)
}
