//go:build linux

package sandboxrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

const mib = 1 << 20

// requireMeasured checks what every started run must report, whatever its outcome.
func requireMeasured(t *testing.T, res Result) {
	t.Helper()
	assert.Positive(t, res.WallTime, "wall time")
	assert.Contains(t, []string{SourceCgroupV2, SourceRusage}, res.ResourceUsageSource)
	t.Logf("outcome=%s error_type=%q exit=%v signal=%q wall=%v cpu=%v peak=%s source=%s limit=%q",
		res.Outcome, res.ErrorType, fmtExit(res.ExitCode), res.Signal, res.WallTime, res.CPUTime,
		fmtPeak(res.PeakMemoryBytes), res.ResourceUsageSource, res.MemoryLimit)
}

func fmtExit(c *int) string {
	if c == nil {
		return "nil"
	}
	return strconv.Itoa(*c)
}

func fmtPeak(p *int64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprintf("%.1fMiB", float64(*p)/mib)
}

func TestRun(t *testing.T) {
	tests := []struct {
		name  string
		spec  func(t *testing.T) Spec
		check func(t *testing.T, res Result)
	}{
		{
			name: "exit 0 completes",
			spec: func(t *testing.T) Spec { return helperSpec(t, "exit", "0") },
			check: func(t *testing.T, res Result) {
				assert.Equal(t, OutcomeCompleted, res.Outcome)
				require.NotNil(t, res.ExitCode)
				assert.Equal(t, 0, *res.ExitCode)
				assert.Empty(t, res.ErrorType)
				assert.Empty(t, res.Signal)
				assert.Empty(t, res.MemoryLimit, "no limit was set")
			},
		},
		{
			name: "exit 3 fails with its code",
			spec: func(t *testing.T) Spec { return helperSpec(t, "exit", "3") },
			check: func(t *testing.T, res Result) {
				assert.Equal(t, OutcomeFailed, res.Outcome)
				require.NotNil(t, res.ExitCode)
				assert.Equal(t, 3, *res.ExitCode)
				assert.Equal(t, ErrorTypeExitCode, res.ErrorType)
				assert.Empty(t, res.Signal)
			},
		},
		{
			name: "SIGTERM fails with the signal and no exit code",
			spec: func(t *testing.T) Spec { return helperSpec(t, "signal", "15") },
			check: func(t *testing.T, res Result) {
				assert.Equal(t, OutcomeFailed, res.Outcome)
				assert.Nil(t, res.ExitCode)
				assert.Equal(t, "SIGTERM", res.Signal)
				assert.Equal(t, ErrorTypeSignal, res.ErrorType)
			},
		},
		{
			name: "SIGKILL it sent itself without a limit fails",
			spec: func(t *testing.T) Spec { return helperSpec(t, "signal", "9") },
			check: func(t *testing.T, res Result) {
				assert.Equal(t, OutcomeFailed, res.Outcome)
				assert.Equal(t, "SIGKILL", res.Signal)
				assert.Equal(t, ErrorTypeSignal, res.ErrorType)
			},
		},
		{
			name: "touching 64 MiB reports a peak of at least 64 MiB",
			spec: func(t *testing.T) Spec { return helperSpec(t, "alloc", "64", "300") },
			check: func(t *testing.T, res Result) {
				assert.Equal(t, OutcomeCompleted, res.Outcome)
				require.NotNil(t, res.PeakMemoryBytes)
				assert.GreaterOrEqual(t, *res.PeakMemoryBytes, int64(64*mib))
			},
		},
		{
			name: "0.5 s of busy loop reports at least 0.4 s of CPU",
			spec: func(t *testing.T) Spec { return helperSpec(t, "spin", "500") },
			check: func(t *testing.T, res Result) {
				assert.Equal(t, OutcomeCompleted, res.Outcome)
				assert.GreaterOrEqual(t, res.CPUTime, 400*time.Millisecond)
				assert.GreaterOrEqual(t, res.WallTime, 400*time.Millisecond, "the CPU time was spent while it ran")
			},
		},
		{
			name: "a 256 MiB allocation under a 32 MiB limit is oom",
			spec: func(t *testing.T) Spec {
				s := helperSpec(t, "alloc", "256", "30000")
				s.MemoryLimitBytes = 32 * mib
				return s
			},
			check: func(t *testing.T, res Result) {
				assert.Equal(t, OutcomeOOM, res.Outcome)
				assert.Nil(t, res.ExitCode)
				assert.Equal(t, "SIGKILL", res.Signal)
				assert.Contains(t, []string{LimitCgroupV2, LimitWatchdog}, res.MemoryLimit)
				assert.Contains(t, []string{ErrorTypeOOMKill, ErrorTypeMemoryLimitExceeded}, res.ErrorType)
				assert.Less(t, res.WallTime, 25*time.Second, "killed before its 30 s hold ended")
				require.NotNil(t, res.PeakMemoryBytes)
				assert.Positive(t, *res.PeakMemoryBytes)
			},
		},
		{
			name: "64 MiB under a 1 GiB limit completes and reports usage, not the limit",
			spec: func(t *testing.T) Spec {
				s := helperSpec(t, "alloc", "64", "300")
				s.MemoryLimitBytes = 1 << 30
				return s
			},
			check: func(t *testing.T, res Result) {
				assert.Equal(t, OutcomeCompleted, res.Outcome)
				assert.Contains(t, []string{LimitCgroupV2, LimitWatchdog}, res.MemoryLimit)
				require.NotNil(t, res.PeakMemoryBytes)
				assert.GreaterOrEqual(t, *res.PeakMemoryBytes, int64(64*mib))
				assert.Less(t, *res.PeakMemoryBytes, int64(512*mib))
			},
		},
		{
			name: "SIGKILL it sent itself under a limit",
			spec: func(t *testing.T) Spec {
				s := helperSpec(t, "signal", "9")
				s.MemoryLimitBytes = 1 << 30
				return s
			},
			check: func(t *testing.T, res Result) {
				assert.Equal(t, "SIGKILL", res.Signal)
				if res.MemoryLimit == LimitWatchdog {
					assert.Equal(t, OutcomeOOM, res.Outcome, "watchdog mode: an unexplained SIGKILL under a limit")
					assert.Equal(t, ErrorTypeKilledUnderMemoryLimit, res.ErrorType)
				} else {
					assert.Equal(t, LimitCgroupV2, res.MemoryLimit)
					assert.Equal(t, OutcomeFailed, res.Outcome, "cgroup mode: no oom_kill was recorded")
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(t.Context(), tt.spec(t))
			require.NoError(t, err)
			requireMeasured(t, res)
			tt.check(t, res)
		})
	}
}

// processGone reports whether pid no longer runs (absent, or a zombie that nobody reaped yet).
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'Z' || b[i+2] == 'X'
}

