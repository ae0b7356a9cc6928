package agentobs

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/gymtrace/gymtrace/internal/ojson"
)

// TrajectoryKey is the rollout-record key that holds a [TrajectoryRecord] (SPEC §5.5, §5.6).
const TrajectoryKey = "ng_trajectory"

// TrajectorySchemaVersion is the only valid [TrajectoryRecord.SchemaVersion] (SPEC §5.6).
const TrajectorySchemaVersion = "1.0"

// TrajectoryRecord is the standardized ng_trajectory of one rollout (SPEC §5.5, §5.6), in Gym's
// field order: schema_version, task_id, rollout_id, invocations, turns, model_calls, tool_calls,
// gaps. gymtrace does not project trajectories (Gym's collector does); this type reads, validates
// and writes them. Valid records have unique invocation ids ("invocation_id must be unique within
// a trajectory"), unique non-empty model_call_ids ("model_call_id must be unique within a
// trajectory"), turns whose task_id and rollout_id are the record's ("turn identity must match the
// trajectory") and turn numbers unique per invocation ("turn number must be unique within an
// invocation"). Nil lists are written as [].
type TrajectoryRecord struct {
	SchemaVersion string // "1.0"; "" stands for it and is written as "1.0"
	TaskID        string // required
	RolloutID     string // required
	Invocations   []AgentInvocation
	Turns         []TrajectoryTurn
	ModelCalls    []TrajectoryModelCall
	ToolCalls     []TrajectoryToolCall
	Gaps          []ObservationGap
}

// TrajectoryTurn is one turn of an invocation in a trajectory (SPEC §5.6). JSON keys in order:
// invocation_id, task_id, rollout_id, turn_no, timestamp, question, answer, reasoning_content,
// resolved, step_count, model_calls. Question, Answer and ReasoningContent hold any JSON value
// (compact text; nil = null).
type TrajectoryTurn struct {
	InvocationID     string  // required
	TaskID           string  // required; must equal the trajectory's
	RolloutID        string  // required; must equal the trajectory's
	TurnNo           int     // required, >= 1: turn number within the invocation
	Timestamp        float64 // required: UTC Unix seconds
	Question         json.RawMessage
	Answer           json.RawMessage
	ReasoningContent json.RawMessage
	Resolved         *bool
	StepCount        int // required, >= 0: producer-reported cumulative step count within the invocation
	ModelCalls       []ModelCallRef
}

// TrajectoryModelCall is one model call of a trajectory (SPEC §5.6): the projection of a captured
// call. JSON keys in order: model_call_id, started_at, completed_at, duration_ms (>= 0), request,
// response (any JSON value; nil = null), response_metadata, token_stats.
type TrajectoryModelCall struct {
	ModelCallID      *string
	StartedAt        *float64 // UTC Unix seconds
	CompletedAt      *float64 // UTC Unix seconds
	DurationMS       *float64 // milliseconds (the capture's latency_total_ms), >= 0
	Request          json.RawMessage
	Response         json.RawMessage
	ResponseMetadata TrajectoryResponseMetadata
	TokenStats       TrajectoryTokenStats
}

// TrajectoryResponseMetadata describes a trajectory model call's response (SPEC §5.6). JSON keys
// in order: response_id, model_ref, model, dialect, status_code, response_status, finish_reason,
// error_category, latency_ttft_ms (milliseconds, >= 0); all nullable.
type TrajectoryResponseMetadata struct {
	ResponseID     *string
	ModelRef       *ModelServerRef
	Model          *string
	Dialect        *string
	StatusCode     *int
	ResponseStatus *string
	FinishReason   *string
	ErrorCategory  *string
	LatencyTTFTMS  *float64
}

// TrajectoryTokenStats is a trajectory model call's token usage (SPEC §5.6). JSON keys in order:
// prompt_tokens, completion_tokens, reasoning_tokens, total_tokens, cached_tokens; all nullable
// and >= 0.
type TrajectoryTokenStats struct {
	PromptTokens     *int
	CompletionTokens *int
	ReasoningTokens  *int
	TotalTokens      *int
	CachedTokens     *int
}

