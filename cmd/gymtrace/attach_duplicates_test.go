package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
)

// TestAttachAndReportFlagDuplicateCalls: a capture file in which one call is recorded twice (as an
// older version writing beside a Collector did, issue #16 part 1) is a health finding of attach
// (stderr; --strict exits 1 after writing the output) and of report; the attachment itself keeps
// every record, as Gym's reader does.
func TestAttachAndReportFlagDuplicateCalls(t *testing.T) {
	dir := t.TempDir()
	rec := func(id string) string {
		return `{"model_call_id":"` + id + `","dialect":"chat","model_ref":{"type":"responses_api_models","name":"p"},` +
			`"started_at":1.0,"completed_at":2.0,"latency_ms":1000.0,"status_code":200,"error_category":null,` +
			`"request":{"model":"m"},"response":{"id":"r","model":"m","usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}}` + "\n"
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "0-0"+capture.CaptureFileSuffix),
		[]byte(rec("c1")+rec("c2")+rec("c1")+rec("c1")), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "1-0"+capture.CaptureFileSuffix), []byte(rec("c3")), 0o600))
	input := filepath.Join(t.TempDir(), "rollouts.jsonl")
	require.NoError(t, os.WriteFile(input, []byte(`{"_ng_task_index":0,"_ng_rollout_index":0}`+"\n"+
		`{"_ng_task_index":1,"_ng_rollout_index":0}`+"\n"), 0o600))
	output := filepath.Join(t.TempDir(), "out.jsonl")

	r := runGymtrace(t, "attach", "--capture-dir", dir, "--input", input, "--output", output, "--no-trajectory")
	require.NoError(t, r.err)
	assert.Contains(t, r.stderr, "line 1: rollout 0-0 with duplicate model_call_ids (2 calls recorded again)")
	assert.NotContains(t, r.stderr, "rollout 1-0 with duplicate")
	assert.Contains(t, r.stderr, "; 1 with duplicate model_call_ids")
	got, err := os.ReadFile(output)
	require.NoError(t, err)
	assert.Contains(t, string(got), `"num_calls":4`, "the attachment keeps every record")

	r = runGymtrace(t, "attach", "--capture-dir", dir, "--input", input, "--output", output, "--no-trajectory", "--strict")
	require.Error(t, r.err)
	assert.Contains(t, r.err.Error(), "attach --strict: 1 rollout with capture problems")

	r = runGymtrace(t, "report", "--capture-dir", dir)
	require.NoError(t, r.err)
	assert.Contains(t, r.stdout, "rollout 0-0: 2 records repeat a model_call_id already in its capture file")
	assert.NotContains(t, r.stdout, "rollout 1-0: ")
}
