package agentobs

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/gymtrace/gymtrace/ojson"
)

// TrajectoryKey is the rollout-record key that holds a [TrajectoryRecord] (SPEC §5.5, §5.6).
const TrajectoryKey = "ng_trajectory"

// TrajectorySchemaVersion is the only valid [TrajectoryRecord.SchemaVersion] (SPEC §5.6).
const TrajectorySchemaVersion = "1.0"

// TrajectoryRecord is the standardized ng_trajectory of one rollout (SPEC §5.5, §5.6), in Gym's
// field order: schema_version, task_id, rollout_id, invocations, turns, model_calls, tool_calls,
// gaps. [ProjectTrajectory] builds one the way Gym's collector does; this type reads, validates
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
	return errors.Join(append(errs, validateFields(t.fields())...)...)
}

// Validate reports whether c satisfies SPEC §5.6: finite timestamps, DurationMS >= 0, JSON values
// in Request/Response, and valid metadata and token stats.
func (c TrajectoryModelCall) Validate() error {
	return wrapValidation("trajectory model call", c.validate())
}

func (c TrajectoryModelCall) validate() error { return errors.Join(validateFields(c.fields())...) }

// Validate reports whether m satisfies SPEC §5.6: a valid ModelRef and LatencyTTFTMS >= 0.
func (m TrajectoryResponseMetadata) Validate() error {
	return wrapValidation("response metadata", m.validate())
}

func (m TrajectoryResponseMetadata) validate() error {
	return errors.Join(validateFields(m.fields())...)
}

// Validate reports whether s satisfies SPEC §5.6: every count, when set, is >= 0.
func (s TrajectoryTokenStats) Validate() error { return wrapValidation("token stats", s.validate()) }

func (s TrajectoryTokenStats) validate() error { return errors.Join(validateFields(s.fields())...) }

func (t *TrajectoryTurn) fields() []field {
	return []field{
		{key: "invocation_id", ptr: &t.InvocationID},
		{key: "task_id", ptr: &t.TaskID},
		{key: "rollout_id", ptr: &t.RolloutID},
		{key: "turn_no", ptr: &t.TurnNo},
		{key: "timestamp", ptr: &t.Timestamp},
		{key: "question", ptr: &t.Question},
		{key: "answer", ptr: &t.Answer},
		{key: "reasoning_content", ptr: &t.ReasoningContent},
		{key: "resolved", ptr: &t.Resolved},
		{key: "step_count", ptr: &t.StepCount},
		{key: "model_calls", ptr: &t.ModelCalls},
	}
}

func (c *TrajectoryModelCall) fields() []field {
	return []field{
		{key: "model_call_id", ptr: &c.ModelCallID},
		{key: "started_at", ptr: &c.StartedAt},
		{key: "completed_at", ptr: &c.CompletedAt},
		{key: "duration_ms", ptr: &c.DurationMS, min0: true},
		{key: "request", ptr: &c.Request},
		{key: "response", ptr: &c.Response},
		{key: "response_metadata", ptr: &c.ResponseMetadata},
		{key: "token_stats", ptr: &c.TokenStats},
	}
}

func (m *TrajectoryResponseMetadata) fields() []field {
	return []field{
		{key: "response_id", ptr: &m.ResponseID},
		{key: "model_ref", ptr: &m.ModelRef},
		{key: "model", ptr: &m.Model},
		{key: "dialect", ptr: &m.Dialect},
		{key: "status_code", ptr: &m.StatusCode},
		{key: "response_status", ptr: &m.ResponseStatus},
		{key: "finish_reason", ptr: &m.FinishReason},
		{key: "error_category", ptr: &m.ErrorCategory},
		{key: "latency_ttft_ms", ptr: &m.LatencyTTFTMS, min0: true},
	}
}

func (s *TrajectoryTokenStats) fields() []field {
	return []field{
		{key: "prompt_tokens", ptr: &s.PromptTokens, min0: true},
		{key: "completion_tokens", ptr: &s.CompletionTokens, min0: true},
		{key: "reasoning_tokens", ptr: &s.ReasoningTokens, min0: true},
		{key: "total_tokens", ptr: &s.TotalTokens, min0: true},
		{key: "cached_tokens", ptr: &s.CachedTokens, min0: true},
	}
}

func (t *TrajectoryToolCall) fields() []field {
	return append(t.ToolCallObservation.fields(), field{key: "output", ptr: &t.Output})
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
func appendArray[T any, P interface {
	*T
	appendJSON([]byte) ([]byte, error)
}](dst []byte, field string, elems []T) ([]byte, error) {
	dst = append(dst, '[')
	for i := range elems {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = P(&elems[i]).appendJSON(dst); err != nil {
			return dst, fmt.Errorf("%s: %w", indexPath(field, i), err)
		}
	}
	return append(dst, ']'), nil
}

// MarshalJSON writes the turn's JSON-mode dump.
func (t TrajectoryTurn) MarshalJSON() ([]byte, error) { return marshal(&t) }

func (t *TrajectoryTurn) appendJSON(dst []byte) ([]byte, error) {
	return appendFields(dst, "", t.fields())
}

// MarshalJSON writes the model call's JSON-mode dump.
func (c TrajectoryModelCall) MarshalJSON() ([]byte, error) { return marshal(&c) }

func (c *TrajectoryModelCall) appendJSON(dst []byte) ([]byte, error) {
	return appendFields(dst, "", c.fields())
}

// MarshalJSON writes the tool call's JSON-mode dump: the observation's keys, then "output".
func (t TrajectoryToolCall) MarshalJSON() ([]byte, error) { return marshal(&t) }

func (t *TrajectoryToolCall) appendJSON(dst []byte) ([]byte, error) {
	return appendFields(dst, KindToolCall, t.fields())
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
	return unmarshal(t, data, "trajectory", decodeTrajectory, TrajectoryRecord.validate)
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

func decodeTurn(v ojson.Value, path string) (TrajectoryTurn, error) {
	return decodeAs[TrajectoryTurn](v, path, "")
}

func decodeTrajectoryModelCall(v ojson.Value, path string) (TrajectoryModelCall, error) {
	return decodeAs[TrajectoryModelCall](v, path, "")
}

func decodeTrajectoryToolCall(v ojson.Value, path string) (TrajectoryToolCall, error) {
	return decodeAs[TrajectoryToolCall](v, path, KindToolCall)
}
