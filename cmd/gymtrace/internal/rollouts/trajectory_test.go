package rollouts

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
)

func TestReadInputRows(t *testing.T) {
	rows, err := ReadInputRows(context.Background(), strings.NewReader(
		`{"_ng_task_index":0,"_ng_rollout_index":1,"task_id":"first","prompt":"long"}`+"\n\n"+
			`{"_ng_task_index":0,"_ng_rollout_index":1,"task_id":"second"}`+"\n"+
			`{"_ng_task_index":null,"_ng_rollout_index":2,"task_id":"no index"}`+"\n"+
			`{"_ng_task_index":3.0,"_ng_rollout_index":0,"problem_id":7}`+"\n"))
	require.NoError(t, err)
	assert.Equal(t, 2, rows.Len())
	assert.Equal(t, `{"task_id":"first"}`, rows.rows[[2]string{"0", "1"}].String(), "the first row of an index pair, task keys only")
	assert.Equal(t, `{"problem_id":7}`, rows.rows[[2]string{"3.0", "0"}].String(), "indices as Python's str()")

	_, err = ReadInputRows(context.Background(), strings.NewReader("{}\nnot json\n"))
	require.ErrorContains(t, err, "input rows: line 2: not a JSON object")
}

// TestAttachTrajectoryIdentity checks where the trajectory's task_id comes from (SPEC §5.6
// "Identity"): the matching input row, else the line's own keys.
func TestAttachTrajectoryIdentity(t *testing.T) {
	s := newStore(t)
	writeCapture(t, s, "0-0", callLine("c1", `{"input_tokens":1,"output_tokens":2,"total_tokens":3}`, "5.0"))
	line := `{"reward":1.0,"_ng_task_index":0,"_ng_rollout_index":0}` + "\n"
	inputs, err := ReadInputRows(context.Background(), strings.NewReader(`{"_ng_task_index":0,"_ng_rollout_index":0,"instance_id":"django__django-11099"}`+"\n"))
	require.NoError(t, err)

	tests := []struct {
		name, task string
		inputs     *InputRows
		matched    int
	}{
		{"from the input row", "django__django-11099", inputs, 1},
		{"from the line's _ng_task_index", "0", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, sum, err := attachString(t, line, []*capture.Store{s}, Options{Trajectory: true, Inputs: tt.inputs})
			require.NoError(t, err)
			assert.Equal(t, 1, sum.Projected)
			assert.Equal(t, tt.matched, sum.InputsMatched)
			assert.True(t, strings.HasPrefix(member(t, out, "ng_trajectory"), `{"schema_version":"1.0","task_id":"`+tt.task+`","rollout_id":"0-0",`))
			assert.NotContains(t, member(t, out, capture.AttachmentKey), `"request"`, "payloads moved into ng_trajectory")
		})
	}
}

// TestAttachTrajectoryIdentityBeyond64Bits: identity keys Python reads but the strict parser does
// not (an integer beyond 64 bits) are read as Gym's collector reads them, so the projection names
// the task instead of failing with a KeyError for a key the row has (from a new-user trial).
func TestAttachTrajectoryIdentityBeyond64Bits(t *testing.T) {
	s := newStore(t)
	writeCapture(t, s, "r1", callLine("c1", `{"input_tokens":1,"output_tokens":2,"total_tokens":3}`, "5.0"))
	line := `{"_ng_rollout_id":"r1","_ng_task_index":99999999999999999999999,"_ng_rollout_index":0}` + "\n"
	out, sum, err := attachString(t, line, []*capture.Store{s}, Options{Trajectory: true})
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Projected)
	assert.Empty(t, sum.TrajectoryErrors)
	assert.True(t, strings.HasPrefix(member(t, out, "ng_trajectory"), `{"schema_version":"1.0","task_id":"99999999999999999999999","rollout_id":"r1",`))
	assert.Contains(t, out, `"_ng_task_index":99999999999999999999999,`, "the line keeps its text")
}

// TestAttachTrajectoryFailure checks a failed projection (SPEC §5.5): the row is written with the
// trajectory_projection_failed gap in its attachment and its payloads, and the failure is listed.
func TestAttachTrajectoryFailure(t *testing.T) {
	s := newStore(t)
	usage := `{"input_tokens":1,"output_tokens":2,"total_tokens":3}`
	writeCapture(t, s, "0-0", callLine("dup", usage, "5.0")+callLine("dup", usage, "6.0"))
	out, sum, err := attachString(t, `{"_ng_task_index":0,"_ng_rollout_index":0,"ng_trajectory":{"old":1}}`+"\n", []*capture.Store{s}, Options{Trajectory: true})
	require.NoError(t, err)
	assert.Equal(t, 0, sum.Projected)
	require.Len(t, sum.TrajectoryErrors, 1)
	assert.Equal(t, 1, sum.TrajectoryErrors[0].Line)
	assert.ErrorContains(t, sum.TrajectoryErrors[0], "model_call_id must be unique within a trajectory")
	att := member(t, out, capture.AttachmentKey)
	assert.Contains(t, att, `"request":{"input":"hi"}`)
	assert.True(t, strings.HasSuffix(att, `"gaps":[{"code":"trajectory_projection_failed","detail":"ValidationError"}]}`), att)
	assert.NotContains(t, out, "ng_trajectory", "the producer's trajectory is removed")
}
