package sandboxrun

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// Spec describes one command to run. The zero value is not runnable: Path is required.
// A Spec is only read by [Run]; the same Spec may be passed to several runs, but Stdin is consumed
// by the first.
type Spec struct {
	// Path is the program to run. A path without a separator is looked up in PATH as
	// os/exec.Command does; a relative path with a separator is relative to the caller's working
	// directory. Required.
	Path string
	// Args are the command-line arguments after the program name (argv[1:]).
	Args []string
	// Dir is the working directory of the command; empty means the caller's.
	Dir string
	// Env is the command's whole environment as "KEY=value" strings; nil means the caller's
	// environment (os.Environ), an empty non-nil slice means an empty environment.
	Env []string
	// Stdin feeds the command's standard input; nil means /dev/null. A reader that is not an
	// *os.File is copied by a goroutine; if it still blocks once the command has exited, Run
	// abandons it after 2 s.
	Stdin io.Reader
	// Stdout and Stderr receive the command's standard output and error; nil discards them. A
	// writer that is not an *os.File is fed by a goroutine that Run waits for before it returns
	// (at most 2 s after the command's exit and the killing of its process group, which only a
	// descendant that left the group can make last that long; its later output is lost). A
	// failing writer makes the outcome sandbox_error.
	Stdout, Stderr io.Writer
	// Timeout is the command's deadline, measured from its start; when it passes the command's
	// whole process group is killed and the outcome is timeout. 0 means no deadline of its own
	// (the context's deadline, if any, still applies). Must not be negative.
	Timeout time.Duration
	// MemoryLimitBytes is the most resident memory, in bytes, that the command and its
	// descendants may use together; going over it ends the run with outcome oom. It is enforced by
	// the cgroup's memory.max in the cgroup v2 mode and by the procfs watchdog otherwise (see the
	// package documentation). 0 means no limit. Must not be negative. The limit is never reported
	// as usage.
	MemoryLimitBytes int64
}

// errInvalidSpec is wrapped by every error about a Spec that cannot be run.
var errInvalidSpec = errors.New("invalid spec")

// Validate reports every field of s that breaks its rule, each naming the value and the rule,
// joined (errors.Join) in field order: an empty Path, a negative Timeout, a negative
// MemoryLimitBytes. Each wraps the same invalid-spec error; nil when s is runnable. [Run] refuses
// such a Spec with it, running nothing.
func (s Spec) Validate() error {
	var errs []error
	if s.Path == "" {
		errs = append(errs, fmt.Errorf("%w: Path is empty: a program to run is required", errInvalidSpec))
	}
	if s.Timeout < 0 {
		errs = append(errs, fmt.Errorf("%w: Timeout %v is negative: it must be 0 (none) or positive", errInvalidSpec, s.Timeout))
	}
	if s.MemoryLimitBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: MemoryLimitBytes %d is negative: it must be 0 (none) or positive", errInvalidSpec, s.MemoryLimitBytes))
	}
	return errors.Join(errs...)
}
