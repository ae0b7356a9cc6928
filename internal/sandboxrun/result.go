package sandboxrun

import "time"

// Outcome values, exactly the SandboxObservation.outcome vocabulary of SPEC §6.2 (less unknown,
// which a measured run never produces).
const (
	// OutcomeCompleted: the command exited by itself with status 0.
	OutcomeCompleted = "completed"
	// OutcomeFailed: the command exited with a non-zero status, or a signal that Run did not send
	// ended it (and the memory rules below did not apply).
	OutcomeFailed = "failed"
	// OutcomeTimeout: a deadline ([Spec.Timeout] or the context's) passed and Run killed the command.
	OutcomeTimeout = "timeout"
	// OutcomeOOM: the memory limit ended the command: the cgroup recorded an OOM kill
	// (memory.events oom_kill > 0) and the command did not exit 0, or the watchdog killed it for
	// going over [Spec.MemoryLimitBytes], or (watchdog mode, a limit set) it died of a SIGKILL that
	// Run did not send.
	OutcomeOOM = "oom"
	// OutcomeSandboxError: the runner itself failed: the command could not be started (Run also
	// returns an error), or it ran but waiting for it or copying its output failed.
	OutcomeSandboxError = "sandbox_error"
	// OutcomeCancelled: the caller cancelled the context and Run killed the command.
	OutcomeCancelled = "cancelled"
)

// ResourceUsageSource values: where a Result's CPU time and peak memory come from.
const (
	// SourceCgroupV2: cpu.stat usage_usec and memory.peak of the run's own cgroup v2.
	SourceCgroupV2 = "cgroup_v2"
	// SourceRusage: the wait4 rusage of the command (CPU time, and ru_maxrss where it cannot be
	// the caller's own), completed by procfs samples of the command's processes for peak memory.
	SourceRusage = "rusage"
)

// MemoryLimit mechanisms: how [Spec.MemoryLimitBytes] was enforced in a run.
const (
	// LimitCgroupV2: memory.max of the run's cgroup; the kernel's OOM killer acts on it.
	LimitCgroupV2 = "cgroup_v2"
	// LimitWatchdog: the procfs watchdog of the rusage mode kills the process group.
	LimitWatchdog = "watchdog"
)

// ErrorType values: why a run did not complete, finer than its Outcome. They fill
// SandboxObservation.error_type (SPEC §6.2); a completed run has none ("").
const (
	// ErrorTypeExitCode: the command exited with a non-zero status (outcome failed).
	ErrorTypeExitCode = "exit_code"
	// ErrorTypeSignal: a signal that Run did not send ended the command (outcome failed).
	ErrorTypeSignal = "signal"
	// ErrorTypeDeadlineExceeded: a deadline killed the command (outcome timeout).
	ErrorTypeDeadlineExceeded = "deadline_exceeded"
	// ErrorTypeContextCanceled: the caller's cancellation killed the command (outcome cancelled).
	ErrorTypeContextCanceled = "context_canceled"
	// ErrorTypeOOMKill: the kernel's OOM killer acted in the run's cgroup (outcome oom).
	ErrorTypeOOMKill = "oom_kill"
	// ErrorTypeMemoryLimitExceeded: the watchdog saw the command over its limit and killed it
	// (outcome oom).
	ErrorTypeMemoryLimitExceeded = "memory_limit_exceeded"
	// ErrorTypeKilledUnderMemoryLimit: a SIGKILL that Run did not send ended the command while the
	// watchdog enforced a limit (outcome oom).
	ErrorTypeKilledUnderMemoryLimit = "sigkill_under_memory_limit"
	// ErrorTypeInvalidSpec: the Spec broke a rule; nothing was started (outcome sandbox_error).
	ErrorTypeInvalidSpec = "invalid_spec"
	// ErrorTypeStartFailed: the command could not be started (outcome sandbox_error).
	ErrorTypeStartFailed = "start_failed"
	// ErrorTypeWaitFailed: the command ran, but waiting for it or copying its standard streams
	// failed (outcome sandbox_error).
	ErrorTypeWaitFailed = "wait_failed"
	// ErrorTypeUnsupportedPlatform: Run does not work on this operating system (outcome
	// sandbox_error).
	ErrorTypeUnsupportedPlatform = "unsupported_platform"
)

// Result is what one run measured. Every value comes from the operating system or from clocks
// around the process; none is a configured limit.
type Result struct {
	// ExitCode is the command's exit status, or nil when a signal ended it or it never ran.
	ExitCode *int
	// Outcome is one of the Outcome* constants.
	Outcome string
	// WallTime is the time from just before the command was started until its exit was
	// observed (copying its remaining output afterwards is not included). 0 if it never started.
	WallTime time.Duration
	// CPUTime is the user+system CPU time of the command and its descendants: cpu.stat
	// usage_usec of its cgroup (every process that ran in it), or the wait4 rusage of the
	// command (itself and the descendants it waited for). 0 if it never started.
	CPUTime time.Duration
	// PeakMemoryBytes is the measured high-water mark of resident memory, in bytes: memory.peak of
	// the run's cgroup, or the largest of the trustworthy ru_maxrss and the procfs samples (see the
	// package documentation). nil when it could not be measured.
	PeakMemoryBytes *int64
	// ResourceUsageSource is SourceCgroupV2 or SourceRusage; "" if the command never started.
	ResourceUsageSource string
	// MemoryLimit is how [Spec.MemoryLimitBytes] was enforced: LimitCgroupV2 or LimitWatchdog, or
	// "" when no limit was set or the command never started.
	MemoryLimit string
	// ErrorType is one of the ErrorType* constants, or "" for a completed run.
	ErrorType string
	// Signal is the name of the signal that ended the command ("SIGKILL"), or "" when it exited.
	Signal string
}
