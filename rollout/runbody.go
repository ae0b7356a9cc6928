package rollout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// explicitIDMessage is the normative text of SPEC §1.2 (followed by "; got <python repr>").
const explicitIDMessage = IDKey + " must be a string of letters, digits, dots, dashes or underscores starting with a letter or digit"

// explicitIDError reports an explicit _ng_rollout_id that is not a string matching IDPattern.
type explicitIDError struct{ repr string }

func (e *explicitIDError) Error() string        { return explicitIDMessage + "; got " + e.repr }
func (e *explicitIDError) Is(target error) bool { return target == ErrInvalidID }

// IDFromRunBody returns the rollout id of a run request (Gym's maybe_rollout_id_from_run_body,
// SPEC §1.2, with D10's full-string match). body is the run request as JSON (a request body, a
// rollout JSONL line), read as Python's json.loads reads it: numbers with a fraction or an
// exponent are floats (a float beyond float64 is inf), integers are exact, a repeated key takes
// its last value. ok is false when the body carries no identity (Python None), including a body
// that is JSON but not an object; text that is not JSON (RFC 8259, so NaN and Infinity are
// refused) is an error. Only the four keys of SPEC §1.2 are decoded.
//
// The rules, in order:
//   - A non-null _ng_rollout_id must be a string fully matching [IDPattern]; otherwise the error
//     (which matches [ErrInvalidID]) reads exactly "_ng_rollout_id must be a string of letters,
//     digits, dots, dashes or underscores starting with a letter or digit; got <Python repr>". The
//     id is never sanitized. Indices are then ignored.
//   - Else, if _ng_task_index or _ng_rollout_index is absent or null, ok is false. The id is
//     Python's f"{task}-{rollout}": str() of each value ("3-1"; a float 3.0 gives "3.0", true
//     gives "True", a string is used as is). This derived id is not validated.
//   - A non-null _ng_attempt_index is converted with Python's int() (" 2 ", "1_0", 2.7 and true
//     are accepted; "invalid", "1.5", "" and lists are errors); a value above 0 appends "-a<n>".
//
// body is only read.
func IDFromRunBody(body []byte) (id string, ok bool, err error) {
	if !json.Valid(body) {
		var probe any
		err := json.Unmarshal(body, &probe) // for a precise syntax error
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return "", false, fmt.Errorf("rollout id: decode run body: %w", err)
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return "", false, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return "", false, fmt.Errorf("rollout id: decode run body: %w", err)
	}
	return idFromRunFields(func(key string) (ojson.Value, bool, error) {
		raw, ok := fields[key]
		if !ok {
			return ojson.Value{}, false, nil
		}
		v, err := python.Loads(raw)
		if err != nil {
			return ojson.Value{}, false, fmt.Errorf("rollout id: %s: %w", key, err)
		}
		if v.IsNull() && !bytes.Equal(raw, []byte("null")) {
			// A float beyond float64 (NaN and Infinity are not JSON): Python's inf.
			return python.Inf(raw[0] == '-'), true, nil
		}
		return v, !v.IsNull(), nil
	})
}

// idFromRunFields applies SPEC §1.2 over a field lookup (ok false = absent or null).
func idFromRunFields(field func(key string) (ojson.Value, bool, error)) (string, bool, error) {
	explicit, ok, err := field(IDKey)
	if err != nil {
		return "", false, err
	}
	var id string
	if ok {
		s, isString := explicit.AsString()
		if !isString || !matchIDPattern(s) {
			return "", false, &explicitIDError{repr: python.Repr(explicit)}
		}
		id = s
	} else {
		task, hasTask, err := field(TaskIndexKey)
		if err != nil {
			return "", false, err
		}
		index, hasIndex, err := field(IndexKey)
		if err != nil {
			return "", false, err
		}
		if !hasTask || !hasIndex {
			return "", false, nil
		}
		ts, err := strOf(task)
		if err != nil {
			return "", false, fmt.Errorf("rollout id: %s: %w", TaskIndexKey, err)
		}
		is, err := strOf(index)
		if err != nil {
			return "", false, fmt.Errorf("rollout id: %s: %w", IndexKey, err)
		}
		id = ts + "-" + is
	}
	attempt, ok, err := field(AttemptIndexKey)
	if err != nil {
		return "", false, err
	}
	if ok {
		n, err := python.Int(attempt)
		if err != nil {
			return "", false, fmt.Errorf("rollout id: %s: %w", AttemptIndexKey, err)
		}
		if n.Sign() > 0 {
			id += "-a" + n.String()
		}
	}
	return id, true, nil
}

// strOf is Python's str(v) for an index of the derived id; an integer of more than
// python.MaxStrDigits digits raises, as CPython's str() does.
func strOf(v ojson.Value) (string, error) {
	if text, ok := v.NumberText(); ok && v.IsInteger() {
		if n := len(strings.TrimPrefix(text, "-")); n > python.MaxStrDigits {
			return "", fmt.Errorf("exceeds the limit (%d digits) for integer string conversion: value has %d digits", python.MaxStrDigits, n)
		}
	}
	return python.Str(v), nil
}