// grandchildPid reads the pid that the spawn helper printed.
func grandchildPid(t *testing.T, out string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	require.NoError(t, err, "spawn helper output %q", out)
	return pid
}

// lineWriter collects a command's output and calls onLine (if set) once, at the first newline.
type lineWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	onLine func()
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.onLine != nil && bytes.IndexByte(w.buf.Bytes(), '\n') >= 0 {
		w.onLine()
		w.onLine = nil
	}
	return len(p), nil
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func TestRunKillsProcessGroup(t *testing.T) {
	tests := []struct {
		name    string
		mode    string // helper mode: "sleep" (no grandchild) or "spawn" (prints its grandchild's pid)
		sleepMs string
		timeout time.Duration
		// ctx returns the run's context and a hook called once the helper printed a line; nil means
		// t.Context() and no hook.
		ctx         func(t *testing.T) (context.Context, func())
		wantOutcome string
		wantType    string
		minWall     time.Duration
	}{
		{
			name:        "Spec.Timeout of 200 ms kills a sleeper promptly",
			mode:        "sleep",
			sleepMs:     "60000",
			timeout:     200 * time.Millisecond,
			wantOutcome: OutcomeTimeout,
			wantType:    ErrorTypeDeadlineExceeded,
			minWall:     200 * time.Millisecond,
		},
		{
			// Longer than 200 ms so that even a -race binary on a loaded machine has printed its
			// grandchild's pid before the kill.
			name:        "Spec.Timeout kills its grandchild too",
			mode:        "spawn",
			sleepMs:     "60000",
			timeout:     3 * time.Second,
			wantOutcome: OutcomeTimeout,
			wantType:    ErrorTypeDeadlineExceeded,
			minWall:     3 * time.Second,
		},
		{
			name:    "the context's deadline is a timeout",
			mode:    "sleep",
			sleepMs: "60000",
			ctx: func(t *testing.T) (context.Context, func()) {
				ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
				t.Cleanup(cancel)
				return ctx, func() {}
			},
			wantOutcome: OutcomeTimeout,
			wantType:    ErrorTypeDeadlineExceeded,
			minWall:     200 * time.Millisecond,
		},
		{
			name:    "cancelling the context is cancelled",
			mode:    "spawn",
			sleepMs: "60000",
			ctx: func(t *testing.T) (context.Context, func()) {
				ctx, cancel := context.WithCancel(t.Context())
				t.Cleanup(cancel)
				return ctx, cancel
			},
			wantOutcome: OutcomeCancelled,
			wantType:    ErrorTypeContextCanceled,
		},
		{
			name:        "a grandchild left behind by a completed command is killed",
			mode:        "spawn",
			sleepMs:     "0",
			wantOutcome: OutcomeCompleted,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, onLine := t.Context(), func() {}
			if tt.ctx != nil {
				ctx, onLine = tt.ctx(t)
			}
			// A pipe the grandchild holds too: Run must not wait for the grandchild to end by itself.
			out := &lineWriter{onLine: onLine}
			s := helperSpec(t, tt.mode, tt.sleepMs)
			s.Stdout = out
			s.Timeout = tt.timeout
			t0 := time.Now()
			res, err := Run(ctx, s)
			elapsed := time.Since(t0)
			require.NoError(t, err)
			requireMeasured(t, res)
			assert.Equal(t, tt.wantOutcome, res.Outcome)
			assert.Equal(t, tt.wantType, res.ErrorType)
			// The helpers sleep 60 s: returning well before proves Run killed them (and did not wait
			// for the grandchild that holds the stdout pipe). The margin absorbs a loaded machine.
			assert.Less(t, elapsed, tt.minWall+5*time.Second, "Run returned promptly")
			if tt.wantOutcome == OutcomeCompleted {
				require.NotNil(t, res.ExitCode)
				assert.Equal(t, 0, *res.ExitCode)
			} else {
				assert.Nil(t, res.ExitCode)
				assert.Equal(t, "SIGKILL", res.Signal)
				assert.GreaterOrEqual(t, res.WallTime, tt.minWall)
			}
			if tt.mode == "spawn" {
				pid := grandchildPid(t, out.String())
				assert.Eventually(t, func() bool { return processGone(pid) }, 2*time.Second, 10*time.Millisecond,
					"grandchild %d still runs", pid)
			}
		})
	}
}

