package agentobs

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/rollout"
)

// The gap codes the projection adds (SPEC §5.6 "Gap codes the projection and the collector add";
// the redaction gap the collector reads is semconv.GapMultimodalHistoryRedacted).
const (
	GapProducerTrajectoryIdentityMismatch = "producer_trajectory_identity_mismatch"
	GapProducerTrajectoryInvalid          = "producer_trajectory_invalid"
	GapAgentObservationsInvalid           = "agent_observations_invalid"
	GapModelCallCaptureGapInvalid         = "model_call_capture_gap_invalid"
	GapModelCallsUnavailable              = "model_calls_unavailable"
	GapTurnsUnavailable                   = "turns_unavailable"
	GapConversationUnavailable            = "conversation_unavailable"
	GapTrajectoryProjectionFailed         = "trajectory_projection_failed"
)

// The Python exception classes a projection failure is named by (SPEC §5.6 "Exceptions that
// leave the projection"); [ProjectionError.Class] is one of them.
const (
	ClassKeyError        = "KeyError"
	ClassValueError      = "ValueError"
	ClassTypeError       = "TypeError"
	ClassValidationError = "ValidationError"
)

// ProjectionError is why [ProjectTrajectory] failed. Class is the Python exception class Gym's
// collector raises for the same input (KeyError, ValueError, TypeError or ValidationError); it is
// the detail of the trajectory_projection_failed gap (SPEC §5.5).
type ProjectionError struct {
	Class string
	Err   error
}

// Error returns "<Class>: <reason>".
func (e *ProjectionError) Error() string { return e.Class + ": " + e.Err.Error() }

// Unwrap returns the reason.
func (e *ProjectionError) Unwrap() error { return e.Err }

func projErr(class string, format string, args ...any) *ProjectionError {
	return &ProjectionError{Class: class, Err: fmt.Errorf(format, args...)}
}

// ProjectTrajectory is Gym's _build_trajectory_record (SPEC §5.6): the ng_trajectory of the
// rollout whose dispatched input row is row and whose result (after the collector's copy and
// capture-merge steps, SPEC §5.5) is result, as the JSON-mode dump of a [TrajectoryRecord]. The
// identity comes from row only; the producer's ng_trajectory is reused (an invalid one becomes
// the producer_trajectory_invalid gap, a foreign identity producer_trajectory_identity_mismatch),
// ng_agent_observations contributes invocations, tool calls and gaps, every object in
// ng_model_call_capture.calls becomes one model call (merged by model_call_id into the producer's),
// the attachment's gaps are copied and the *_unavailable gaps added; gaps are de-duplicated. The
// error is a [*ProjectionError]. Neither argument is modified.
func ProjectTrajectory(row, result ojson.Value) (ojson.Value, error) {
	taskID, rolloutID, err := trajectoryIdentity(row)
	if err != nil {
		return ojson.Value{}, err
	}
	p := projection{}
	p.producer(result, taskID, rolloutID)
	if obs, ok := result.Get(AttachmentKey); ok && !obs.IsNull() {
		if err := p.observations(obs); err != nil {
			p.gaps = append(p.gaps, gapOf(GapAgentObservationsInvalid, ClassValidationError))
		}
	}
	slices.SortStableFunc(p.turns, compareTurns)
	att, _ := result.Get(capture.AttachmentKey)
	if att.Kind() != ojson.KindObject {
		att = ojson.Object()
	}
	if err := p.captureCalls(att); err != nil {
		return ojson.Value{}, err
	}
	if err := p.captureGaps(att); err != nil {
		return ojson.Value{}, err
	}
	p.availability()
	rec := ojson.Object(
		ojson.Member{Key: "schema_version", Value: ojson.String(TrajectorySchemaVersion)},
		ojson.Member{Key: "task_id", Value: ojson.String(taskID)},
		ojson.Member{Key: "rollout_id", Value: ojson.String(rolloutID)},
		ojson.Member{Key: "invocations", Value: ojson.Array(p.invocations...)},
		ojson.Member{Key: "turns", Value: ojson.Array(p.turns...)},
		ojson.Member{Key: "model_calls", Value: ojson.Array(p.modelCalls...)},
		ojson.Member{Key: "tool_calls", Value: ojson.Array(p.tools...)},
		ojson.Member{Key: "gaps", Value: gapsValue(dedupGaps(p.gaps))},
	)
	out, err := validateTrajectory(rec)
	if err != nil {
		return ojson.Value{}, &ProjectionError{Class: ClassValidationError, Err: err}
	}
	return out, nil
}