// TrajectoryToolCall is a [ToolCallObservation] with the model-visible tool output (SPEC §5.6):
// the observation's keys (kind "tool_call" first) followed by "output" (any JSON value; nil = null).
type TrajectoryToolCall struct {
	ToolCallObservation
	Output json.RawMessage
}

// Validate reports whether t satisfies SPEC §5.6 (see [TrajectoryRecord]) and every nested value
// is valid. Errors name the field by its path.
func (t TrajectoryRecord) Validate() error { return wrapValidation("trajectory", t.validate()) }

func (t TrajectoryRecord) validate() error {
	var errs []error
	if t.SchemaVersion != "" && t.SchemaVersion != TrajectorySchemaVersion {
		errs = append(errs, fieldError("schema_version", fmt.Errorf("%s is not %q", strconv.Quote(t.SchemaVersion), TrajectorySchemaVersion)))
	}
	seenInv := make(map[string]bool, len(t.Invocations))
	for i, inv := range t.Invocations {
		errs = append(errs, fieldError(indexPath("invocations", i), inv.validate()))
		if seenInv[inv.InvocationID] {
			errs = append(errs, fmt.Errorf("invocation_id must be unique within a trajectory (%s repeated)", strconv.Quote(inv.InvocationID)))
		}
		seenInv[inv.InvocationID] = true
	}
	type turnKey struct {
		invocation string
		no         int
	}
	seenTurn := make(map[turnKey]bool, len(t.Turns))
	for i, turn := range t.Turns {
		path := indexPath("turns", i)
		errs = append(errs, fieldError(path, turn.validate()))
		if turn.TaskID != t.TaskID || turn.RolloutID != t.RolloutID {
			errs = append(errs, fieldError(path, errors.New("turn identity must match the trajectory")))
		}
		k := turnKey{turn.InvocationID, turn.TurnNo}
		if seenTurn[k] {
			errs = append(errs, fieldError(path, errors.New("turn number must be unique within an invocation")))
		}
		seenTurn[k] = true
	}
	seenCall := make(map[string]bool, len(t.ModelCalls))
	for i, c := range t.ModelCalls {
		errs = append(errs, fieldError(indexPath("model_calls", i), c.validate()))
		if truthy(c.ModelCallID) {
			if seenCall[*c.ModelCallID] {
				errs = append(errs, fmt.Errorf("model_call_id must be unique within a trajectory (%s repeated)", strconv.Quote(*c.ModelCallID)))
			}
			seenCall[*c.ModelCallID] = true
		}
	}
	for i, tc := range t.ToolCalls {
		errs = append(errs, fieldError(indexPath("tool_calls", i), tc.validate()))
	}
	return errors.Join(errs...)
}

// Validate reports whether t satisfies SPEC §5.6: TurnNo >= 1, StepCount >= 0, a finite
// Timestamp, JSON values in Question/Answer/ReasoningContent and valid model-call references.
func (t TrajectoryTurn) Validate() error { return wrapValidation("trajectory turn", t.validate()) }

func (t TrajectoryTurn) validate() error {
	var errs []error
	if t.TurnNo < 1 {
		errs = append(errs, fieldError("turn_no", fmt.Errorf("%d must be greater than or equal to 1", t.TurnNo)))
	}
	if t.StepCount < 0 {
		errs = append(errs, fieldError("step_count", fmt.Errorf("%d must be greater than or equal to 0", t.StepCount)))
	}
	errs = append(errs, finite("timestamp", &t.Timestamp))
	errs = append(errs, validJSON("question", t.Question), validJSON("answer", t.Answer),
		validJSON("reasoning_content", t.ReasoningContent))
	errs = append(errs, validateRefs("model_calls", t.ModelCalls)...)
	return errors.Join(errs...)
}

// Validate reports whether c satisfies SPEC §5.6: finite timestamps, DurationMS >= 0, JSON values
// in Request/Response, and valid metadata and token stats.
func (c TrajectoryModelCall) Validate() error {
	return wrapValidation("trajectory model call", c.validate())
}

func (c TrajectoryModelCall) validate() error {
	return errors.Join(finite("started_at", c.StartedAt), finite("completed_at", c.CompletedAt),
		nonNegative("duration_ms", c.DurationMS), validJSON("request", c.Request), validJSON("response", c.Response),
		fieldError("response_metadata", c.ResponseMetadata.validate()), fieldError("token_stats", c.TokenStats.validate()))
}

