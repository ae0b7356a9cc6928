//go:build linux

package sandboxrun

import "syscall"

// killReason is why Run killed a command's process group before it exited by itself.
type killReason int

const (
	killNone     killReason = iota // Run did not kill it (leftovers killed after its exit do not count)
	killDeadline                   // Spec.Timeout or the context's deadline passed
	killCancel                     // the caller cancelled the context
	killMemory                     // the watchdog saw it over Spec.MemoryLimitBytes
)

// exitFacts is everything the outcome of a started command depends on.
type exitFacts struct {
	exited      bool           // it exited by itself (code is valid); false: a signal ended it
	code        int            // exit status when exited
	signal      syscall.Signal // the signal that ended it when !exited
	killed      killReason     // the first reason Run killed the group for, if any
	memoryLimit string         // how a memory limit was enforced: "", LimitCgroupV2 or LimitWatchdog
	oomKills    int64          // memory.events oom_kill of the run's cgroup (0 without a cgroup)
	waitErr     error          // a failure of waiting or of copying its streams, not its exit status
}

// classify maps exitFacts to an Outcome and an ErrorType (SPEC §6.2). The rules, in order:
//  1. SIGKILL after Run killed it: timeout, cancelled or oom by the reason (if it exited by itself
//     just before the kill landed, the later rules judge its own exit instead);
//  2. an OOM kill recorded by its cgroup, unless the command still exited 0: oom;
//  3. a wait or copy failure: sandbox_error;
//  4. exit 0: completed; another exit status: failed;
//  5. SIGKILL that Run did not send while the watchdog enforced a limit: oom; any other signal:
//     failed.
func classify(f exitFacts) (outcome, errorType string) {
	sigkilled := !f.exited && f.signal == syscall.SIGKILL
	if sigkilled {
		switch f.killed {
		case killDeadline:
			return OutcomeTimeout, ErrorTypeDeadlineExceeded
		case killCancel:
			return OutcomeCancelled, ErrorTypeContextCanceled
		case killMemory:
			return OutcomeOOM, ErrorTypeMemoryLimitExceeded
		}
	}
	if f.oomKills > 0 && (!f.exited || f.code != 0) {
		return OutcomeOOM, ErrorTypeOOMKill
	}
	if f.waitErr != nil {
		return OutcomeSandboxError, ErrorTypeWaitFailed
	}
	if f.exited {
		if f.code == 0 {
			return OutcomeCompleted, ""
		}
		return OutcomeFailed, ErrorTypeExitCode
	}
	if sigkilled && f.memoryLimit == LimitWatchdog {
		return OutcomeOOM, ErrorTypeKilledUnderMemoryLimit
	}
	return OutcomeFailed, ErrorTypeSignal
}
