package tokens

import (
	"errors"
	"io/fs"
)

// The Python exception classes the finalization reports (TOKENS.md §3.4–3.6).
const (
	ClassValueError     = "ValueError"
	ClassAssertionError = "AssertionError"
	ClassTypeError      = "TypeError"
	ClassRuntimeError   = "RuntimeError"
	ClassOSError        = "OSError"
)

// Exception is a failure the reference raises as a Python exception: Type is the exception's
// class name ("ValueError", "AssertionError", ...), Msg its str(). Error returns Msg alone; a
// failed build writes "<Type>: <Msg>" ([ExceptionText], TOKENS.md §3.6).
type Exception struct {
	Type string
	Msg  string
}

func (e *Exception) Error() string { return e.Msg }

// PythonType returns e.Type (see [ExceptionText]).
func (e *Exception) PythonType() string { return e.Type }

func exception(class, message string) *Exception {
	return &Exception{Type: class, Msg: message}
}

// classedError is another package's error with the Python class the reference raises for it.
type classedError struct {
	class string
	err   error
}

func (e *classedError) Error() string      { return e.err.Error() }
func (e *classedError) Unwrap() error      { return e.err }
func (e *classedError) PythonType() string { return e.class }

// ExceptionText is the reference's f"{type(e).__name__}: {e}" for err, the error text of a failed
// build (TOKENS.md §3.6). The class is that of the first error in err's chain with a method
// PythonType() string (an [*Exception]; a [Source] names the reference's class for its own
// failures this way, e.g. "ValidationError" for an unreadable entry); else "OSError" for a file
// system error ([fs.PathError], as Python's open and read raise), else "RuntimeError".
func ExceptionText(err error) string {
	var classed interface{ PythonType() string }
	var pathErr *fs.PathError
	switch {
	case errors.As(err, &classed):
		return classed.PythonType() + ": " + err.Error()
	case errors.As(err, &pathErr):
		return ClassOSError + ": " + err.Error()
	}
	return ClassRuntimeError + ": " + err.Error()
}
