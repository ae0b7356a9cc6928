package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Names and keys of SPEC §1.1. They are literal: Gym's agents, model servers and readers use the
// same strings.
const (
	// RolloutPathSegment is the first path segment of a rollout prefix, "/ng-rollout/<id>"
	// (Gym's ROLLOUT_PATH_PREFIX). The function RolloutPathPrefix builds the whole prefix.
	RolloutPathSegment = "ng-rollout"
	// TokenCapturePathSegment is the optional segment after the id that asks for training-token
	// capture: "/ng-rollout/<id>/training-token-capture/..." (Gym's TOKEN_CAPTURE_PATH_SEGMENT).
	TokenCapturePathSegment = "training-token-capture"

	// TaskIndexKey is the run-body key of the task index.
	TaskIndexKey = "_ng_task_index"
	// RolloutIndexKey is the run-body key of the rollout index within a task.
	RolloutIndexKey = "_ng_rollout_index"
	// AttemptIndexKey is the run-body key of the re-dispatch attempt; an attempt above 0 adds the
	// suffix "-a<n>" to the id (SPEC §1.2 step 3).
	AttemptIndexKey = "_ng_attempt_index"
	// RolloutIDKey is the run-body key of an explicit rollout id, which wins over the indices.
	RolloutIDKey = "_ng_rollout_id"

	// ObservabilityEnabledKey is the global-config key that turns model-call capture on (§1.4).
	ObservabilityEnabledKey = "observability_enabled"
	// ModelCallCaptureDirKey is the global-config key of the capture directory.
	ModelCallCaptureDirKey = "model_call_capture_dir"
	// TokenIDCaptureKey is the global-config key of the training-token capture block
	// ({"enabled": ..., "all_agents": ...}), and the agent-config flag of the same name.
	TokenIDCaptureKey = "token_id_capture"

	// RolloutIDPattern is the pattern every explicit id (§1.2) and, by SPEC D12, every model-server
	// prefix id must match over the whole string (D10: no trailing newline). Go code does not need a
	// regexp for it: ValidatePrefixID and MaybeRolloutIDFromRunBody check it by hand.
	RolloutIDPattern = `^[A-Za-z0-9][A-Za-z0-9._-]*$`
)

// ErrInvalidRolloutID is matched (errors.Is) by every error reporting an id that breaks
// RolloutIDPattern: a bad explicit _ng_rollout_id and a bad prefix id (ValidatePrefixID).
var ErrInvalidRolloutID = errors.New("invalid rollout id")

// explicitIDMessage is the normative text of SPEC §1.2 (followed by "; got <python repr>").
const explicitIDMessage = RolloutIDKey + " must be a string of letters, digits, dots, dashes or underscores starting with a letter or digit"

// explicitIDError reports an explicit _ng_rollout_id that is not a string matching RolloutIDPattern.
type explicitIDError struct{ repr string }

func (e *explicitIDError) Error() string        { return explicitIDMessage + "; got " + e.repr }
func (e *explicitIDError) Is(target error) bool { return target == ErrInvalidRolloutID }

// RunFields is a run body that is not a map, the Go counterpart of the pydantic model with extras
// that Gym also accepts. RunField returns the value stored under key (a decoded JSON value: nil,
// bool, string, json.Number, a Go number, []any or map[string]any), or nil when the key is absent or
// JSON null. Implementations must not need serializing the body.
type RunFields interface {
	RunField(key string) any
}

