package semconv

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/otel/attribute"
)

func TestObservationSpanNames(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"invoke_agent", InvokeAgentSpanName("planner"), "invoke_agent planner"},
		{"invoke_agent without name", InvokeAgentSpanName(""), "invoke_agent"},
		{"execute_tool", ExecuteToolSpanName("search"), "execute_tool search"},
		{"execute_tool without name", ExecuteToolSpanName(""), "execute_tool"},
		{"sandbox", SandboxSpanName("verifier"), "sandbox verifier"},
		{"sandbox without role", SandboxSpanName(""), "sandbox"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, tt.got) })
	}
}

// TestObservationKeysAreProjectKeys pins doc.go's rule: every key of agent.go is a gymtrace.* key,
// except the conventions' own.
func TestObservationKeysAreProjectKeys(t *testing.T) {
	keys := []attribute.Key{
		GymtraceObservationStatusKey, GymtraceAgentInvocationIDKey, GymtraceAgentParentInvocationIDKey,
		GymtraceAgentSpawnedByToolCallIDKey, GymtraceModelCallIDsKey, GymtraceToolTimingSourceKey,
		GymtraceSandboxRoleKey, GymtraceSandboxProviderKey, GymtraceSandboxIDKey, GymtraceSandboxExitCodeKey,
		GymtraceSandboxWallTimeKey, GymtraceSandboxCPUTimeKey, GymtraceSandboxPeakMemoryKey,
		GymtraceSandboxResourceUsageSourceKey, GymtraceCompactionTriggerKey, GymtraceCompactionTokensBeforeKey,
		GymtraceCompactionTokensAfterKey, GymtraceCompactionSummaryKey, GymtraceCompactionFirstKeptItemIDKey,
		GymtraceCompactionBeforeModelCallIDKey, GymtraceCompactionAfterModelCallIDKey,
	}
	seen := map[attribute.Key]bool{}
	for _, k := range keys {
		assert.True(t, strings.HasPrefix(string(k), "gymtrace."), "%s", k)
		assert.False(t, seen[k], "%s defined twice", k)
		seen[k] = true
	}
	assert.True(t, strings.HasPrefix(GymtraceModelCallEventName, "gymtrace."))
}
