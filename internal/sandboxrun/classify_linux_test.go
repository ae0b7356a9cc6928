//go:build linux

package sandboxrun

import (
	"errors"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClassify(t *testing.T) {
	copyErr := errors.New("write: broken pipe")
	tests := []struct {
		name        string
		facts       exitFacts
		wantOutcome string
		wantType    string
	}{
		{"exit 0", exitFacts{exited: true}, OutcomeCompleted, ""},
		{"exit 1", exitFacts{exited: true, code: 1}, OutcomeFailed, ErrorTypeExitCode},
		{"SIGSEGV", exitFacts{signal: syscall.SIGSEGV}, OutcomeFailed, ErrorTypeSignal},
		{"SIGKILL nobody explains", exitFacts{signal: syscall.SIGKILL}, OutcomeFailed, ErrorTypeSignal},
		{"killed for the deadline", exitFacts{signal: syscall.SIGKILL, killed: killDeadline}, OutcomeTimeout, ErrorTypeDeadlineExceeded},
		{"killed for a cancellation", exitFacts{signal: syscall.SIGKILL, killed: killCancel}, OutcomeCancelled, ErrorTypeContextCanceled},
		{"killed by the watchdog", exitFacts{signal: syscall.SIGKILL, killed: killMemory, memoryLimit: LimitWatchdog}, OutcomeOOM, ErrorTypeMemoryLimitExceeded},
		{"exited 0 just before the deadline kill landed", exitFacts{exited: true, killed: killDeadline}, OutcomeCompleted, ""},
		{"exited 2 just before the cancel kill landed", exitFacts{exited: true, code: 2, killed: killCancel}, OutcomeFailed, ErrorTypeExitCode},
		{"died of SIGTERM although a kill was sent", exitFacts{signal: syscall.SIGTERM, killed: killDeadline}, OutcomeFailed, ErrorTypeSignal},
		{"cgroup OOM killed it", exitFacts{signal: syscall.SIGKILL, memoryLimit: LimitCgroupV2, oomKills: 1}, OutcomeOOM, ErrorTypeOOMKill},
		{"cgroup OOM killed a child and it exited 137", exitFacts{exited: true, code: 137, memoryLimit: LimitCgroupV2, oomKills: 1}, OutcomeOOM, ErrorTypeOOMKill},
		{"cgroup OOM killed a child but it exited 0", exitFacts{exited: true, memoryLimit: LimitCgroupV2, oomKills: 2}, OutcomeCompleted, ""},
		{"cgroup without OOM kill, foreign SIGKILL", exitFacts{signal: syscall.SIGKILL, memoryLimit: LimitCgroupV2}, OutcomeFailed, ErrorTypeSignal},
		{"watchdog limit, foreign SIGKILL", exitFacts{signal: syscall.SIGKILL, memoryLimit: LimitWatchdog}, OutcomeOOM, ErrorTypeKilledUnderMemoryLimit},
		{"watchdog limit, SIGSEGV is not oom", exitFacts{signal: syscall.SIGSEGV, memoryLimit: LimitWatchdog}, OutcomeFailed, ErrorTypeSignal},
		{"timeout wins over an OOM kill after it", exitFacts{signal: syscall.SIGKILL, killed: killDeadline, oomKills: 1}, OutcomeTimeout, ErrorTypeDeadlineExceeded},
		{"copy failure after exit 0", exitFacts{exited: true, waitErr: copyErr}, OutcomeSandboxError, ErrorTypeWaitFailed},
		{"copy failure after exit 1", exitFacts{exited: true, code: 1, waitErr: copyErr}, OutcomeSandboxError, ErrorTypeWaitFailed},
		{"timeout wins over a copy failure", exitFacts{signal: syscall.SIGKILL, killed: killDeadline, waitErr: copyErr}, OutcomeTimeout, ErrorTypeDeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outcome, errType := classify(tt.facts)
			assert.Equal(t, tt.wantOutcome, outcome)
			assert.Equal(t, tt.wantType, errType)
		})
	}
}

func TestFallbackPeak(t *testing.T) {
	tests := []struct {
		name                          string
		maxrss, self, sampledHWM, sum int64
		want                          int64 // 0: nil
	}{
		{"ru_maxrss above the caller's peak is the command's", 500, 100, 200, 150, 500},
		{"ru_maxrss equal to the caller's peak may be the caller's", 100, 100, 40, 30, 40},
		{"ru_maxrss below the caller's peak is ignored", 90, 100, 40, 50, 50},
		{"unknown caller peak: ru_maxrss is never trusted", 500, -1, 40, 30, 40},
		{"summed RSS of several processes beats one high-water mark", 0, 100, 40, 70, 70},
		{"nothing measured is unknown, not zero", 90, 100, 0, 0, 0},
		{"nothing at all", 0, -1, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fallbackPeak(tt.maxrss, tt.self, tt.sampledHWM, tt.sum)
			if tt.want == 0 {
				assert.Nil(t, got)
				return
			}
			if assert.NotNil(t, got) {
				assert.Equal(t, tt.want, *got)
			}
		})
	}
}
