package agentobs_test

import (
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/agentobs"
)

// sandboxModeEnv selects what the re-executed test binary does in TestSandboxHelperProcess.
const sandboxModeEnv = "GYMTRACE_AGENTOBS_SANDBOX_MODE"

// sink keeps the touched memory reachable until the helper exits.
var sink []byte

// TestSandboxHelperProcess is not a test: RunSandboxed's tests run the test binary with it as the
// sandboxed command. Without sandboxModeEnv it returns at once.
func TestSandboxHelperProcess(t *testing.T) {
	switch os.Getenv(sandboxModeEnv) {
	case "":
		return
	case "touch64":
		sink = make([]byte, 64<<20)
		for i := 0; i < len(sink); i += 4096 {
			sink[i] = 1
		}
		runtime.KeepAlive(sink)
		os.Exit(0)
	case "busy500ms": // spins until it has used 0.5 s of CPU (a loaded machine stretches the wall time)
		x := 0
		for cpuTime() < 500*time.Millisecond {
			for range 1 << 16 {
				x++
			}
		}
		os.Exit(x & 0)
	case "exit3":
		os.Exit(3)
	case "sleep":
		time.Sleep(30 * time.Second)
		os.Exit(0)
	}
	os.Exit(2)
}

// cpuTime is the user + system CPU time this process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func sandboxCommand(mode string) agentobs.SandboxCommand {
	return agentobs.SandboxCommand{
		Path: os.Args[0], Args: []string{"-test.run=^TestSandboxHelperProcess$"},
		Env:  append(os.Environ(), sandboxModeEnv+"="+mode, "GORACE=atexit_sleep_ms=0"),
		Role: agentobs.SandboxRoleAgent,
	}
}

// TestRunSandboxed: the observation holds measured values (issue 4: 64 MiB touched → peak ≥ 64 MiB,
// a 0.5 s busy loop → cpu_time_s ≥ 0.4) and the run is a span and a bundle record of the invocation.
func TestRunSandboxed(t *testing.T) {
	tests := []struct {
		name        string
		mode        string
		timeout     time.Duration
		wantOutcome agentobs.SandboxOutcome
		wantExit    *int
		check       func(t *testing.T, obs agentobs.SandboxObservation)
	}{
		{name: "64 MiB touched", mode: "touch64", wantOutcome: agentobs.SandboxOutcomeCompleted, wantExit: agentobs.Ptr(0),
			check: func(t *testing.T, obs agentobs.SandboxObservation) {
				require.NotNil(t, obs.PeakMemoryMiB)
				assert.GreaterOrEqual(t, *obs.PeakMemoryMiB, 64.0)
			}},
		{name: "0.5 s busy loop", mode: "busy500ms", wantOutcome: agentobs.SandboxOutcomeCompleted, wantExit: agentobs.Ptr(0),
			check: func(t *testing.T, obs agentobs.SandboxObservation) {
				require.NotNil(t, obs.CPUTimeS)
				assert.GreaterOrEqual(t, *obs.CPUTimeS, 0.4)
				require.NotNil(t, obs.WallTimeS)
				assert.GreaterOrEqual(t, *obs.WallTimeS, 0.4)
			}},
		{name: "exit code 3 fails", mode: "exit3", wantOutcome: agentobs.SandboxOutcomeFailed, wantExit: agentobs.Ptr(3)},
		{name: "timeout", mode: "sleep", timeout: 300 * time.Millisecond, wantOutcome: agentobs.SandboxOutcomeTimeout,
			check: func(t *testing.T, obs agentobs.SandboxObservation) {
				require.NotNil(t, obs.WallTimeS)
				assert.Less(t, *obs.WallTimeS, 10.0, "killed at its deadline, not after the sleep")
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
			rec, err := agentobs.NewRecorder(tp, "sandbox-rollout")
			require.NoError(t, err)
			ctx, inv := rec.StartInvocation(t.Context(), "agent")
			cmd := sandboxCommand(tt.mode)
			cmd.Timeout = tt.timeout
			obs, err := agentobs.RunSandboxed(ctx, cmd)
			require.NoError(t, err)
			inv.End(nil)
			assert.Equal(t, tt.wantOutcome, obs.Outcome)
			assert.Equal(t, tt.wantExit, obs.ExitCode)
			require.NotNil(t, obs.ResourceUsageSource)
			assert.Equal(t, "local", *obs.Provider)
			if tt.check != nil {
				tt.check(t, obs)
			}
			var sandboxes []agentobs.SandboxObservation
			for _, r := range rec.Bundle().Records {
				if s, ok := r.(*agentobs.SandboxObservation); ok {
					sandboxes = append(sandboxes, *s)
				}
			}
			require.Len(t, sandboxes, 1)
			assert.Equal(t, obs, sandboxes[0], "the bundle records exactly the returned observation")
			var names []string
			for _, s := range exp.GetSpans() {
				names = append(names, s.Name)
			}
			assert.Contains(t, names, "sandbox agent")
		})
	}
	t.Run("without an invocation: measured, not recorded", func(t *testing.T) {
		obs, err := agentobs.RunSandboxed(t.Context(), sandboxCommand("exit3"))
		require.NoError(t, err)
		assert.Equal(t, agentobs.SandboxOutcomeFailed, obs.Outcome)
	})
	t.Run("invalid command refused", func(t *testing.T) {
		for _, tt := range []struct {
			name string
			cmd  agentobs.SandboxCommand
			want []string // every invalid field named
		}{
			{name: "no role", cmd: agentobs.SandboxCommand{Path: "true"}, want: []string{"role"}},
			{name: "no path", cmd: agentobs.SandboxCommand{Role: agentobs.SandboxRoleAgent}, want: []string{"Path is empty"}},
			// From a fresh-user trial: only the Timeout was named, and the run was recorded.
			{name: "negative timeout and memory limit", cmd: agentobs.SandboxCommand{Path: "true", Role: agentobs.SandboxRoleEnvironment, Timeout: -1, MemoryLimitBytes: -5},
				want: []string{"Timeout -1ns is negative", "MemoryLimitBytes -5 is negative"}},
			{name: "every field", cmd: agentobs.SandboxCommand{Role: "robot", Timeout: -1, MemoryLimitBytes: -5},
				want: []string{"role", "Path is empty", "Timeout -1ns is negative", "MemoryLimitBytes -5 is negative"}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				h := newHarness(t)
				rec, err := agentobs.NewRecorder(h.tp, "r-1")
				require.NoError(t, err)
				ctx, inv := rec.StartInvocation(t.Context(), "a")
				obs, err := agentobs.RunSandboxed(ctx, tt.cmd)
				inv.End(nil)
				require.Error(t, err)
				assert.Contains(t, err.Error(), "nothing run")
				for _, w := range tt.want {
					assert.Contains(t, err.Error(), w)
				}
				assert.Equal(t, agentobs.SandboxOutcomeSandboxError, obs.Outcome)
				assert.Equal(t, "invalid_spec", *obs.ErrorType)
				assert.Empty(t, rec.Bundle().Records[1:], "nothing recorded but the invocation")
			})
		}
	})
	t.Run("program that cannot start: sandbox_error", func(t *testing.T) {
		obs, err := agentobs.RunSandboxed(t.Context(), agentobs.SandboxCommand{Path: "/nonexistent/gymtrace-tool", Role: agentobs.SandboxRoleVerifier})
		require.Error(t, err)
		assert.Equal(t, agentobs.SandboxOutcomeSandboxError, obs.Outcome)
	})
}
