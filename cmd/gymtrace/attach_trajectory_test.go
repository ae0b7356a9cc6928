package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
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

// A failed ng_trajectory projection (gap trajectory_projection_failed; here the row names its
// rollout only by _ng_rollout_id, so it has no _ng_task_index) is reported on stderr; attach exits
// 0, with --strict 1 after writing the output, as for a capture problem (a fresh-user trial found
// --strict exiting 0).
func TestAttachStrictProjectionFailure(t *testing.T) {
	dir := t.TempDir()
	rec := `{"model_call_id":"c1","dialect":"chat","model_ref":{"type":"responses_api_models","name":"p"},` +
		`"started_at":1.0,"completed_at":2.0,"latency_ms":1000.0,"status_code":200,"error_category":null,` +
		`"request":{"model":"m"},"response":{"id":"r","model":"m","usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "r1"+capture.CaptureFileSuffix), []byte(rec), 0o600))
	input := filepath.Join(t.TempDir(), "rollouts.jsonl")
	require.NoError(t, os.WriteFile(input, []byte(`{"_ng_rollout_id":"r1"}`+"\n"), 0o600))
	for _, strict := range []bool{false, true} {
		output := filepath.Join(t.TempDir(), "out.jsonl")
		args := []string{"attach", "--capture-dir", dir, "--input", input, "--output", output}
		if strict {
			args = append(args, "--strict")
		}
		r := runGymtrace(t, args...)
		assert.Contains(t, r.stderr, "ng_trajectory projection failed (gap trajectory_projection_failed): line 1: KeyError: '_ng_task_index'")
		got, err := os.ReadFile(output)
		require.NoError(t, err, "the output is written")
		assert.Contains(t, string(got), `"trajectory_projection_failed"`)
		if !strict {
			assert.NoError(t, r.err)
			continue
		}
		require.Error(t, r.err)
		assert.Equal(t, 1, r.code)
		assert.Contains(t, r.err.Error(), "attach --strict: 1 rollout with failed ng_trajectory projections (listed above); "+output+" was written")
	}
}

// A float task index beyond float64 is inf to json.loads: the calls' rollout id and ng_trajectory's
// ids are both Python's str() of it (from a new-user trial: ng_trajectory said "None-1" beside
// ng_model_call_capture's "inf-1").
func TestAttachTrajectoryNonFiniteTaskIndex(t *testing.T) {
	for _, tt := range []struct{ index, rollout string }{
		{"1e400", "inf-1"},
		{"2E+999", "inf-1"},
	} {
		t.Run(tt.index, func(t *testing.T) {
			dir := t.TempDir()
			s, err := capture.NewStore(dir)
			require.NoError(t, err)
			line := `{"model_call_id":"c1","dialect":"responses","model_ref":null,"started_at":1.0,"completed_at":2.0,` +
				`"latency_ms":1000.0,"status_code":200,"error_category":null,"request":{"input":"x"},"response":{"id":"r","model":"m"}}` + "\n"
			require.NoError(t, s.Append(t.Context(), tt.rollout, []byte(line)))
			input := filepath.Join(t.TempDir(), "rollouts.jsonl")
			require.NoError(t, os.WriteFile(input, []byte(`{"_ng_task_index": `+tt.index+`, "_ng_rollout_index": 1}`+"\n"), 0o600))
			output := filepath.Join(t.TempDir(), "out.jsonl")
			r := runGymtrace(t, "attach", "--capture-dir", dir, "--input", input, "--output", output)
			require.NoError(t, r.err, r.stderr)
			got, err := os.ReadFile(output)
			require.NoError(t, err)
			l, err := rolloutline.Parse(got)
			require.NoError(t, err)
			c, _ := l.Get("ng_model_call_capture")
			assert.Contains(t, string(c), `"rollout_id":"`+tt.rollout+`"`)
			tr, _ := l.Get("ng_trajectory")
			task := strings.TrimSuffix(tt.rollout, "-1")
			assert.True(t, strings.HasPrefix(string(tr), `{"schema_version":"1.0","task_id":"`+task+`","rollout_id":"`+tt.rollout+`",`), "%s\n%s", got, r.stderr)
		})
	}
}