// projection holds the five lists ProjectTrajectory fills, as JSON-mode dumps.
type projection struct {
	gaps                                  []ObservationGap
	invocations, turns, modelCalls, tools []ojson.Value
}

// trajectoryIdentity returns the (task_id, rollout_id) of the trajectory of dispatched input row
// row (Gym's _trajectory_identity, SPEC §5.6 "Identity"): task_id is Python's str() of the first
// non-null of task_id, problem_id, instance_id (read as json.loads reads them: 1e400 is "inf"),
// else of _ng_task_index (which must be present
// even when a task id is found: KeyError); rollout_id is SPEC §1.2's id (a malformed one is a
// ValueError), else "{_ng_task_index}-{_ng_rollout_index}". The error is a [*ProjectionError].
func trajectoryIdentity(row ojson.Value) (string, string, error) {
	body := row.AppendJSON(nil)
	py, perr := python.LoadsNonFinite(body) // str(1e400) is "inf", as in rollout.IDFromRunBody's id
	if perr != nil || py.Kind() != ojson.KindObject {
		return "", "", projErr(ClassTypeError, "the row is not a JSON object")
	}
	taskIndex, ok := py.Get("_ng_task_index")
	if !ok {
		return "", "", projErr(ClassKeyError, "'_ng_task_index'")
	}
	taskID := python.Str(taskIndex)
	for _, k := range []string{"task_id", "problem_id", "instance_id"} {
		if v, ok := py.Get(k); ok && !v.IsNull() {
			taskID = python.Str(v)
			break
		}
	}
	id, ok, err := rollout.IDFromRunBody(body)
	if err != nil {
		return "", "", &ProjectionError{Class: ClassValueError, Err: err}
	}
	if !ok {
		rolloutIndex, present := py.Get("_ng_rollout_index")
		if !present {
			return "", "", projErr(ClassKeyError, "'_ng_rollout_index'")
		}
		id = python.Str(taskIndex) + "-" + python.Str(rolloutIndex)
	}
	return taskID, id, nil
}

// producer reuses result.ng_trajectory when it is an object (SPEC §5.6 "Producer trajectory").
func (p *projection) producer(result ojson.Value, taskID, rolloutID string) {
	v, ok := result.Get(TrajectoryKey)
	if !ok || v.Kind() != ojson.KindObject {
		return
	}
	rec, err := validateTrajectory(v)
	if err != nil {
		p.gaps = append(p.gaps, gapOf(GapProducerTrajectoryInvalid, ClassValidationError))
		return
	}
	var differ []string
	if str(rec, "task_id") != taskID {
		differ = append(differ, "task_id")
	}
	if str(rec, "rollout_id") != rolloutID {
		differ = append(differ, "rollout_id")
	}
	turns := elems(rec, "turns")
	if differ != nil {
		p.gaps = append(p.gaps, gapOf(GapProducerTrajectoryIdentityMismatch, strings.Join(differ, ",")))
		for i, t := range turns {
			t = t.Clone()
			t.Set("task_id", ojson.String(taskID))
			t.Set("rollout_id", ojson.String(rolloutID))
			turns[i] = t
		}
	}
	p.turns = turns
	for _, g := range elems(rec, "gaps") {
		gap, _ := decodeGap(g, "") // valid: rec was validated
		p.gaps = append(p.gaps, gap)
	}
	p.invocations = elems(rec, "invocations")
	p.tools = elems(rec, "tool_calls")
	p.modelCalls = elems(rec, "model_calls")
}