// Validate reports whether m satisfies SPEC §5.6: a valid ModelRef and LatencyTTFTMS >= 0.
func (m TrajectoryResponseMetadata) Validate() error {
	return wrapValidation("response metadata", m.validate())
}

func (m TrajectoryResponseMetadata) validate() error {
	var errs []error
	if m.ModelRef != nil {
		errs = append(errs, fieldError("model_ref", m.ModelRef.validate()))
	}
	return errors.Join(append(errs, nonNegative("latency_ttft_ms", m.LatencyTTFTMS))...)
}

// Validate reports whether s satisfies SPEC §5.6: every count, when set, is >= 0.
func (s TrajectoryTokenStats) Validate() error { return wrapValidation("token stats", s.validate()) }

func (s TrajectoryTokenStats) validate() error {
	var errs []error
	for _, f := range s.fields() {
		if f.v != nil && *f.v < 0 {
			errs = append(errs, fieldError(f.name, fmt.Errorf("%d must be greater than or equal to 0", *f.v)))
		}
	}
	return errors.Join(errs...)
}

func (s *TrajectoryTokenStats) fields() []struct {
	name string
	v    *int
} {
	return []struct {
		name string
		v    *int
	}{
		{"prompt_tokens", s.PromptTokens}, {"completion_tokens", s.CompletionTokens},
		{"reasoning_tokens", s.ReasoningTokens}, {"total_tokens", s.TotalTokens}, {"cached_tokens", s.CachedTokens},
	}
}

// Validate reports whether t satisfies SPEC §5.6: the [ToolCallObservation] rules and a JSON Output.
func (t TrajectoryToolCall) Validate() error {
	return wrapValidation("trajectory tool call", t.validate())
}

func (t TrajectoryToolCall) validate() error {
	return errors.Join(t.ToolCallObservation.validate(), validJSON("output", t.Output))
}

// validJSON checks an Optional[Any] held as JSON text (nil = null).
func validJSON(field string, raw json.RawMessage) error {
	if raw == nil {
		return nil
	}
	if _, err := ojson.Parse(raw); err != nil {
		return fieldError(field, err)
	}
	return nil
}

// MarshalJSON writes the trajectory's JSON-mode dump (see [TrajectoryRecord.AppendJSON]).
func (t TrajectoryRecord) MarshalJSON() ([]byte, error) { return t.AppendJSON(nil) }

// AppendJSON appends the trajectory's JSON-mode dump to dst: all fields in order, nulls included,
// compact, encoded like orjson. It fails when a JSON-text field is not strict JSON; dst is then
// returned unchanged in length.
func (t TrajectoryRecord) AppendJSON(dst []byte) ([]byte, error) {
	n := len(dst)
	dst = append(dst, `{"schema_version":`...)
	dst = ojson.AppendString(dst, orDefault(t.SchemaVersion, TrajectorySchemaVersion))
	dst = append(dst, `,"task_id":`...)
	dst = ojson.AppendString(dst, t.TaskID)
	dst = append(dst, `,"rollout_id":`...)
	dst = ojson.AppendString(dst, t.RolloutID)
	var err error
	dst = append(dst, `,"invocations":`...)
	if dst, err = appendArray(dst, "invocations", t.Invocations); err != nil {
		return dst[:n], err
	}
	dst = append(dst, `,"turns":`...)
	if dst, err = appendArray(dst, "turns", t.Turns); err != nil {
		return dst[:n], err
	}
	dst = append(dst, `,"model_calls":`...)
	if dst, err = appendArray(dst, "model_calls", t.ModelCalls); err != nil {
		return dst[:n], err
	}
	dst = append(dst, `,"tool_calls":`...)
	if dst, err = appendArray(dst, "tool_calls", t.ToolCalls); err != nil {
		return dst[:n], err
	}
	dst = append(dst, `,"gaps":`...)
	dst = appendGaps(dst, t.Gaps)
	return append(dst, '}'), nil
}

// appendArray appends elems as a JSON array of their JSON-mode dumps; an element's error names its
// path, e.g. "turns[2]: ...".
func appendArray[T interface{ appendJSON([]byte) ([]byte, error) }](dst []byte, field string, elems []T) ([]byte, error) {
	dst = append(dst, '[')
	for i, e := range elems {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = e.appendJSON(dst); err != nil {
			return dst, fmt.Errorf("%s: %w", indexPath(field, i), err)
		}
	}
	return append(dst, ']'), nil
}