// matchRolloutIDPattern reports whether id fully matches RolloutIDPattern (byte-wise, so any
// non-ASCII byte fails).
func matchRolloutIDPattern(id string) bool {
	if id == "" || !isASCIIAlnum(id[0]) {
		return false
	}
	for i := 1; i < len(id); i++ {
		c := id[i]
		if !isASCIIAlnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isASCIIAlnum(c byte) bool {
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
}

// MaybeRolloutIDFromRunBody returns the rollout id of a run request (Gym's
// maybe_rollout_id_from_run_body, SPEC §1.2, with D10's full-string match). ok is false when the body
// carries no identity (Python None).
//
// body is the decoded run request: map[string]any as encoding/json gives it with Decoder.UseNumber
// (values nil, bool, string, json.Number, []any, map[string]any), any other map with string keys,
// map[string]json.RawMessage, a RunFields, or the raw JSON object as []byte or json.RawMessage
// (see RolloutIDFromRunJSON). Anything else (nil, a list, a string, a number) is not a mapping and
// gives ok false. Decode without UseNumber only if float semantics are wanted: a float64 3 is the
// Python float 3.0 and gives the id "3.0-1".
//
// The rules, in order:
//   - A non-null _ng_rollout_id must be a string fully matching RolloutIDPattern; otherwise the error
//     (which matches ErrInvalidRolloutID) reads exactly "_ng_rollout_id must be a string of letters,
//     digits, dots, dashes or underscores starting with a letter or digit; got <Python repr>". The id
//     is never sanitized. Indices are then ignored. (The repr of a Go map lists its keys sorted; pass
//     the raw JSON to keep the sender's order.)
//   - Else, if _ng_task_index or _ng_rollout_index is absent or null, ok is false. The id is
//     Python's f"{task}-{rollout}": str() of each value ("3-1"; a float 3.0 gives "3.0", true gives
//     "True", a string is used as is). This derived id is not validated.
//   - A non-null _ng_attempt_index is converted with Python's int() (" 2 ", "1_0", 2.7 and true are
//     accepted; "invalid", "1.5", "" and lists are errors); a value above 0 appends "-a<n>".
//
// The body is only read, never serialized or modified. Safe for concurrent use if body is not
// being modified.
func MaybeRolloutIDFromRunBody(body any) (id string, ok bool, err error) {
	switch b := body.(type) {
	case []byte:
		return RolloutIDFromRunJSON(b)
	case json.RawMessage:
		return RolloutIDFromRunJSON(b)
	case RunFields:
		return rolloutIDFromFields(func(k string) (any, error) { return b.RunField(k), nil })
	}
	get, isMapping := pyMapping(body)
	if !isMapping {
		return "", false, nil
	}
	return rolloutIDFromFields(get)
}

// RolloutIDFromRunJSON is MaybeRolloutIDFromRunBody for a raw JSON run body (one JSON value, e.g. a
// request body or a rollout JSONL line). A body that is valid JSON but not an object gives ok false;
// invalid JSON is an error. Only the four keys of SPEC §1.2 are decoded, keeping the sender's key
// order for the repr in the explicit-id error; a repeated key takes its last value, as Python's json
// module does.
func RolloutIDFromRunJSON(line []byte) (id string, ok bool, err error) {
	if !json.Valid(line) {
		var probe any
		err := json.Unmarshal(line, &probe) // for a precise syntax error
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return "", false, fmt.Errorf("rollout id: decode run body: %w", err)
	}
	if t := bytes.TrimLeft(line, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return "", false, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return "", false, fmt.Errorf("rollout id: decode run body: %w", err)
	}
	get, _ := pyMapping(fields)
	return rolloutIDFromFields(get)
}

// rolloutIDFromFields applies SPEC §1.2 over a field lookup (nil = absent or null).
func rolloutIDFromFields(get func(key string) (any, error)) (string, bool, error) {
	field := func(key string) (any, error) {
		v, err := get(key)
		if err != nil {
			return nil, fmt.Errorf("rollout id: %s: %w", key, err)
		}
		return v, nil
	}
	explicit, err := field(RolloutIDKey)
	if err != nil {
		return "", false, err
	}
	var id string
	if explicit != nil {
		s, isString := explicit.(string)
		if !isString || !matchRolloutIDPattern(s) {
			repr, rerr := pyRepr(explicit)
			if rerr != nil {
				repr = fmt.Sprintf("<%T>", explicit)
			}
			return "", false, &explicitIDError{repr: repr}
		}
		id = s
	} else {
		task, err := field(TaskIndexKey)
		if err != nil {
			return "", false, err
		}
		rollout, err := field(RolloutIndexKey)
		if err != nil {
			return "", false, err
		}
		if task == nil || rollout == nil {
			return "", false, nil
		}
		ts, err := pyStr(task)
		if err != nil {
			return "", false, fmt.Errorf("rollout id: %s: %w", TaskIndexKey, err)
		}
		rs, err := pyStr(rollout)
		if err != nil {
			return "", false, fmt.Errorf("rollout id: %s: %w", RolloutIndexKey, err)
		}
		id = ts + "-" + rs
	}
	attempt, err := field(AttemptIndexKey)
	if err != nil {
		return "", false, err
	}
	if attempt != nil {
		n, err := pyInt(attempt)
		if err != nil {
			return "", false, fmt.Errorf("rollout id: %s: %w", AttemptIndexKey, err)
		}
		if n.Sign() > 0 {
			id += "-a" + n.String()
		}
	}
	return id, true, nil
}
