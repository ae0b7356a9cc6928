package bench

import (
	"fmt"
	"syscall"
)

// Open files the bench needs per concurrent caller: in the bench process a client connection and
// the upstream's side of a connection (two each when calling the upstream directly), in a proxy
// child the client's connection, its upstream connection and a capture file being appended.
const (
	filesPerCaller = 3
	filesBase      = 64 // executables, pipes, listeners, the runtime's own
)

// filesNeeded is the open-file limit a run at concurrency conc needs.
func filesNeeded(conc int) uint64 { return uint64(filesPerCaller*conc + filesBase) }

// checkFileLimit refuses a concurrency the process's open-file limit (RLIMIT_NOFILE, which Go
// already raised to its hard limit at start-up) cannot serve: connections that cannot be opened or
// accepted would turn the run into minutes of timeouts instead of numbers.
func checkFileLimit(conc int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return nil // unknown limit: the run will tell
	}
	return checkFileLimitOf(conc, lim.Cur)
}

// checkFileLimitOf is checkFileLimit against a limit of cur open files.
func checkFileLimitOf(conc int, cur uint64) error {
	if need := filesNeeded(conc); cur < need {
		return fmt.Errorf("bench: concurrency %d needs about %d open files, the limit here is %d (ulimit -n): raise it or lower --concurrency", conc, need, cur)
	}
	return nil
}