// observations merges ng_agent_observations (SPEC §5.6 "Agent observations"). An error stops the
// merge; what was merged before it stays.
func (p *projection) observations(obs ojson.Value) error {
	b, err := DecodeBundle(obs.AppendJSON(nil))
	if err != nil {
		return err
	}
	if err := validConversations(b); err != nil { // Gym's bundle validates its items by the union
		return err
	}
	p.gaps = append(p.gaps, b.Gaps...)
	known := make(map[string]bool, len(p.invocations))
	for _, inv := range p.invocations {
		known[str(inv, "invocation_id")] = true
	}
	var observed []*ToolCallObservation
	for _, r := range b.Records {
		switch r := r.(type) {
		case *AgentInvocation:
			if !known[r.InvocationID] {
				d, err := r.appendJSON(nil)
				if err != nil {
					return err
				}
				p.invocations = append(p.invocations, mustDump(d))
			}
		case *ToolCallObservation:
			observed = append(observed, r)
		}
	}
	if len(observed) == 0 {
		return nil
	}
	type key struct{ invocation, id string }
	outputs := map[key]ojson.Value{}
	for _, inv := range p.invocations {
		invID := str(inv, "invocation_id")
		for _, item := range elems(inv, "conversation") {
			if str(item, "type") == "function_call_output" {
				item, _ = normalizeItem(item) // as Gym's validated invocation holds it
				out, _ := item.Get("output")
				outputs[key{invID, str(item, "call_id")}] = out
			}
		}
	}
	positions := make(map[key]int, len(p.tools))
	for i, t := range p.tools {
		positions[key{str(t, "invocation_id"), str(t, "tool_call_id")}] = i
	}
	for _, o := range observed {
		k := key{o.InvocationID, o.ToolCallID}
		d, err := o.appendJSON(nil)
		if err != nil {
			return err
		}
		update := withoutNulls(mustDump(d))
		merged := ojson.Object()
		i, exists := positions[k]
		if exists {
			merged = p.tools[i].Clone()
			if o.Status == ToolCallStatusUnknown && str(merged, "status") != string(ToolCallStatusUnknown) {
				update = without(update, "status")
			}
		}
		for _, m := range update.Members() {
			merged.Set(m.Key, m.Value)
		}
		if out, ok := outputs[k]; ok {
			merged.Set("output", out)
		}
		tool, err := validateAs(merged, decodeTrajectoryToolCall, TrajectoryToolCall.validate)
		if err != nil {
			return err
		}
		if exists {
			p.tools[i] = tool
		} else {
			positions[k] = len(p.tools)
			p.tools = append(p.tools, tool)
		}
	}
	return nil
}

// validConversations reports the first conversation item of b's invocations that fits no member
// of the Responses item union (SPEC §5.6 "AgentInvocation").
func validConversations(b AgentObservationBundle) error {
	for _, r := range b.Records {
		inv, ok := r.(*AgentInvocation)
		if !ok {
			continue
		}
		for i, raw := range inv.Conversation {
			item, err := ojson.Parse(raw)
			if err == nil {
				_, err = normalizeItem(item)
			}
			if err != nil {
				return fmt.Errorf("invocation %s: %s: %w", inv.InvocationID, indexPath("conversation", i), err)
			}
		}
	}
	return nil
}

// compareTurns orders turns by (timestamp, invocation_id, turn_no) (SPEC §5.6 "Turn order").
func compareTurns(a, b ojson.Value) int {
	num := func(v ojson.Value, k string) float64 {
		m, _ := v.Get(k)
		f, _ := m.Float64()
		return f
	}
	return cmp.Or(cmp.Compare(num(a, "timestamp"), num(b, "timestamp")),
		strings.Compare(str(a, "invocation_id"), str(b, "invocation_id")),
		cmp.Compare(num(a, "turn_no"), num(b, "turn_no")))
}

