package claudecode

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/agentobs"
)

func TestObserve(t *testing.T) {
	t.Run("model server configured", func(t *testing.T) {
		b, err := Observe(fixtureConfigDir(t, "91_nested_tree"), Options{RolloutID: "3-1", ModelServerName: "policy",
			RootStatus: agentobs.InvocationStatusCompleted, Location: time.UTC})
		require.NoError(t, err)
		assert.Equal(t, []string{GapNoSandboxRuntime}, gapCodes(b))
		assert.Len(t, invocations(b), 3)
	})
	t.Run("no model server", func(t *testing.T) {
		b, err := Observe(fixtureConfigDir(t, "95_cyclic_parents"), Options{RolloutID: "3-1"})
		require.NoError(t, err)
		codes := gapCodes(b)
		require.GreaterOrEqual(t, len(codes), 2)
		assert.Equal(t, []string{GapModelCallOwnershipUnavailable, GapNoSandboxRuntime}, codes[len(codes)-2:])
		assert.Equal(t, newGap(GapModelCallOwnershipUnavailable, nil, nil), b.Gaps[len(codes)-2])
	})
	t.Run("no transcript", func(t *testing.T) {
		b, err := Observe(t.TempDir(), Options{RolloutID: "3-1", ModelServerName: "policy"})
		require.NoError(t, err)
		assert.Equal(t, []string{GapTranscriptDirMissing, GapAgentTranscriptUnavailable, GapNoSandboxRuntime}, gapCodes(b))
	})
	t.Run("extractor failure", func(t *testing.T) {
		dir := fixtureConfigDir(t, "91_nested_tree")
		x := newExtractor(failingFS{panics: true}, Options{RolloutID: "3-1"})
		b, err := observe(x, dir)
		require.NoError(t, err)
		assert.Equal(t, agentobs.AgentObservationBundle{Source: Source, Records: []agentobs.Record{},
			Gaps: []agentobs.ObservationGap{newGap(GapObservationParseFailed, nil, nil), newGap(GapNoSandboxRuntime, nil, nil)}}, b)
		assert.JSONEq(t, `{"source":"claude_code","records":[],"gaps":[{"code":"observation_parse_failed","invocation_id":null,"detail":null},`+
			`{"code":"no_sandbox_runtime","invocation_id":null,"detail":null}]}`, mustJSON(t, b))
	})
	t.Run("rollout id required", func(t *testing.T) {
		_, err := Observe(t.TempDir(), Options{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "RolloutID is required")
	})
}

func TestRunApply(t *testing.T) {
	stream := func(lines ...string) []byte { return []byte(strings.Join(lines, "\n")) }
	exit := func(code int) *int { return &code }
	tests := []struct {
		name     string
		run      Run
		status   agentobs.InvocationStatus
		errType  *string
		duration float64
		attempts []CompactionAttempt
	}{
		{
			name: "success with the CLI's duration",
			run: Run{StreamJSON: stream(`{"type":"system","subtype":"init","session_id":"s"}`,
				`{"type":"result","subtype":"success","is_error":false,"duration_ms":4321,"num_turns":3}`), ExitCode: exit(0), Elapsed: 5 * time.Second},
			status: agentobs.InvocationStatusCompleted, duration: 4321,
		},
		{
			name:   "max turns",
			run:    Run{StreamJSON: stream(`{"type":"result","subtype":"error_max_turns","is_error":false}`), ExitCode: exit(0), Elapsed: 1500 * time.Millisecond},
			status: agentobs.InvocationStatusIncomplete, errType: ptr("error_max_turns"), duration: 1500,
		},
		{
			name:   "is_error without subtype",
			run:    Run{StreamJSON: stream(`{"type":"result","is_error":true,"duration_ms":-1}`), Elapsed: time.Second},
			status: agentobs.InvocationStatusFailed, errType: ptr("agent_error"), duration: 1000,
		},
		{
			name:   "error subtype",
			run:    Run{StreamJSON: stream(`{"type":"result","subtype":"error_during_execution","duration_ms":true}`), Elapsed: time.Second},
			status: agentobs.InvocationStatusFailed, errType: ptr("error_during_execution"), duration: 1000,
		},
		{
			name:   "non-zero exit",
			run:    Run{StreamJSON: stream(`{"type":"result","subtype":"success","duration_ms":10.5}`), ExitCode: exit(-9)},
			status: agentobs.InvocationStatusFailed, errType: ptr("process_exit_-9"), duration: 10.5,
		},
		{
			name:   "no result",
			run:    Run{StreamJSON: stream(`not json`, `[1]`), ExitCode: exit(0), Elapsed: 2 * time.Millisecond},
			status: agentobs.InvocationStatusIncomplete, errType: ptr("result_missing"), duration: 2,
		},
		{
			name: "timeout wins and measures",
			run: Run{StreamJSON: stream(`{"type":"result","subtype":"success","duration_ms":1}`,
				`{"type":"system","subtype":"status","session_id":"s","status":"compacting"}`), TimedOut: true, Elapsed: 90 * time.Second},
			status: agentobs.InvocationStatusIncomplete, errType: ptr("timeout"), duration: 90000,
			attempts: []CompactionAttempt{{InvocationID: "s", Outcome: agentobs.CompactionOutcomeUnknown}},
		},
		{
			name: "compaction attempts",
			run: Run{StreamJSON: stream(
				`{"type":"system","subtype":"status","session_id":"b","status":"compacting"}`,
				`{"type":"system","subtype":"status","session_id":"a","status":"compacting"}`,
				`{"type":"system","subtype":"status","session_id":"a","compact_result":"failed"}`,
				`{"type":"system","subtype":"status","session_id":"c","status":"compacting"}`,
				`{"type":"system","subtype":"status","session_id":"d","status":"compacting"}`,
				`{"type":"system","subtype":"status","session_id":"d","compact_result":"success"}`,
				`{"type":"system","subtype":"status","session_id":"","status":"compacting"}`,
				`{"type":"system","subtype":"init","session_id":"e","status":"compacting"}`,
				`{"type":"result","subtype":"success"}`), ExitCode: exit(0)},
			status: agentobs.InvocationStatusCompleted,
			attempts: []CompactionAttempt{
				{InvocationID: "a", Outcome: agentobs.CompactionOutcomeFailed},
				{InvocationID: "b", Outcome: agentobs.CompactionOutcomeUnknown},
				{InvocationID: "c", Outcome: agentobs.CompactionOutcomeUnknown},
			},
		},
		{
			name: "lines split as str.splitlines (a raw U+2028 breaks the event)",
			run: Run{StreamJSON: []byte("{\"type\":\"result\",\"subtype\":\"success\"}\r\n" +
				"{\"type\":\"result\",\"subtype\":\"error_x\u2028y\"}\x0c"), ExitCode: exit(0)},
			status: agentobs.InvocationStatusCompleted,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{RolloutID: "keep", ModelServerName: "keep"}
			tt.run.Apply(&opts)
			assert.Equal(t, "keep", opts.RolloutID)
			assert.Equal(t, "keep", opts.ModelServerName)
			assert.Equal(t, tt.status, opts.RootStatus)
			assert.Equal(t, tt.errType, opts.RootErrorType)
			require.NotNil(t, opts.RootDurationMS)
			assert.Equal(t, tt.duration, *opts.RootDurationMS)
			assert.Equal(t, tt.attempts, opts.CompactionAttempts)
		})
	}
}

func TestPySplitLines(t *testing.T) {
	assert.Equal(t, []string{"a", "b", "", "c", "d", "e", "f"}, pySplitLines("a\r\nb\r\rc\x1dd\u0085e\u2029f"))
	assert.Equal(t, []string{"a"}, pySplitLines("a\n"))
	assert.Empty(t, pySplitLines(""))
}
