// Package sandboxrun runs one command and measures what it used: wall time, CPU time and peak
// memory as the operating system reports them, its exit code or signal, and an outcome in the
// vocabulary of SPEC §6.2 SandboxObservation (completed, failed, timeout, oom, sandbox_error,
// cancelled). It is the measuring half of agentobs's sandboxed runs: every number in a Result is
// measured, never a configured limit or an estimate (SPEC §6.2: cpu_time_s is the cumulative
// measured CPU time, peak_memory_mib the measured high-water mark).
//
// # Process model
//
// [Run] starts the command in a process group of its own (its pid is the group id). When the
// command's deadline passes ([Spec.Timeout] or the context's deadline), when the caller cancels
// the context, or when the command goes over its memory limit, the whole group is killed with
// SIGKILL, so grandchildren die with it. When the command exits by itself, whatever it left in
// its group is killed too, before the command is reaped, so nothing outlives a run (a descendant
// that moved itself to another process group or session escapes this in the fallback mode below;
// in the cgroup mode the cgroup is killed as a whole).
//
// # Two measuring modes
//
// cgroup v2 (ResourceUsageSource "cgroup_v2"): where /sys/fs/cgroup is a cgroup2 mount and the
// caller's own cgroup offers the memory controller to a child cgroup that the caller may create
// (in practice: a root caller in the root cgroup, or a caller whose cgroup already has memory in
// cgroup.subtree_control, as a delegated cgroup manager's does), the command is started
// directly inside a fresh cgroup (clone3 CLONE_INTO_CGROUP, no window in which it runs outside),
// with memory.max set to [Spec.MemoryLimitBytes] (and memory.swap.max to 0 so the limit is not
// bypassed through swap). After the run: CPU time is cpu.stat usage_usec, peak memory is
// memory.peak (Linux 5.19+), an oom outcome is memory.events oom_kill > 0, and the cgroup is
// killed (cgroup.kill) and removed. The caller's own process is never moved between cgroups, so in
// the common container layout where the caller sits in a non-root cgroup that holds processes (and
// so cannot enable controllers for children) this mode is unavailable and Run falls back quietly.
//
// rusage fallback (ResourceUsageSource "rusage"): everywhere else. CPU time is the user+system time
// of the wait4 rusage of the command, which includes its waited-for descendants. Peak memory needs
// care: Go starts children with vfork semantics (CLONE_VM), and Linux folds the parent's
// resident-set high-water mark into the child's ru_maxrss at exec, so ru_maxrss alone would report
// the caller's own peak for any small command. Run therefore trusts ru_maxrss only when it exceeds
// the caller's own high-water mark read right after the start (then it can only be the command's),
// and otherwise reports the highest value seen by a procfs sampler that reads, every 10 ms, VmHWM
// and VmRSS of the command and its descendants (found again every 100 ms through the
// /proc/<pid>/task/<tid>/children files; a descendant whose parent exited is not found). VmHWM is
// the kernel's own high-water mark of each address space since its exec, so peaks between samples
// are not missed; only growth in the last interval before exit can be. The peak is the largest
// of: the trusted ru_maxrss, the largest sampled per-process VmHWM and the largest sampled sum of
// VmRSS over the command's processes. When none of these is available (a command that exited before the first
// sample and used less than the caller) the peak is unknown (nil), never a guess.
//
// # Memory limit without cgroups: a watchdog, not RLIMIT_AS
//
// The fallback enforces [Spec.MemoryLimitBytes] with the same sampler: when the summed resident
// memory of the command's processes, or any one process's resident high-water mark, goes over the
// limit, the group is killed with SIGKILL and the outcome is oom. RLIMIT_AS is not used: it bounds
// virtual address space, which runtimes such as Go's, the JVM's and V8 reserve by the hundreds of
// MiB at start; the death it causes cannot be told apart from an ordinary crash; and Go cannot set
// an rlimit between fork and exec. The watchdog limits resident memory, as memory.max does, and
// knows exactly when it killed the command. Its cost is an overshoot: memory allocated within one
// sampling interval (10 ms; for a descendant started since the last tree walk, up to 100 ms) can
// exceed the limit before the watchdog acts. A SIGKILL that Run did not send, while a limit was set
// in this mode, is also reported as oom (the kernel's OOM killer may act during that overshoot).
//
// # Concurrency
//
// Run may be called from any number of goroutines at once; each call has its own process group,
// cgroup and sampler, and every goroutine it starts has ended when it returns.
//
// The package builds on Linux only; on other systems [Run] returns an error.
package sandboxrun
