package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rolloutline"
)

// TestAttachCommandTrajectory checks attach's default projection (SPEC §5.5 step 3): the payloads
// move from the attached calls into ng_trajectory, the task id comes from --inputs when given, and
// --include-payloads changes nothing then.
func TestAttachCommandTrajectory(t *testing.T) {
	dir, input := attachFixture(t, "{\"reward\": 1.0, \"_ng_task_index\": 0, \"_ng_rollout_index\": 0}\n")
	output := filepath.Join(t.TempDir(), "out.jsonl")
	inputs := filepath.Join(t.TempDir(), "run_materialized_inputs.jsonl")
	require.NoError(t, os.WriteFile(inputs, []byte(`{"_ng_task_index":0,"_ng_rollout_index":0,"task_id":"gsm8k-0017","responses_create_params":{}}`+"\n"), 0o600))

	read := func(t *testing.T) (capture, trajectory string) {
		t.Helper()
		got, err := os.ReadFile(output)
		require.NoError(t, err)
		l, err := rolloutline.Parse(got)
		require.NoError(t, err)
		assert.Equal(t, []string{"reward", "_ng_task_index", "_ng_rollout_index", "ng_model_call_capture", "ng_trajectory"}, l.Keys())
		c, _ := l.Get("ng_model_call_capture")
		tr, _ := l.Get("ng_trajectory")
		return string(c), string(tr)
	}

	for _, extra := range [][]string{nil, {"--include-payloads"}} {
		r := runGymtrace(t, append([]string{"attach", "--capture-dir", dir, "--input", input, "--output", output}, extra...)...)
		require.NoError(t, r.err)
		c, tr := read(t)
		assert.NotContains(t, c, "secret", "the payloads left the attached calls")
		assert.Contains(t, tr, `"request":{"input":"secret"}`)
		assert.True(t, strings.HasPrefix(tr, `{"schema_version":"1.0","task_id":"0","rollout_id":"0-0",`), tr)
	}

	r := runGymtrace(t, "attach", "--capture-dir", dir, "--input", input, "--output", output, "--inputs", inputs)
	require.NoError(t, r.err)
	_, tr := read(t)
	assert.True(t, strings.HasPrefix(tr, `{"schema_version":"1.0","task_id":"gsm8k-0017","rollout_id":"0-0",`), tr)

	r = runGymtrace(t, "attach", "--capture-dir", dir, "--input", input, "--output", output, "--inputs", filepath.Join(dir, "missing.jsonl"))
	require.Error(t, r.err)
	assert.Contains(t, r.err.Error(), "attach: --inputs:")
}