// captureCalls projects every object of ng_model_call_capture.calls to a model call and merges it into the
// producer's by model_call_id (SPEC §5.6 "Capture calls to model calls", "Merging with producer
// model calls").
func (p *projection) captureCalls(att ojson.Value) error {
	calls, err := iterate(att, "calls")
	if err != nil {
		return err
	}
	positions := map[string]int{}
	for i, mc := range p.modelCalls {
		if id, ok := mc.Get("model_call_id"); ok && !id.IsNull() {
			positions[python.Str(id)] = i
		}
	}
	for _, c := range calls {
		if c.Kind() != ojson.KindObject {
			continue
		}
		mc, err := validateAs(modelCallOf(c), decodeTrajectoryModelCall, TrajectoryModelCall.validate)
		if err != nil {
			return &ProjectionError{Class: ClassValidationError, Err: err}
		}
		id, _ := mc.Get("model_call_id")
		i, ok := positions[python.Str(id)]
		if id.IsNull() || !ok {
			p.modelCalls = append(p.modelCalls, mc)
			continue
		}
		delete(positions, python.Str(id))
		merged := p.modelCalls[i].Clone()
		for _, m := range withoutNulls(mc, "response_metadata", "token_stats").Members() {
			if sub, isSub := merged.Get(m.Key); isSub && (m.Key == "response_metadata" || m.Key == "token_stats") {
				for _, s := range m.Value.Members() {
					sub.Set(s.Key, s.Value)
				}
				merged.Set(m.Key, sub)
				continue
			}
			merged.Set(m.Key, m.Value)
		}
		if p.modelCalls[i], err = validateAs(merged, decodeTrajectoryModelCall, TrajectoryModelCall.validate); err != nil {
			return &ProjectionError{Class: ClassValidationError, Err: err}
		}
	}
	return nil
}

// metadataKeys are the capture-call members copied into response_metadata, in order.
var metadataKeys = []string{"response_id", "model_ref", "model", "dialect", "status_code",
	"response_status", "finish_reason", "error_category", "latency_ttft_ms"}

// tokenStatKeys maps token_stats members to the capture-call members they come from.
var tokenStatKeys = [][2]string{{"prompt_tokens", "tokens_in"}, {"completion_tokens", "tokens_out"},
	{"reasoning_tokens", "tokens_reasoning"}, {"total_tokens", "tokens_total"}, {"cached_tokens", "cached_tokens"}}

// modelCallOf is the unvalidated TrajectoryModelCall of capture call c (SPEC §5.6 table).
func modelCallOf(c ojson.Value) ojson.Value {
	get := func(k string) ojson.Value { v, _ := c.Get(k); return v }
	orRaw := func(k string) ojson.Value {
		if v := get(k); !v.IsNull() {
			return v
		}
		return get(k + "_raw")
	}
	var meta []ojson.Member
	for _, k := range metadataKeys {
		if v, ok := c.Get(k); ok && !v.IsNull() {
			meta = append(meta, ojson.Member{Key: k, Value: v})
		}
	}
	if v, ok := c.Get("response_status"); !ok || v.IsNull() {
		if s, ok := get("response").Get("status"); ok && s.Kind() == ojson.KindString {
			meta = append(meta, ojson.Member{Key: "response_status", Value: s})
		}
	}
	var stats []ojson.Member
	for _, k := range tokenStatKeys {
		if v, ok := c.Get(k[1]); ok && v.IsInteger() && !strings.HasPrefix(v.String(), "-") {
			stats = append(stats, ojson.Member{Key: k[0], Value: v})
		}
	}
	return ojson.Object(
		ojson.Member{Key: "model_call_id", Value: get("model_call_id")},
		ojson.Member{Key: "started_at", Value: get("started_at")},
		ojson.Member{Key: "completed_at", Value: get("completed_at")},
		ojson.Member{Key: "duration_ms", Value: get("latency_total_ms")},
		ojson.Member{Key: "request", Value: orRaw("request")},
		ojson.Member{Key: "response", Value: orRaw("response")},
		ojson.Member{Key: "response_metadata", Value: ojson.Object(meta...)},
		ojson.Member{Key: "token_stats", Value: ojson.Object(stats...)},
	)
}

// captureGaps copies the attachment's gaps; invalid ones become model_call_capture_gap_invalid
// (SPEC §5.6 "Capture gaps").
func (p *projection) captureGaps(att ojson.Value) error {
	gaps, err := iterate(att, "gaps")
	if err != nil {
		return err
	}
	for _, g := range gaps {
		if g.Kind() != ojson.KindObject {
			continue
		}
		if gap, err := decodeGap(g, ""); err == nil {
			p.gaps = append(p.gaps, gap)
		} else {
			p.gaps = append(p.gaps, gapOf(GapModelCallCaptureGapInvalid, ""))
		}
	}
	return nil
}

