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

// record returns the mapped record.
func (m *mapped) record() Record {
	switch {
	case m.inv != nil:
		return m.inv
	case m.tool != nil:
		return m.tool
	case m.comp != nil:
		return m.comp
	}
	return m.sb
}

// invocationID returns the invocation a record belongs to ("" for a sandbox).
func (m *mapped) invocationID() string {
	switch {
	case m.inv != nil:
		return m.inv.InvocationID
	case m.tool != nil:
		return m.tool.InvocationID
	case m.comp != nil:
		return m.comp.InvocationID
	}
	return ""
}

// mapSpan maps one observation span of the given kind. An error means no record can be built from
// it (a mistyped or invalid attribute); reference problems become gaps on the result instead.
func mapSpan(s *ObservationSpan, kind string) (*mapped, error) {
	a := s.Attributes
	if a == nil {
		a = attrList(nil)
	}
	m := &mapped{span: s, kind: kind}
	var err error
	switch kind {
	case KindAgentInvocation:
		err = m.mapInvocation(a)
	case KindToolCall:
		err = m.mapToolCall(a)
	case KindContextCompaction:
		err = m.mapCompaction(a)
	case KindSandbox:
		err = m.mapSandbox(a)
	default:
		err = fmt.Errorf("not an observation span")
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

func (m *mapped) mapInvocation(a capture.AttributeLookup) error {
	s := m.span
	inv := &AgentInvocation{InvocationID: s.SpanID.String()}
	id, ok, err := attrString(a, semconv.GymtraceAgentInvocationIDKey)
	if err != nil {
		return err
	}
	if ok && id != "" {
		inv.InvocationID = id
	}
	if inv.ParentInvocationID, m.parentSet, err = attrStringPtr(a, semconv.GymtraceAgentParentInvocationIDKey); err != nil {
		return err
	}
	if inv.SpawnedByToolCallID, m.spawnedSet, err = attrStringPtr(a, semconv.GymtraceAgentSpawnedByToolCallIDKey); err != nil {
		return err
	}
	status, err := explicitStatus(a)
	if err != nil {
		return err
	}
	inv.Status = spanStatus(s, status, "", InvocationStatusIncomplete, InvocationStatusFailed, InvocationStatusCompleted)
	inv.DurationMS = durationMS(s)
	if inv.ErrorType, _, err = attrStringPtr(a, semconv.ErrorTypeKey); err != nil {
		return err
	}
	refs, err := m.collectRefs(a, inv.InvocationID)
	if err != nil {
		return err
	}
	inv.ModelCalls = refs
	m.inv = inv
	return nil
}

func (m *mapped) mapToolCall(a capture.AttributeLookup) error {
	s := m.span
	t := &ToolCallObservation{}
	callID, ok, err := attrString(a, semconv.GenAIToolCallIDKey)
	if err != nil {
		return err
	}
	if !ok || callID == "" {
		return fmt.Errorf("%s is required on an execute_tool span", semconv.GenAIToolCallIDKey)
	}
	t.ToolCallID = callID
	if m.owner, _, err = attrString(a, semconv.GymtraceAgentInvocationIDKey); err != nil {
		return err
	}
	t.InvocationID = m.owner
	if t.SandboxID, _, err = attrStringPtr(a, semconv.GymtraceSandboxIDKey); err != nil {
		return err
	}
	if t.ToolName, _, err = attrStringPtr(a, semconv.GenAIToolNameKey); err != nil {
		return err
	}
	t.StartedAt = Ptr(capture.UnixSeconds(s.StartTime))
	if !s.EndTime.IsZero() {
		t.CompletedAt = Ptr(capture.UnixSeconds(s.EndTime))
	}
	t.DurationMS = durationMS(s)
	src, ok, err := attrString(a, semconv.GymtraceToolTimingSourceKey)
	if err != nil {
		return err
	}
	if ok {
		t.TimingSource = Ptr(TimingSource(src))
	} else {
		t.TimingSource = Ptr(TimingSourceExecutor)
	}
	if t.ErrorType, _, err = attrStringPtr(a, semconv.ErrorTypeKey); err != nil {
		return err
	}
	status, err := explicitStatus(a)
	if err != nil {
		return err
	}
	t.Status = spanStatus(s, status, deref(t.ErrorType), ToolCallStatusIncomplete, ToolCallStatusFailed, ToolCallStatusCompleted,
		ToolCallStatusTimeout, ToolCallStatusCancelled)
	m.tool = t
	return nil
}

func (m *mapped) mapCompaction(a capture.AttributeLookup) error {
	s := m.span
	c := &ContextCompactionObservation{}
	var err error
	if m.owner, _, err = attrString(a, semconv.GymtraceAgentInvocationIDKey); err != nil {
		return err
	}
	c.InvocationID = m.owner
	if !s.EndTime.IsZero() {
		c.ObservedAt = Ptr(capture.UnixSeconds(s.EndTime))
	}
	if c.Trigger, _, err = attrStringPtr(a, semconv.GymtraceCompactionTriggerKey); err != nil {
		return err
	}
	if c.TokensBefore, err = attrIntPtr(a, semconv.GymtraceCompactionTokensBeforeKey); err != nil {
		return err
	}
	if c.TokensAfter, err = attrIntPtr(a, semconv.GymtraceCompactionTokensAfterKey); err != nil {
		return err
	}
	if c.Summary, _, err = attrStringPtr(a, semconv.GymtraceCompactionSummaryKey); err != nil {
		return err
	}
	if c.FirstKeptItemID, _, err = attrStringPtr(a, semconv.GymtraceCompactionFirstKeptItemIDKey); err != nil {
		return err
	}
	errType, _, err := attrString(a, semconv.ErrorTypeKey)
	if err != nil {
		return err
	}
	status, err := explicitStatus(a)
	if err != nil {
		return err
	}
	c.Outcome = spanStatus(s, status, errType, CompactionOutcomeUnknown, CompactionOutcomeFailed, CompactionOutcomeCompleted,
		CompactionOutcomeAborted)
	for _, f := range []struct {
		key attribute.Key
		dst **ModelCallRef
		set *bool
	}{
		{semconv.GymtraceCompactionBeforeModelCallIDKey, &c.BeforeModelCall, &m.beforeSet},
		{semconv.GymtraceCompactionAfterModelCallIDKey, &c.AfterModelCall, &m.afterSet},
	} {
		id, ok, err := attrString(a, f.key)
		if err != nil {
			return err
		}
		if ok {
			if id == "" {
				return fmt.Errorf("%s is empty", f.key)
			}
			*f.dst, *f.set = &ModelCallRef{ModelCallID: Ptr(id)}, true
		}
	}
	refs, err := m.collectRefs(a, c.InvocationID)
	if err != nil {
		return err
	}
	c.ModelCalls = refs
	m.comp = c
	return nil
}

func (m *mapped) mapSandbox(a capture.AttributeLookup) error {
	s := m.span
	sb := &SandboxObservation{}
	role, _, err := attrString(a, semconv.GymtraceSandboxRoleKey)
	if err != nil {
		return err
	}
	sb.Role = SandboxRole(role)
	if sb.Provider, _, err = attrStringPtr(a, semconv.GymtraceSandboxProviderKey); err != nil {
		return err
	}
	if sb.SandboxID, _, err = attrStringPtr(a, semconv.GymtraceSandboxIDKey); err != nil {
		return err
	}
	if sb.ExitCode, err = attrIntPtr(a, semconv.GymtraceSandboxExitCodeKey); err != nil {
		return err
	}
	for _, f := range []struct {
		key attribute.Key
		dst **float64
	}{
		{semconv.GymtraceSandboxWallTimeKey, &sb.WallTimeS},
		{semconv.GymtraceSandboxCPUTimeKey, &sb.CPUTimeS},
		{semconv.GymtraceSandboxPeakMemoryKey, &sb.PeakMemoryMiB},
	} {
		if *f.dst, err = attrFloatPtr(a, f.key); err != nil {
			return err
		}
	}
	if sb.ResourceUsageSource, _, err = attrStringPtr(a, semconv.GymtraceSandboxResourceUsageSourceKey); err != nil {
		return err
	}
	if sb.ErrorType, _, err = attrStringPtr(a, semconv.ErrorTypeKey); err != nil {
		return err
	}
	status, err := explicitStatus(a)
	if err != nil {
		return err
	}
	sb.Outcome = spanStatus(s, status, deref(sb.ErrorType), SandboxOutcomeUnknown, SandboxOutcomeFailed, SandboxOutcomeCompleted,
		SandboxOutcomeTimeout, SandboxOutcomeOOM, SandboxOutcomeSandboxError, SandboxOutcomeCancelled)
	m.sb = sb
	return nil
}

// collectRefs returns the span's model-call references in this order, each reference once: the
// gymtrace.model_call.ids list, then the gymtrace.model_call events, then the links that carry
// reference attributes. An invalid event or link reference becomes a gap (the others are kept); a
// span that lost events or links to a count limit and has no ids list gets a
// GapObservationModelCallsDropped gap. It also fills m.timed from the events.
func (m *mapped) collectRefs(a capture.AttributeLookup, invocationID string) ([]ModelCallRef, error) {
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
	ids, hasIDs, err := attrStrings(a, semconv.GymtraceModelCallIDsKey)
	if err != nil {
		return nil, err
	}
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
	return refs, nil
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
func refFromAttributes(a capture.AttributeLookup) (r ModelCallRef, present bool, err error) {
	if a == nil {
		return r, false, nil
	}
	var hasType, hasName bool
	var refType, refName string
	if r.ModelCallID, present, err = attrStringPtr(a, semconv.GymtraceModelCallIDKey); err != nil {
		return r, true, err
	}
	resp, ok, err := attrStringPtr(a, semconv.GenAIResponseIDKey)
	if err != nil {
		return r, true, err
	}
	r.ResponseID, present = resp, present || ok
	if refType, hasType, err = attrString(a, semconv.GymtraceModelRefTypeKey); err != nil {
		return r, true, err
	}
	if refName, hasName, err = attrString(a, semconv.GymtraceModelRefNameKey); err != nil {
		return r, true, err
	}
	present = present || hasType || hasName
	switch {
	case hasType && hasName:
		r.ModelRef = &ModelServerRef{Type: refType, Name: refName}
	case hasType || hasName:
		return r, true, fmt.Errorf("%s and %s must be set together", semconv.GymtraceModelRefTypeKey, semconv.GymtraceModelRefNameKey)
	}
	if !present {
		return r, false, nil
	}
	if err := r.Validate(); err != nil {
		return r, true, err
	}
	return r, true, nil
}

// explicitStatus reads gymtrace.observation.status ("" when absent). Whether the value is valid for
// the record's kind is checked with the record.
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

func explicitStatus(a capture.AttributeLookup) (string, error) {
	s, ok, err := attrString(a, semconv.GymtraceObservationStatusKey)
	if err != nil {
		return "", err
	}
	if ok && s == "" {
		return "", fmt.Errorf("%s is empty", semconv.GymtraceObservationStatusKey)
	}
	return s, nil
}

// durationMS is the span's duration in milliseconds, or nil when it has not ended or ends before
// it starts.
func durationMS(s *ObservationSpan) *float64 {
	if s.EndTime.IsZero() || s.EndTime.Before(s.StartTime) {
		return nil
	}
	return Ptr(float64(s.EndTime.Sub(s.StartTime).Nanoseconds()) / 1e6)
}

// Typed attribute readers: a present attribute of the wrong type is an error naming the key.

func attrString(a capture.AttributeLookup, k attribute.Key) (string, bool, error) {
	v, ok := a.Lookup(string(k))
	if !ok {
		return "", false, nil
	}
	if v.Type() != attribute.STRING {
		return "", false, attrTypeError(k, v, "a string")
	}
	return v.AsString(), true, nil
}

func attrStringPtr(a capture.AttributeLookup, k attribute.Key) (*string, bool, error) {
	s, ok, err := attrString(a, k)
	if err != nil || !ok {
		return nil, false, err
	}
	return &s, true, nil
}

func attrStrings(a capture.AttributeLookup, k attribute.Key) ([]string, bool, error) {
	v, ok := a.Lookup(string(k))
	if !ok {
		return nil, false, nil
	}
	if v.Type() != attribute.STRINGSLICE {
		return nil, false, attrTypeError(k, v, "a string slice")
	}
	return v.AsStringSlice(), true, nil
}

func attrIntPtr(a capture.AttributeLookup, k attribute.Key) (*int, error) {
	v, ok := a.Lookup(string(k))
	if !ok {
		return nil, nil
	}
	if v.Type() != attribute.INT64 {
		return nil, attrTypeError(k, v, "an integer")
	}
	n := v.AsInt64()
	if n < math.MinInt || n > math.MaxInt {
		return nil, fmt.Errorf("%s = %d is out of range", k, n)
	}
	i := int(n)
	return &i, nil
}

func attrFloatPtr(a capture.AttributeLookup, k attribute.Key) (*float64, error) {
	v, ok := a.Lookup(string(k))
	if !ok {
		return nil, nil
	}
	var f float64
	switch v.Type() {
	case attribute.FLOAT64:
		f = v.AsFloat64()
	case attribute.INT64:
		f = float64(v.AsInt64())
	default:
		return nil, attrTypeError(k, v, "a number")
	}
	return &f, nil
}

func attrTypeError(k attribute.Key, v attribute.Value, want string) error {
	return fmt.Errorf("%s is %s, want %s", k, v.Type(), want)
}

// attrList adapts an attribute slice to [capture.AttributeLookup] (the last value of a repeated key
// wins, as in the SDK).
type attrList = capture.Attributes