func TestRunNotStarted(t *testing.T) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancel2 := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel2()
	tests := []struct {
		name        string
		ctx         context.Context
		spec        Spec
		wantOutcome string
		wantType    string
		wantErr     string
	}{
		{"empty path", t.Context(), Spec{}, OutcomeSandboxError, ErrorTypeInvalidSpec, "Path is empty"},
		{"negative timeout", t.Context(), Spec{Path: "x", Timeout: -time.Second}, OutcomeSandboxError, ErrorTypeInvalidSpec, "Timeout -1s is negative"},
		{"negative limit", t.Context(), Spec{Path: "x", MemoryLimitBytes: -1}, OutcomeSandboxError, ErrorTypeInvalidSpec, "MemoryLimitBytes -1 is negative"},
		{"missing program", t.Context(), Spec{Path: "/nonexistent/gymtrace-no-such-program"}, OutcomeSandboxError, ErrorTypeStartFailed, "no such file"},
		{"program not in PATH", t.Context(), Spec{Path: "gymtrace-no-such-program"}, OutcomeSandboxError, ErrorTypeStartFailed, "not found"},
		{"context already cancelled", cancelled, Spec{Path: "x"}, OutcomeCancelled, ErrorTypeContextCanceled, "context canceled"},
		{"context already past its deadline", expired, Spec{Path: "x"}, OutcomeTimeout, ErrorTypeDeadlineExceeded, "deadline exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(tt.ctx, tt.spec)
			require.Error(t, err)
			assert.ErrorContains(t, err, tt.wantErr)
			assert.Equal(t, Result{Outcome: tt.wantOutcome, ErrorType: tt.wantType}, res)
		})
	}
}