// availability appends the *_unavailable gaps (SPEC §5.6 "Availability gaps").
func (p *projection) availability() {
	if len(p.modelCalls) == 0 {
		p.gaps = append(p.gaps, gapOf(GapModelCallsUnavailable, ""))
	}
	if len(p.turns) == 0 {
		p.gaps = append(p.gaps, gapOf(GapTurnsUnavailable, ""))
	}
	if !slices.ContainsFunc(p.invocations, func(inv ojson.Value) bool { return len(elems(inv, "conversation")) > 0 }) {
		p.gaps = append(p.gaps, gapOf(GapConversationUnavailable, ""))
	}
}

// iterate returns what Python iterates for the truthy member key of obj: a list's elements; the
// keys of an object and the characters of a string are never objects, so they are returned as
// strings. A falsy or absent member gives nothing; a truthy number or true is a TypeError.
func iterate(obj ojson.Value, key string) ([]ojson.Value, error) {
	v, _ := obj.Get(key)
	if !python.Truthy(v) {
		return nil, nil
	}
	switch v.Kind() {
	case ojson.KindArray:
		return v.Elems(), nil
	case ojson.KindObject, ojson.KindString:
		return nil, nil
	}
	return nil, projErr(ClassTypeError, "'%s' object is not iterable", python.TypeName(v))
}

// validateTrajectory validates v as Gym's TrajectoryRecord (lax coercion, conversation items
// normalized, strict decoding, the record's validation) and returns its JSON-mode dump. The
// validation also runs over the parts that decoded when others did not, as pydantic's model
// validators do per element.
func validateTrajectory(v ojson.Value) (ojson.Value, error) {
	v, convErr := normalizeConversations(laxTrajectory(v))
	t, err := decodeTrajectory(v, "")
	if err = errors.Join(convErr, err, t.validate()); err != nil {
		return ojson.Value{}, err
	}
	d, err := t.AppendJSON(nil)
	if err != nil {
		return ojson.Value{}, err
	}
	return mustDump(d), nil
}

// validateAs coerces v by T's lax rules, decodes it strictly, validates it and returns its dump.
func validateAs[T any, P interface {
	*T
	fielder
	appendJSON([]byte) ([]byte, error)
}](v ojson.Value, decode func(ojson.Value, string) (T, error), validate func(T) error) (ojson.Value, error) {
	x, err := decode(laxObject(v, P(new(T)).fields()), "")
	if err == nil {
		err = validate(x)
	}
	if err != nil {
		return ojson.Value{}, err
	}
	d, err := P(&x).appendJSON(nil)
	if err != nil {
		return ojson.Value{}, err
	}
	return mustDump(d), nil
}

// mustDump parses a dump this package wrote; a failure is a bug.
func mustDump(d []byte) ojson.Value {
	v, err := ojson.Parse(d)
	if err != nil {
		panic(fmt.Sprintf("agentobs: a dump that is not JSON: %v", err))
	}
	return v
}

// gapOf is an ObservationGap without invocation ("" detail = null).
func gapOf(code, detail string) ObservationGap {
	g := ObservationGap{Code: code}
	if detail != "" {
		g.Detail = &detail
	}
	return g
}

// gapsValue is the dump of gaps.
func gapsValue(gaps []ObservationGap) ojson.Value { return mustDump(appendGaps(nil, gaps)) }

// str returns the string member k of v ("" when absent or not a string).
func str(v ojson.Value, k string) string {
	m, _ := v.Get(k)
	s, _ := m.AsString()
	return s
}

// elems returns a copy of the array member k of v.
func elems(v ojson.Value, k string) []ojson.Value {
	m, _ := v.Get(k)
	return slices.Clone(m.Elems())
}

// withoutNulls returns the dump v without its null members, also inside the nested models named
// by nested (pydantic's exclude_none).
func withoutNulls(v ojson.Value, nested ...string) ojson.Value {
	var ms []ojson.Member
	for _, m := range v.Members() {
		if m.Value.IsNull() {
			continue
		}
		if slices.Contains(nested, m.Key) {
			m.Value = withoutNulls(m.Value)
		}
		ms = append(ms, m)
	}
	return ojson.Object(ms...)
}

// without returns object v without the members named keys.
func without(v ojson.Value, keys ...string) ojson.Value {
	var ms []ojson.Member
	for _, m := range v.Members() {
		if !slices.Contains(keys, m.Key) {
			ms = append(ms, m)
		}
	}
	return ojson.Object(ms...)
}
