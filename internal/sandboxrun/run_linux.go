//go:build linux

package sandboxrun

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// procRoot is where procfs is mounted.
const procRoot = "/proc"

// waitDelay bounds how long Run waits, once the command has exited and its process group has been
// killed, for a non-*os.File Stdin to stop blocking or for output pipes to close (held open only by
// a descendant that left the group). Output written after that is lost.
const waitDelay = 2 * time.Second

// Run starts the command that s describes, waits for it to end, and returns what it measured (see
// the package documentation for the process model and the two measuring modes).
//
// The returned error is non-nil only when the command was not run: s breaks a rule (ErrorType
// invalid_spec), ctx was already done (outcome cancelled or timeout), or starting it failed
// (ErrorType start_failed, e.g. the program does not exist). The Result is filled in those cases
// too (outcome, ErrorType), so a caller can still record an observation. A command that ran is
// always a Result with a nil error, whatever its outcome.
//
// While the command runs, Run kills its whole process group (and cgroup) with SIGKILL when
// s.Timeout passes or ctx's deadline passes (outcome timeout), when ctx is cancelled (outcome
// cancelled), or when the watchdog sees it over s.MemoryLimitBytes (outcome oom). Run returns
// promptly after such a kill: it does not wait for the command to finish on its own.
//
// Run is safe for concurrent use; every goroutine it starts has ended when it returns.
func Run(ctx context.Context, s Spec) (Result, error) {
	if err := s.Validate(); err != nil {
		return Result{Outcome: OutcomeSandboxError, ErrorType: ErrorTypeInvalidSpec}, fmt.Errorf("sandboxrun: %w", err)
	}
	if err := ctx.Err(); err != nil {
		res := Result{Outcome: OutcomeCancelled, ErrorType: ErrorTypeContextCanceled}
		if ctxReason(ctx) == killDeadline {
			res = Result{Outcome: OutcomeTimeout, ErrorType: ErrorTypeDeadlineExceeded}
		}
		return res, fmt.Errorf("sandboxrun: not started: %w", err)
	}
	cg, _ := newCgroup(s.MemoryLimitBytes) // any error means the rusage mode (package documentation)
	cmd, started, err := start(s, cg)
	if err != nil && cg != nil {
		// Nothing ran; try once without the cgroup (e.g. a kernel without clone3 CLONE_INTO_CGROUP).
		cg.remove()
		cg = nil
		cmd, started, err = start(s, nil)
	}
	if err != nil {
		return Result{Outcome: OutcomeSandboxError, ErrorType: ErrorTypeStartFailed}, fmt.Errorf("sandboxrun: start %s: %w", s.Path, err)
	}
	p := &process{cmd: cmd, pid: cmd.Process.Pid, cg: cg, started: started, limit: s.MemoryLimitBytes, selfHWM: -1}
	if cg == nil {
		p.selfHWM = selfHWM()
		p.smp = startSampler(procRoot, p.pid, s.MemoryLimitBytes)
	}
	return p.wait(ctx, s.Timeout), nil
}

// start builds and starts the command, in its own process group and, when cg is not nil, directly
// in cg. It returns the time taken just before the start.
func start(s Spec, cg *cgroup) (*exec.Cmd, time.Time, error) {
	cmd := exec.Command(s.Path, s.Args...)
	cmd.Dir = s.Dir
	cmd.Env = s.Env
	cmd.Stdin = s.Stdin
	cmd.Stdout = s.Stdout
	cmd.Stderr = s.Stderr
	cmd.WaitDelay = waitDelay
	attr := &syscall.SysProcAttr{Setpgid: true}
	if cg != nil {
		attr.UseCgroupFD = true
		attr.CgroupFD = cg.fd
	}
	cmd.SysProcAttr = attr
	t0 := time.Now()
	err := cmd.Start()
	if cg != nil {
		cg.closeFD()
	}
	return cmd, t0, err
}

// process is one started command.
type process struct {
	cmd     *exec.Cmd
	pid     int // also its process group id
	cg      *cgroup
	smp     *sampler // rusage mode only
	started time.Time
	limit   int64 // Spec.MemoryLimitBytes
	selfHWM int64 // the caller's VmHWM right after the start, bytes; -1 if unknown (or cgroup mode)
}

// killAll sends SIGKILL to the command's cgroup and process group. Called only before the command
// is reaped, so its pid (the group id) cannot have been reused.
func (p *process) killAll() {
	if p.cg != nil {
		p.cg.kill()
	}
	_ = unix.Kill(-p.pid, unix.SIGKILL)
}

