package agentobs

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/ojson"
)

func TestTrajectoryRoundTrip(t *testing.T) {
	in := `{"schema_version":"1.0","task_id":"task","rollout_id":"0-0",
		"invocations":[{"kind":"agent_invocation","invocation_id":"root"}],
		"turns":[{"invocation_id":"root","task_id":"task","rollout_id":"0-0","turn_no":1,"timestamp":100,"question":{"q":[1, 2]},"resolved":false,"step_count":0,"model_calls":[{"model_call_id":"call-1"}]}],
		"model_calls":[{"model_call_id":"call-1","started_at":100.0,"completed_at":100.01,"duration_ms":10,"request":{"input":"hi"},"response":"raw text",
			"response_metadata":{"response_id":"resp-1","model_ref":{"type":"responses_api_models","name":"policy"},"status_code":200,"latency_ttft_ms":1.5},
			"token_stats":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}],
		"tool_calls":[{"kind":"tool_call","invocation_id":"root","tool_call_id":"tool-1","status":"failed","output":"result"}],
		"gaps":[{"code":"turns_unavailable"}]}`
	tr, err := DecodeTrajectory([]byte(in))
	require.NoError(t, err)
	assert.Equal(t, json.RawMessage(`"result"`), tr.ToolCalls[0].Output)
	assert.Equal(t, ToolCallStatusFailed, tr.ToolCalls[0].Status)
	assert.Equal(t, 200, *tr.ModelCalls[0].ResponseMetadata.StatusCode)
	assert.False(t, *tr.Turns[0].Resolved)

	out, err := tr.AppendJSON(nil)
	require.NoError(t, err)
	want := `{"schema_version":"1.0","task_id":"task","rollout_id":"0-0",` +
		`"invocations":[{"kind":"agent_invocation","invocation_id":"root","parent_invocation_id":null,"spawned_by_tool_call_id":null,"status":"unknown","duration_ms":null,"error_type":null,"model_calls":[],"conversation":[]}],` +
		`"turns":[{"invocation_id":"root","task_id":"task","rollout_id":"0-0","turn_no":1,"timestamp":100.0,"question":{"q":[1,2]},"answer":null,"reasoning_content":null,"resolved":false,"step_count":0,"model_calls":[{"model_call_id":"call-1","model_ref":null,"response_id":null}]}],` +
		`"model_calls":[{"model_call_id":"call-1","started_at":100.0,"completed_at":100.01,"duration_ms":10.0,"request":{"input":"hi"},"response":"raw text",` +
		`"response_metadata":{"response_id":"resp-1","model_ref":{"type":"responses_api_models","name":"policy"},"model":null,"dialect":null,"status_code":200,"response_status":null,"finish_reason":null,"error_category":null,"latency_ttft_ms":1.5},` +
		`"token_stats":{"prompt_tokens":3,"completion_tokens":2,"reasoning_tokens":null,"total_tokens":5,"cached_tokens":null}}],` +
		`"tool_calls":[{"kind":"tool_call","invocation_id":"root","tool_call_id":"tool-1","sandbox_id":null,"tool_name":null,"started_at":null,"completed_at":null,"duration_ms":null,"timing_source":null,"status":"failed","error_type":null,"output":"result"}],` +
		`"gaps":[{"code":"turns_unavailable","invocation_id":null,"detail":null}]}`
	assert.Equal(t, want, string(out))
	again, err := DecodeTrajectory(out)
	require.NoError(t, err)
	assert.Equal(t, tr, again)

	minimal, err := TrajectoryRecord{TaskID: "t", RolloutID: "r"}.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, `{"schema_version":"1.0","task_id":"t","rollout_id":"r","invocations":[],"turns":[],"model_calls":[],"tool_calls":[],"gaps":[]}`, string(minimal))
}

