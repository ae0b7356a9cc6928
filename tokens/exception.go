package tokens

import (
	"errors"
	"io/fs"
	"strings"
)

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
// PythonType() string (an [*Error]; a [Source] names the reference's class for its own
// failures this way, e.g. "ValidationError" for an unreadable entry); else "OSError" for a file
// system error ([fs.PathError], as Python's open and read raise), else "RuntimeError". The
// message is err.Error() without the Hint of an [*Error] in the chain: the reference's text.
func ExceptionText(err error) string {
	var classed interface{ PythonType() string }
	var pathErr *fs.PathError
	switch {
	case errors.As(err, &classed):
		text := err.Error()
		if e, ok := errors.AsType[*Error](err); ok && e.Hint != "" {
			text = strings.Replace(text, e.Error(), e.Msg, 1)
		}
		return classed.PythonType() + ": " + text
	case errors.As(err, &pathErr):
		return "OSError: " + err.Error()
	}
	return "RuntimeError: " + err.Error()
}
