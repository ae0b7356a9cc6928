package agentobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gymtrace/gymtrace/internal/sandboxrun"
)

// SandboxCommand is a command for [RunSandboxed] to run and measure.
type SandboxCommand struct {
	// Path is the program to run (looked up in PATH when it has no slash); Args are its arguments
	// (without the program name). Required.
	Path string
	Args []string
	// Dir is the working directory ("" = the caller's); Env the environment (nil = the caller's).
	Dir string
	Env []string
	// Stdin, Stdout and Stderr are connected to the command (nil = /dev/null / discarded).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Timeout, when > 0, kills the command's whole process group once it elapses: outcome "timeout".
	// 0 means none (ctx's deadline still applies); a negative Timeout is refused.
	Timeout time.Duration
	// MemoryLimitBytes, when > 0, is enforced by a cgroup v2 memory.max where the runner can create
	// one, else by a watchdog that samples the process tree's memory every 10 ms (it may overshoot by
	// what the command allocates in that time): outcome "oom". Never reported as usage. 0 means
	// none; a negative value is refused.
	MemoryLimitBytes int64

	// Role is the sandbox's role (SPEC §6.2; required): agent, verifier or environment.
	Role SandboxRole
	// Provider names the sandbox provider (default "local": a process on this machine).
	Provider string
	// SandboxID identifies the sandbox instance ("" = null).
	SandboxID string
}

// mib is bytes per MiB (SPEC §6.2 peak_memory_mib: 1 MiB = 2^20 bytes).
const mib = 1 << 20

// RunSandboxed runs cmd (os/exec, in its own process group) and returns the SandboxObservation
// (SPEC §6.2) filled with MEASURED values: wall_time_s around the process; cpu_time_s = user +
// system CPU seconds of the command and its descendants (wait4 rusage, or the cgroup's cpu.stat);
// peak_memory_mib = the measured high-water mark (cgroup memory.peak, else rusage/procfs sampling;
// null when nothing could be measured); exit_code; outcome completed (exit 0), failed (other exit
// code or signal), timeout (cmd.Timeout or ctx's deadline killed it), cancelled (ctx was cancelled),
// oom (the kernel's OOM killer in the cgroup, or the memory watchdog), sandbox_error (the runner
// failed, e.g. the program could not start); resource_usage_source "cgroup_v2" or "rusage";
// error_type names the failure (e.g. "exit_code", "deadline_exceeded", "memory_limit_exceeded").
// Configured limits never appear as usage.
//
// peak_memory_mib is null only when nothing was measured: in the rusage mode (no cgroup v2 of its
// own: most containers) the kernel's ru_maxrss cannot be told from the caller's own high-water
// mark for a command that used less memory than the caller, so the peak is the procfs sampler's,
// whose first sample is taken right after the start; a command that exits before it (a shell
// running only "exit 3", typically well under a millisecond) has no measured peak, while an
// equally short one the sampler happened to catch alive reports its resident size (e.g. 0.29
// MiB). Which of the two a sub-millisecond command gets is a race, never a guess.
//
// When ctx carries an invocation ([Recorder.StartInvocation]) the run is recorded with
// [RecordSandbox]: a "sandbox {role}" span from the command's start to its end and the observation
// in the recorder's bundle. Without one nothing is recorded and the observation is only returned.
//
// The error is non-nil when cmd is invalid — nothing is run and nothing recorded; the returned
// observation has outcome sandbox_error and error_type "invalid_spec" — or when the command could
// not be started (the observation then has outcome sandbox_error and is still recorded), or when
// recording failed. cmd is invalid when Role is missing or unknown, Path is empty, Timeout is
// negative or MemoryLimitBytes is negative; the error names every such field, one per line
// (errors.Join). A command that runs and fails is not an error. Safe for concurrent use.
func RunSandboxed(ctx context.Context, cmd SandboxCommand) (SandboxObservation, error) {
	obs := SandboxObservation{Role: cmd.Role, Provider: Ptr(cmd.Provider)}
	if cmd.Provider == "" {
		obs.Provider = Ptr("local")
	}
	if cmd.SandboxID != "" {
		obs.SandboxID = Ptr(cmd.SandboxID)
	}
	spec := sandboxrun.Spec{
		Path: cmd.Path, Args: cmd.Args, Dir: cmd.Dir, Env: cmd.Env,
		Stdin: cmd.Stdin, Stdout: cmd.Stdout, Stderr: cmd.Stderr,
		Timeout: cmd.Timeout, MemoryLimitBytes: cmd.MemoryLimitBytes,
	}
	if err := errors.Join(obs.Validate(), spec.Validate()); err != nil {
		obs.Outcome, obs.ErrorType = SandboxOutcomeSandboxError, Ptr(sandboxrun.ErrorTypeInvalidSpec)
		return obs, fmt.Errorf("agentobs: run sandboxed: invalid SandboxCommand (nothing run):\n%w", err)
	}
	start := time.Now()
	res, runErr := sandboxrun.Run(ctx, spec)
	end := start.Add(res.WallTime)
	if res.WallTime <= 0 {
		end = time.Now()
	}
	fillSandboxObservation(&obs, res)
	if scopeFrom(ctx) == nil || scopeFrom(ctx).inv == nil {
		return obs, runErr
	}
	return obs, errors.Join(runErr, RecordSandbox(ctx, obs, start, end))
}

// fillSandboxObservation copies a run's measured values into obs (SPEC §6.2 units: seconds, MiB).
func fillSandboxObservation(obs *SandboxObservation, res sandboxrun.Result) {
	obs.Outcome = SandboxOutcome(res.Outcome)
	if obs.Outcome == "" {
		obs.Outcome = SandboxOutcomeUnknown
	}
	obs.ExitCode = res.ExitCode
	if res.WallTime > 0 || res.Outcome != sandboxrun.OutcomeSandboxError {
		obs.WallTimeS = Ptr(res.WallTime.Seconds())
		obs.CPUTimeS = Ptr(res.CPUTime.Seconds())
	}
	if res.PeakMemoryBytes != nil {
		obs.PeakMemoryMiB = Ptr(float64(*res.PeakMemoryBytes) / mib)
	}
	if res.ResourceUsageSource != "" {
		obs.ResourceUsageSource = Ptr(res.ResourceUsageSource)
	}
	if res.ErrorType != "" {
		obs.ErrorType = Ptr(res.ErrorType)
	}
}