func TestTrajectoryErrors(t *testing.T) {
	turn := func(inv string, no int, task string) string {
		return `{"invocation_id":"` + inv + `","task_id":"` + task + `","rollout_id":"0-0","turn_no":` + itoa(no) + `,"timestamp":1,"step_count":0}`
	}
	tests := []struct {
		name, in, want string
	}{
		{"#81 duplicate model_call_id", `{"task_id":"t","rollout_id":"0-0","model_calls":[{"model_call_id":"call-1"},{"model_call_id":"call-1"}]}`, "model_call_id must be unique within a trajectory"},
		{"duplicate invocation", `{"task_id":"t","rollout_id":"0-0","invocations":[{"invocation_id":"root"},{"invocation_id":"root"}]}`, "invocation_id must be unique within a trajectory"},
		{"turn identity", `{"task_id":"t","rollout_id":"0-0","turns":[` + turn("root", 1, "other") + `]}`, "turns[0]: turn identity must match the trajectory"},
		{"turn number repeated", `{"task_id":"t","rollout_id":"0-0","turns":[` + turn("root", 1, "t") + `,` + turn("root", 1, "t") + `]}`, "turns[1]: turn number must be unique within an invocation"},
		{"turn number below 1", `{"task_id":"t","rollout_id":"0-0","turns":[` + turn("root", 0, "t") + `]}`, "turn_no: 0 must be greater than or equal to 1"},
		{"turn timestamp required", `{"task_id":"t","rollout_id":"0-0","turns":[{"invocation_id":"r","task_id":"t","rollout_id":"0-0","turn_no":1,"step_count":0}]}`, "turns[0].timestamp: field required"},
		{"turn resolved not bool", `{"task_id":"t","rollout_id":"0-0","turns":[{"invocation_id":"r","task_id":"t","rollout_id":"0-0","turn_no":1,"timestamp":1,"step_count":0,"resolved":1}]}`, "resolved: a JSON number"},
		{"negative latency", `{"task_id":"t","rollout_id":"0-0","model_calls":[{"duration_ms":-1}]}`, "model_calls[0]: duration_ms: -1.0 must be greater than or equal to 0"},
		{"negative tokens", `{"task_id":"t","rollout_id":"0-0","model_calls":[{"token_stats":{"cached_tokens":-2}}]}`, "token_stats: cached_tokens: -2 must be greater than or equal to 0"},
		{"unknown metadata key", `{"task_id":"t","rollout_id":"0-0","model_calls":[{"response_metadata":{"upstream":1}}]}`, "model_calls[0].response_metadata.upstream: unknown field"},
		{"schema version", `{"schema_version":"2.0","task_id":"t","rollout_id":"0-0"}`, `schema_version: "2.0" is not one of`},
		{"task_id required", `{"rollout_id":"0-0"}`, "task_id: field required"},
		{"tool call validated", `{"task_id":"t","rollout_id":"0-0","tool_calls":[{"invocation_id":"r","tool_call_id":"x","started_at":2,"completed_at":1}]}`, "tool_calls[0]: completed_at must not precede started_at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeTrajectory([]byte(tt.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	t.Run("Go values", func(t *testing.T) {
		tr := TrajectoryRecord{TaskID: "t", RolloutID: "r", ModelCalls: []TrajectoryModelCall{{ModelCallID: Ptr("c")}, {ModelCallID: Ptr("c")}}}
		require.ErrorContains(t, tr.Validate(), "agentobs: trajectory: model_call_id must be unique within a trajectory")
		tr.ModelCalls[1].ModelCallID = Ptr("")
		require.NoError(t, tr.Validate())
		require.ErrorContains(t, TrajectoryModelCall{Request: json.RawMessage(`{`)}.Validate(), "request")
		require.ErrorContains(t, TrajectoryTurn{TurnNo: 1, StepCount: -1}.Validate(), "step_count")
		require.ErrorContains(t, TrajectoryResponseMetadata{LatencyTTFTMS: Ptr(-1.0)}.Validate(), "latency_ttft_ms")
		require.ErrorContains(t, TrajectoryTokenStats{PromptTokens: Ptr(-1)}.Validate(), "prompt_tokens")
		require.ErrorContains(t, TrajectoryToolCall{Output: json.RawMessage(`nope`)}.Validate(), "output")
	})
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestAttachTrajectoryNilResult: a nil result is an error, not a panic (from a fresh-user trial).
func TestAttachTrajectoryNilResult(t *testing.T) {
	row, err := ojson.Parse([]byte(`{"_ng_task_index":1,"_ng_rollout_index":0}`))
	require.NoError(t, err)
	err = AttachTrajectory(row, nil)
	var pe *ProjectionError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, ClassTypeError, pe.Class)
}