func TestRunStreamsDirEnv(t *testing.T) {
	t.Run("stdin, stdout, stderr and env", func(t *testing.T) {
		var out, errOut bytes.Buffer
		s := helperSpec(t, "echo")
		s.Env = append(s.Env, helperValueEnv+"=from-env")
		s.Stdin = strings.NewReader("hello sandbox")
		s.Stdout, s.Stderr = &out, &errOut
		res, err := Run(t.Context(), s)
		require.NoError(t, err)
		assert.Equal(t, OutcomeCompleted, res.Outcome)
		assert.Equal(t, "hello sandbox", out.String())
		assert.Equal(t, "from-env", errOut.String())
	})
	t.Run("working directory", func(t *testing.T) {
		var out bytes.Buffer
		s := helperSpec(t, "pwd")
		s.Dir = t.TempDir()
		s.Stdout = &out
		res, err := Run(t.Context(), s)
		require.NoError(t, err)
		assert.Equal(t, OutcomeCompleted, res.Outcome)
		assert.Equal(t, s.Dir, out.String())
	})
}

// failingWriter fails every write, as a full disk or a closed connection would.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRunOutputCopyFailureIsSandboxError(t *testing.T) {
	s := helperSpec(t, "echo")
	s.Stdin = strings.NewReader("some output")
	s.Stdout = failingWriter{}
	res, err := Run(t.Context(), s)
	require.NoError(t, err, "the command ran")
	requireMeasured(t, res)
	assert.Equal(t, OutcomeSandboxError, res.Outcome)
	assert.Equal(t, ErrorTypeWaitFailed, res.ErrorType)
}

// TestRunPeakIsNotTheCallers checks that a small command run from a big caller does not report the
// caller's memory (ru_maxrss alone would: Linux folds the vfork parent's high-water mark into the
// child's at exec).
func TestRunPeakIsNotTheCallers(t *testing.T) {
	big := touchedMemory(384 * mib)
	t.Cleanup(func() { require.NoError(t, unix.Munmap(big)) })
	res, err := Run(t.Context(), helperSpec(t, "sleep", "300"))
	requireMeasured(t, res)
	require.NoError(t, err)
	assert.Equal(t, OutcomeCompleted, res.Outcome)
	require.NotNil(t, res.PeakMemoryBytes, "a command alive for 300 ms is sampled")
	assert.Less(t, *res.PeakMemoryBytes, int64(128*mib), "the caller holds 384 MiB; the command far less")
	assert.Positive(t, *res.PeakMemoryBytes)
}

func TestRunConcurrentSafe(t *testing.T) {
	const n = 4
	results := make([]Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = Run(t.Context(), helperSpec(t, "exit", strconv.Itoa(i)))
		})
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		require.NotNil(t, results[i].ExitCode, "run %d", i)
		assert.Equal(t, i, *results[i].ExitCode, "run %d", i)
	}
}