// MarshalJSON writes the turn's JSON-mode dump.
func (t TrajectoryTurn) MarshalJSON() ([]byte, error) { return t.appendJSON(nil) }

func (t TrajectoryTurn) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"invocation_id":`...)
	dst = ojson.AppendString(dst, t.InvocationID)
	dst = append(dst, `,"task_id":`...)
	dst = ojson.AppendString(dst, t.TaskID)
	dst = append(dst, `,"rollout_id":`...)
	dst = ojson.AppendString(dst, t.RolloutID)
	dst = append(dst, `,"turn_no":`...)
	dst = strconv.AppendInt(dst, int64(t.TurnNo), 10)
	dst = append(dst, `,"timestamp":`...)
	dst = ojson.AppendFloat(dst, t.Timestamp)
	var err error
	for _, f := range []struct {
		key string
		raw json.RawMessage
	}{{"question", t.Question}, {"answer", t.Answer}, {"reasoning_content", t.ReasoningContent}} {
		dst = append(dst, ',')
		dst = ojson.AppendString(dst, f.key)
		dst = append(dst, ':')
		if dst, err = appendAny(dst, f.raw); err != nil {
			return nil, errorf("%s: %w", f.key, err)
		}
	}
	dst = append(dst, `,"resolved":`...)
	switch {
	case t.Resolved == nil:
		dst = append(dst, "null"...)
	case *t.Resolved:
		dst = append(dst, "true"...)
	default:
		dst = append(dst, "false"...)
	}
	dst = append(dst, `,"step_count":`...)
	dst = strconv.AppendInt(dst, int64(t.StepCount), 10)
	dst = append(dst, `,"model_calls":`...)
	dst = appendRefs(dst, t.ModelCalls)
	return append(dst, '}'), nil
}

// MarshalJSON writes the model call's JSON-mode dump.
func (c TrajectoryModelCall) MarshalJSON() ([]byte, error) { return c.appendJSON(nil) }

func (c TrajectoryModelCall) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"model_call_id":`...)
	dst = appendStr(dst, c.ModelCallID)
	dst = append(dst, `,"started_at":`...)
	dst = appendFloat(dst, c.StartedAt)
	dst = append(dst, `,"completed_at":`...)
	dst = appendFloat(dst, c.CompletedAt)
	dst = append(dst, `,"duration_ms":`...)
	dst = appendFloat(dst, c.DurationMS)
	dst = append(dst, `,"request":`...)
	var err error
	if dst, err = appendAny(dst, c.Request); err != nil {
		return nil, errorf("request: %w", err)
	}
	dst = append(dst, `,"response":`...)
	if dst, err = appendAny(dst, c.Response); err != nil {
		return nil, errorf("response: %w", err)
	}
	m := c.ResponseMetadata
	dst = append(dst, `,"response_metadata":{"response_id":`...)
	dst = appendStr(dst, m.ResponseID)
	dst = append(dst, `,"model_ref":`...)
	if m.ModelRef != nil {
		dst = m.ModelRef.appendJSON(dst)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"model":`...)
	dst = appendStr(dst, m.Model)
	dst = append(dst, `,"dialect":`...)
	dst = appendStr(dst, m.Dialect)
	dst = append(dst, `,"status_code":`...)
	dst = appendInt(dst, m.StatusCode)
	dst = append(dst, `,"response_status":`...)
	dst = appendStr(dst, m.ResponseStatus)
	dst = append(dst, `,"finish_reason":`...)
	dst = appendStr(dst, m.FinishReason)
	dst = append(dst, `,"error_category":`...)
	dst = appendStr(dst, m.ErrorCategory)
	dst = append(dst, `,"latency_ttft_ms":`...)
	dst = appendFloat(dst, m.LatencyTTFTMS)
	dst = append(dst, `},"token_stats":{`...)
	for i, f := range c.TokenStats.fields() {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = ojson.AppendString(dst, f.name)
		dst = append(dst, ':')
		dst = appendInt(dst, f.v)
	}
	return append(dst, "}}"...), nil
}

// MarshalJSON writes the tool call's JSON-mode dump: the observation's keys, then "output".
func (t TrajectoryToolCall) MarshalJSON() ([]byte, error) { return t.appendJSON(nil) }

func (t TrajectoryToolCall) appendJSON(dst []byte) ([]byte, error) {
	dst = t.ToolCallObservation.appendJSON(dst)
	dst = append(dst[:len(dst)-1], `,"output":`...)
	dst, err := appendAny(dst, t.Output)
	if err != nil {
		return nil, errorf("output: %w", err)
	}
	return append(dst, '}'), nil
}

// appendAny writes an Optional[Any] held as JSON text (nil = null), compacted.
func appendAny(dst []byte, raw json.RawMessage) ([]byte, error) {
	if raw == nil {
		return append(dst, "null"...), nil
	}
	return ojson.Compact(dst, raw)
}

// DecodeTrajectory decodes and validates one ng_trajectory value under the decoding rules of
// [DecodeBundle] (unknown keys rejected and named, strict types, SPEC defaults for missing
// optional keys), then [TrajectoryRecord.Validate].
func DecodeTrajectory(data []byte) (TrajectoryRecord, error) {
	var t TrajectoryRecord
	if err := t.UnmarshalJSON(data); err != nil {
		return TrajectoryRecord{}, err
	}
	return t, nil
}

// UnmarshalJSON decodes and validates a trajectory (see [DecodeTrajectory]). On error t is unchanged.
func (t *TrajectoryRecord) UnmarshalJSON(data []byte) error {
	out, err := unmarshal(data, "trajectory", decodeTrajectory, TrajectoryRecord.validate)
	if err == nil {
		*t = out
	}
	return err
}

func decodeTrajectory(v ojson.Value, path string) (TrajectoryRecord, error) {
	o, err := newObj(v, path, false, "schema_version", "task_id", "rollout_id", "invocations", "turns",
		"model_calls", "tool_calls", "gaps")
	if err != nil {
		return TrajectoryRecord{}, err
	}
	t := TrajectoryRecord{
		SchemaVersion: o.enum("schema_version", TrajectorySchemaVersion, TrajectorySchemaVersion),
		TaskID:        o.reqStr("task_id"),
		RolloutID:     o.reqStr("rollout_id"),
		Invocations:   list(o, "invocations", decodeInvocation),
		Turns:         list(o, "turns", decodeTurn),
		ModelCalls:    list(o, "model_calls", decodeTrajectoryModelCall),
		ToolCalls:     list(o, "tool_calls", decodeTrajectoryToolCall),
		Gaps:          list(o, "gaps", decodeGap),
	}
	return t, o.err()
}

func decodeTurn(v ojson.Value, path string) (TrajectoryTurn, error) {
	o, err := newObj(v, path, false, "invocation_id", "task_id", "rollout_id", "turn_no", "timestamp",
		"question", "answer", "reasoning_content", "resolved", "step_count", "model_calls")
	if err != nil {
		return TrajectoryTurn{}, err
	}
	t := TrajectoryTurn{
		InvocationID:     o.reqStr("invocation_id"),
		TaskID:           o.reqStr("task_id"),
		RolloutID:        o.reqStr("rollout_id"),
		Question:         o.anyJSON("question"),
		Answer:           o.anyJSON("answer"),
		ReasoningContent: o.anyJSON("reasoning_content"),
		ModelCalls:       list(o, "model_calls", decodeModelCallRef),
	}
	if p := required(o, "turn_no", o.optInt); p != nil {
		t.TurnNo = *p
	}
	if p := required(o, "timestamp", o.optFloat); p != nil {
		t.Timestamp = *p
	}
	if p := required(o, "step_count", o.optInt); p != nil {
		t.StepCount = *p
	}
	if rv, ok := o.get("resolved"); ok && !rv.IsNull() {
		if b, isBool := rv.AsBool(); isBool {
			t.Resolved = &b
		} else {
			o.fail("resolved", fmt.Errorf("a JSON %s, not a bool or null", rv.Kind()))
		}
	}
	return t, o.err()
}

// required reads a non-nullable value with read: a missing key or null is an error.
func required[T any](o *obj, key string, read func(string) *T) *T {
	v, ok := o.get(key)
	if !ok {
		o.fail(key, errors.New("field required"))
		return nil
	}
	if v.IsNull() {
		o.fail(key, errors.New("null is not allowed"))
		return nil
	}
	return read(key)
}

// anyJSON reads an Optional[Any] as compact JSON text (missing or null → nil).
func (o *obj) anyJSON(key string) json.RawMessage {
	v, ok := o.get(key)
	if !ok || v.IsNull() {
		return nil
	}
	return json.RawMessage(v.AppendJSON(nil))
}

func decodeTrajectoryModelCall(v ojson.Value, path string) (TrajectoryModelCall, error) {
	o, err := newObj(v, path, false, "model_call_id", "started_at", "completed_at", "duration_ms", "request",
		"response", "response_metadata", "token_stats")
	if err != nil {
		return TrajectoryModelCall{}, err
	}
	c := TrajectoryModelCall{
		ModelCallID: o.optStr("model_call_id"),
		StartedAt:   o.optFloat("started_at"),
		CompletedAt: o.optFloat("completed_at"),
		DurationMS:  o.optFloat("duration_ms"),
		Request:     o.anyJSON("request"),
		Response:    o.anyJSON("response"),
	}
	if mv, ok := o.get("response_metadata"); ok {
		m, err := decodeResponseMetadata(mv, joinPath(path, "response_metadata"))
		o.errs = append(o.errs, err)
		c.ResponseMetadata = m
	}
	if sv, ok := o.get("token_stats"); ok {
		s, err := decodeTokenStats(sv, joinPath(path, "token_stats"))
		o.errs = append(o.errs, err)
		c.TokenStats = s
	}
	return c, o.err()
}

func decodeResponseMetadata(v ojson.Value, path string) (TrajectoryResponseMetadata, error) {
	o, err := newObj(v, path, false, "response_id", "model_ref", "model", "dialect", "status_code",
		"response_status", "finish_reason", "error_category", "latency_ttft_ms")
	if err != nil {
		return TrajectoryResponseMetadata{}, err
	}
	m := TrajectoryResponseMetadata{
		ResponseID:     o.optStr("response_id"),
		Model:          o.optStr("model"),
		Dialect:        o.optStr("dialect"),
		StatusCode:     o.optInt("status_code"),
		ResponseStatus: o.optStr("response_status"),
		FinishReason:   o.optStr("finish_reason"),
		ErrorCategory:  o.optStr("error_category"),
		LatencyTTFTMS:  o.optFloat("latency_ttft_ms"),
	}
	if mv, ok := o.get("model_ref"); ok && !mv.IsNull() {
		ref, err := decodeModelServerRef(mv, joinPath(path, "model_ref"))
		if err != nil {
			o.errs = append(o.errs, err)
		} else {
			m.ModelRef = &ref
		}
	}
	return m, o.err()
}

func decodeTokenStats(v ojson.Value, path string) (TrajectoryTokenStats, error) {
	o, err := newObj(v, path, false, "prompt_tokens", "completion_tokens", "reasoning_tokens", "total_tokens",
		"cached_tokens")
	if err != nil {
		return TrajectoryTokenStats{}, err
	}
	s := TrajectoryTokenStats{
		PromptTokens:     o.optInt("prompt_tokens"),
		CompletionTokens: o.optInt("completion_tokens"),
		ReasoningTokens:  o.optInt("reasoning_tokens"),
		TotalTokens:      o.optInt("total_tokens"),
		CachedTokens:     o.optInt("cached_tokens"),
	}
	return s, o.err()
}

func decodeTrajectoryToolCall(v ojson.Value, path string) (TrajectoryToolCall, error) {
	var output json.RawMessage
	if v.Kind() == ojson.KindObject {
		// Split "output" off and decode the rest as a tool-call observation.
		rest := make([]ojson.Member, 0, len(v.Members()))
		for _, m := range v.Members() {
			if m.Key == "output" {
				if !m.Value.IsNull() {
					output = json.RawMessage(m.Value.AppendJSON(nil))
				}
				continue
			}
			rest = append(rest, m)
		}
		v = ojson.Object(rest...)
	}
	t, err := decodeToolCall(v, path)
	return TrajectoryToolCall{ToolCallObservation: t, Output: output}, err
}