// wait waits for the command's exit (killing it on timeout, cancellation or the memory watchdog),
// kills what it left behind, reaps it and builds the Result.
func (p *process) wait(ctx context.Context, timeout time.Duration) Result {
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		waitExited(p.pid)
	}()
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	var over <-chan struct{}
	if p.smp != nil && p.limit > 0 {
		over = p.smp.over
	}
	done := ctx.Done()
	killed := killNone
	kill := func(why killReason) {
		if killed == killNone {
			killed = why
		}
		p.killAll()
	}
	for running := true; running; {
		select {
		case <-exited:
			running = false
		case <-deadline:
			deadline = nil
			kill(killDeadline)
		case <-done:
			done = nil
			kill(ctxReason(ctx))
		case <-over:
			over = nil
			kill(killMemory)
		}
	}
	wall := time.Since(p.started)

	var peakHWM, peakSum int64
	if p.smp != nil {
		peakHWM, peakSum = p.smp.finish()
	}
	p.killAll() // whatever it left in its group, while its zombie still holds the group id
	waitErr := p.cmd.Wait()
	var exitErr *exec.ExitError
	if errors.As(waitErr, &exitErr) || errors.Is(waitErr, exec.ErrWaitDelay) {
		waitErr = nil
	}

	res := Result{WallTime: wall}
	facts := exitFacts{killed: killed, waitErr: waitErr}
	if p.limit > 0 {
		res.MemoryLimit = LimitWatchdog
		if p.cg != nil {
			res.MemoryLimit = LimitCgroupV2
		}
	}
	facts.memoryLimit = res.MemoryLimit

	var rusageCPU time.Duration
	var maxrss int64
	if st := p.cmd.ProcessState; st != nil {
		ws, _ := st.Sys().(syscall.WaitStatus)
		if ws.Exited() {
			code := ws.ExitStatus()
			res.ExitCode = &code
			facts.exited, facts.code = true, code
		} else if ws.Signaled() {
			facts.signal = ws.Signal()
			res.Signal = signalName(facts.signal)
		}
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok && ru != nil {
			rusageCPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			maxrss = int64(ru.Maxrss) * 1024 // KiB on Linux
		}
	} else if facts.waitErr == nil {
		facts.waitErr = errors.New("no process state after wait")
	}

	if p.cg != nil {
		p.cg.drain()
		cs := p.cg.stats()
		p.cg.remove()
		res.ResourceUsageSource = SourceCgroupV2
		res.CPUTime = rusageCPU
		if cs.cpuOK {
			res.CPUTime = cs.cpu
		}
		if cs.peakOK {
			peak := cs.peakBytes
			res.PeakMemoryBytes = &peak
		}
		facts.oomKills = cs.oomKills
	} else {
		res.ResourceUsageSource = SourceRusage
		res.CPUTime = rusageCPU
		res.PeakMemoryBytes = fallbackPeak(maxrss, p.selfHWM, peakHWM, peakSum)
	}
	res.Outcome, res.ErrorType = classify(facts)
	return res
}

// fallbackPeak is the rusage mode's peak memory in bytes (package documentation): the largest of
// the sampled per-process VmHWM, the sampled summed VmRSS and ru_maxrss, where ru_maxrss counts only
// when it exceeds the caller's own high-water mark selfHWM (else it may be the caller's, folded in
// at exec; selfHWM < 0 means unknown, so ru_maxrss is never trusted). nil when nothing was measured.
func fallbackPeak(maxrss, selfHWM, sampledHWM, sampledSum int64) *int64 {
	peak := max(sampledHWM, sampledSum)
	if selfHWM >= 0 && maxrss > selfHWM {
		peak = max(peak, maxrss)
	}
	if peak <= 0 {
		return nil
	}
	return &peak
}

// selfHWM returns the caller's own VmHWM in bytes, or -1 when it cannot be read.
func selfHWM() int64 {
	b, err := readFileInto(procRoot+"/self/status", nil)
	if err != nil {
		return -1
	}
	st, err := parseProcStatus(b)
	if err != nil || st.hwmBytes <= 0 {
		return -1
	}
	return st.hwmBytes
}

// waitExited blocks until the process pid has exited, without reaping it (WNOWAIT), so its pid and
// process group id stay reserved until Wait.
func waitExited(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// ctxReason tells a context's deadline from a cancellation.
func ctxReason(ctx context.Context) killReason {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return killDeadline
	}
	return killCancel
}

// signalName names sig as "SIGKILL", or "signal <n>" for a number without a name.
func signalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return fmt.Sprintf("signal %d", int(sig))
}
