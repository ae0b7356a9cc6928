package tokens

import (
	"errors"
	"strconv"
	"strings"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// Error is an error the reference raises as a Python exception: Type is the exception's class name
// (ValueError, RuntimeError, TypeError, KeyError, JSONDecodeError, UnicodeDecodeError) and Msg its
// message, both literal where TOKENS.md quotes them. Hint, when set, is gymtrace's explanation for
// a person (e.g. the rule an id breaks), which the reference does not write. Error() returns Msg,
// followed by " (<Hint>)" when there is one; the reference's "<Type>: <message>" text (TOKENS.md
// §3.6 failed builds, the vectors) is [ExceptionText], which leaves the hint out. Err, when set, is
// the Go error underneath (a parse error, a sentinel such as [ErrFrozen]) and is what errors.Is and
// errors.As see through Unwrap.
type Error struct {
	Type string
	Msg  string
	Hint string
	Err  error
}

// Error returns Msg, followed by " (Hint)" when Hint is set.
func (e *Error) Error() string {
	if e.Hint != "" {
		return e.Msg + " (" + e.Hint + ")"
	}
	return e.Msg
}

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

// PythonType returns the reference's exception class name (e.g. "ValueError").
func (e *Error) PythonType() string { return e.Type }

// Sentinels matched (errors.Is) by the store's lifecycle refusals (TOKENS.md §2.6) and its id check
// (§2.1), so that a caller such as the proxy tells a finalized rollout (T5: HTTP 409
// rollout_finalized) from an I/O failure without reading messages.
var (
	// ErrFrozen: the rollout's capture is frozen; appends and intents are refused.
	ErrFrozen = errors.New("token capture is frozen")
	// ErrRetired: the rollout's capture was retired by a successful Drop; every operation but
	// Delete and SweepRetired is refused.
	ErrRetired = errors.New("token capture is retired")
	// ErrInvalidRolloutID: the id is not a safe store file name ([ValidateRolloutID]).
	ErrInvalidRolloutID = errors.New("invalid rollout id")
	// ErrNonFinite: an entry holds a NaN or infinite float, which gymtrace never writes (T7).
	ErrNonFinite = errors.New("non-finite float")
	// ErrIntegerRange: an integer is outside what the line can hold (TOKENS.md §2.2.3).
	ErrIntegerRange = errors.New("integer out of range")
)

func pyErr(typ, msg string, under error) *Error { return &Error{Type: typ, Msg: msg, Err: under} }

// errIntegerExceeds is orjson's serialization failure for an integer outside both the signed and
// the unsigned 64-bit range (TOKENS.md §2.2.3, [TE-14], [ST-23]).
func errIntegerExceeds() *Error {
	return pyErr("TypeError", "Integer exceeds 64-bit range", ErrIntegerRange)
}

// FieldError is one error of a [ValidationError], as pydantic reports it: Loc is the path to the
// value (field names as strings, list positions as ints; empty for a model-level check), Type the
// error type ("int_parsing", "missing", "value_error", ...), Msg the message, Input the value that
// failed (for the error text).
type FieldError struct {
	Loc   []any
	Type  string
	Msg   string
	Input ojson.Value
}

// ValidationError is pydantic's ValidationError for a TokenEntry (TOKENS.md §2.2.2): every field
// error found, in field order, or the one model-level "Value error, ..." of the after-validator.
// Error() is pydantic's text ("1 validation error for TokenEntry\n  Value error, ... [type=...,
// input_value=..., input_type=...]\n    For further information visit ..."), so a failed build
// reads as the reference's "ValidationError: 1 validation error for TokenEntry ...".
type ValidationError struct {
	Errors []FieldError
}

// PythonType returns "ValidationError".
func (e *ValidationError) PythonType() string { return "ValidationError" }

// pydanticDocs is the error-page prefix pydantic 2.13 prints under each error.
const pydanticDocs = "https://errors.pydantic.dev/2.13/v/"

// Error returns pydantic's text of the errors: their count, then each error's location, message
// and input, as pydantic 2.13 prints them.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(len(e.Errors)))
	if len(e.Errors) == 1 {
		b.WriteString(" validation error for TokenEntry")
	} else {
		b.WriteString(" validation errors for TokenEntry")
	}
	for _, fe := range e.Errors {
		b.WriteByte('\n')
		if len(fe.Loc) > 0 {
			for i, l := range fe.Loc {
				if i > 0 {
					b.WriteByte('.')
				}
				switch l := l.(type) {
				case string:
					b.WriteString(l)
				case int:
					b.WriteString(strconv.Itoa(l))
				}
			}
			b.WriteByte('\n')
		}
		b.WriteString("  " + fe.Msg + " [type=" + fe.Type + ", input_value=" + truncatedRepr(fe.Input) +
			", input_type=" + python.TypeName(fe.Input) + "]\n    For further information visit " + pydanticDocs + fe.Type)
	}
	return b.String()
}

// truncatedRepr is pydantic's input_value text: Python's repr, cut to its first 25 and last 24
// characters around "..." when longer than 50.
func truncatedRepr(v ojson.Value) string {
	r := []rune(python.Repr(v))
	if len(r) <= 50 {
		return string(r)
	}
	return string(r[:25]) + "..." + string(r[len(r)-24:])
}
