package agentobs

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpecValidationVectors runs SPEC §8 #75–84 and #90 (tests/unit_tests/test_rollout_observability.py):
// each input is decoded as the reference's model_validate would read it; wantErr "" means valid.
func TestSpecValidationVectors(t *testing.T) {
	const refKeys = "model_call_id or both model_ref and response_id"
	bundle := func(records string) string { return `{"source":"test","records":[` + records + `]}` }
	tests := []struct {
		name    string
		decode  func([]byte) error
		in      string
		wantErr string
	}{
		{"#75 ModelCallRef {} rejected", decodeRef, `{}`, refKeys},
		{"#75 ModelCallRef {response_id} rejected", decodeRef, `{"response_id":"resp-1"}`, refKeys},
		{"#75 ModelCallRef {model_ref} rejected", decodeRef, `{"model_ref":{"name":"policy","type":"responses_api_models"}}`, refKeys},
		{"#75 ModelCallRef empty model_call_id rejected", decodeRef, `{"model_call_id":""}`, refKeys},
		{"#75 ModelCallRef empty response_id with model_ref rejected", decodeRef, `{"model_ref":{"name":"policy","type":"responses_api_models"},"response_id":""}`, refKeys},
		{"#75 ModelCallRef model_call_id accepted", decodeRef, `{"model_call_id":"call-1"}`, ""},
		{"#75 ModelCallRef model_ref and response_id accepted", decodeRef, `{"model_ref":{"name":"policy","type":"responses_api_models"},"response_id":"resp-1"}`, ""},
		{"#76 duplicate invocation ids rejected", decodeBundleErr,
			bundle(`{"kind":"agent_invocation","invocation_id":"root"},{"kind":"agent_invocation","invocation_id":"root"}`),
			"invocation_id must be unique"},
		{"#77 self parent rejected", decodeBundleErr,
			bundle(`{"kind":"agent_invocation","invocation_id":"root","parent_invocation_id":"root"}`),
			"parent_invocation_id must not form a cycle"},
		{"#77 two-node cycle rejected", decodeBundleErr,
			bundle(`{"kind":"agent_invocation","invocation_id":"a","parent_invocation_id":"b"},{"kind":"agent_invocation","invocation_id":"b","parent_invocation_id":"a"}`),
			"parent_invocation_id must not form a cycle"},
		{"#77 cycle reached through a chain rejected", decodeBundleErr,
			bundle(`{"kind":"agent_invocation","invocation_id":"leaf","parent_invocation_id":"a"},{"kind":"agent_invocation","invocation_id":"a","parent_invocation_id":"b"},{"kind":"agent_invocation","invocation_id":"b","parent_invocation_id":"a"}`),
			"parent_invocation_id must not form a cycle"},
		{"#78 absent parent accepted", decodeBundleErr,
			bundle(`{"kind":"agent_invocation","invocation_id":"child","parent_invocation_id":"unobserved"}`), ""},
		{"#78 tree accepted", decodeBundleErr,
			bundle(`{"kind":"agent_invocation","invocation_id":"c","parent_invocation_id":"b"},{"kind":"agent_invocation","invocation_id":"b","parent_invocation_id":"a"},{"kind":"agent_invocation","invocation_id":"a"},{"kind":"agent_invocation","invocation_id":"d","parent_invocation_id":"a"}`), ""},
		{"#79 ModelCallRef producer_extension rejected", decodeRef, `{"model_call_id":"call-1","producer_extension":true}`, "producer_extension: unknown field"},
		{"#79 ToolCallObservation output rejected", decodeTool, `{"invocation_id":"root","tool_call_id":"tool-1","output":"result"}`, "output: unknown field"},
		{"#80 record kind turn rejected", decodeBundleErr, bundle(`{"kind":"turn"}`), "turn"},
		{"#81 trajectory with duplicate model_call_id rejected", decodeTrajectoryErr,
			`{"task_id":"task","rollout_id":"0-0","model_calls":[{"model_call_id":"call-1"},{"model_call_id":"call-1"}]}`,
			"model_call_id must be unique"},
		{"#81 trajectory with distinct model_call_ids accepted", decodeTrajectoryErr,
			`{"task_id":"task","rollout_id":"0-0","model_calls":[{"model_call_id":"call-1"},{"model_call_id":"call-2"},{"model_call_id":null},{"model_call_id":null}]}`, ""},
		{"#82 tool duration_ms -1 rejected", decodeTool, `{"invocation_id":"root","tool_call_id":"t","duration_ms":-1}`, "duration_ms: -1.0 must be greater than or equal to 0"},
		{"#82 tool completed before started rejected", decodeTool, `{"invocation_id":"root","tool_call_id":"t","started_at":2.0,"completed_at":1.0}`, "completed_at must not precede started_at"},
		{"#82 tool equal timestamps accepted", decodeTool, `{"invocation_id":"root","tool_call_id":"t","started_at":2.0,"completed_at":2.0,"duration_ms":0}`, ""},
		{"#83 invocation duration_ms -1 rejected", decodeInvocationErr, `{"invocation_id":"root","duration_ms":-1}`, "duration_ms: -1.0 must be greater than or equal to 0"},
		{"#84 compaction tokens_before -1 rejected", decodeCompactionErr, `{"invocation_id":"root","tokens_before":-1}`, "tokens_before: -1 must be greater than or equal to 0"},
		{"#84 compaction tokens_after -1 rejected", decodeCompactionErr, `{"invocation_id":"root","tokens_after":-1}`, "tokens_after: -1 must be greater than or equal to 0"},
		{"#84 compaction tokens_after above tokens_before accepted", decodeCompactionErr, `{"invocation_id":"root","tokens_before":10,"tokens_after":11}`, ""},
		{"#90 sandbox cpu_time_s -1 rejected", decodeSandboxErr, `{"role":"agent","cpu_time_s":-1}`, "cpu_time_s: -1.0 must be greater than or equal to 0"},
		{"#90 sandbox wall_time_s -1 rejected", decodeSandboxErr, `{"role":"agent","wall_time_s":-1}`, "wall_time_s"},
		{"#90 sandbox peak_memory_mib -1 rejected", decodeSandboxErr, `{"role":"agent","peak_memory_mib":-0.5}`, "peak_memory_mib"},
		{"#90 sandbox measured values accepted", decodeSandboxErr, `{"role":"agent","cpu_time_s":0.4,"wall_time_s":0.5,"peak_memory_mib":64}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.decode([]byte(tt.in))
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

func decodeRef(b []byte) error { var r ModelCallRef; return r.UnmarshalJSON(b) }
func decodeTool(b []byte) error {
	var r ToolCallObservation
	return r.UnmarshalJSON(b)
}
func decodeInvocationErr(b []byte) error {
	var r AgentInvocation
	return r.UnmarshalJSON(b)
}
func decodeCompactionErr(b []byte) error {
	var r ContextCompactionObservation
	return r.UnmarshalJSON(b)
}
func decodeSandboxErr(b []byte) error {
	var r SandboxObservation
	return r.UnmarshalJSON(b)
}
func decodeBundleErr(b []byte) error     { _, err := DecodeBundle(b); return err }
func decodeTrajectoryErr(b []byte) error { _, err := DecodeTrajectory(b); return err }

// TestValidateGoValues checks Validate on values built in Go (the recorder's path), including
// the zero-value defaults.
func TestValidateGoValues(t *testing.T) {
	tests := []struct {
		name    string
		v       interface{ Validate() error }
		wantErr string
	}{
		{"ref by id", refByID("c"), ""},
		{"ref by response", refByResponse("r"), ""},
		{"ref without keys", ModelCallRef{ResponseID: Ptr("r")}, "agentobs: model call ref: model_call_id or both model_ref and response_id are required"},
		{"ref with bad model_ref", ModelCallRef{ModelCallID: Ptr("c"), ModelRef: &ModelServerRef{Type: "x"}}, `model_ref: type: "x" is not "responses_api_models"`},
		{"server ref", ModelServerRef{Type: ModelRefTypeResponsesAPIModels}, ""},
		{"gap", ObservationGap{}, ""},
		{"invocation zero status is the default", AgentInvocation{InvocationID: "r"}, ""},
		{"invocation bad status", AgentInvocation{InvocationID: "r", Status: "done"}, `agentobs: agent_invocation: status: "done" is not one of`},
		{"invocation NaN duration", AgentInvocation{InvocationID: "r", DurationMS: Ptr(math.NaN())}, "duration_ms: NaN is not a finite number"},
		{"invocation bad ref", AgentInvocation{InvocationID: "r", ModelCalls: []ModelCallRef{refByID("a"), {}}}, "model_calls[1]: model_call_id or both"},
		{"invocation bad conversation item", AgentInvocation{InvocationID: "r", Conversation: []json.RawMessage{json.RawMessage(`[]`)}}, "conversation[0]: a JSON array, not an object"},
		{"tool bad timing source", ToolCallObservation{TimingSource: Ptr(TimingSource("wall"))}, `timing_source: "wall" is not one of`},
		{"tool bad status", ToolCallObservation{Status: "ok"}, `status: "ok" is not one of`},
		{"tool infinite start", ToolCallObservation{StartedAt: Ptr(math.Inf(-1))}, "started_at: -Inf is not a finite number"},
		{"tool reversed", ToolCallObservation{StartedAt: Ptr(2.0), CompletedAt: Ptr(1.0)}, "completed_at must not precede started_at (started_at 2.0, completed_at 1.0)"},
		{"tool only completed_at", ToolCallObservation{CompletedAt: Ptr(1.0)}, ""},
		{"compaction bad outcome", ContextCompactionObservation{Outcome: "done"}, `outcome: "done" is not one of`},
		{"compaction bad before ref", ContextCompactionObservation{BeforeModelCall: &ModelCallRef{}}, "before_model_call: model_call_id or both"},
		{"compaction bad after ref", ContextCompactionObservation{AfterModelCall: &ModelCallRef{}}, "after_model_call: model_call_id or both"},
		{"compaction bad model_calls ref", ContextCompactionObservation{ModelCalls: []ModelCallRef{{}}}, "model_calls[0]: model_call_id or both"},
		{"sandbox role required", SandboxObservation{}, `role: "" is not one of`},
		{"sandbox bad outcome", SandboxObservation{Role: SandboxRoleAgent, Outcome: "killed"}, `outcome: "killed" is not one of`},
		{"sandbox every outcome", SandboxObservation{Role: SandboxRoleEnvironment, Outcome: SandboxOutcomeCancelled}, ""},
		{"bundle nil record", AgentObservationBundle{Records: []Record{nil}}, "agentobs: bundle: records[0]: nil record"},
		{"bundle typed nil record", AgentObservationBundle{Records: []Record{(*ToolCallObservation)(nil)}}, "records[0]: nil record"},
		{"bundle invalid record named by index", AgentObservationBundle{Records: []Record{&AgentInvocation{}, &SandboxObservation{Role: SandboxRoleAgent, CPUTimeS: Ptr(-1.0)}}}, "records[1]: cpu_time_s: -1.0 must be greater than or equal to 0"},
		{"bundle duplicate ids", AgentObservationBundle{Records: []Record{&AgentInvocation{InvocationID: "x"}, &ToolCallObservation{InvocationID: "x"}, &AgentInvocation{InvocationID: "x"}}}, "invocation_id must be unique within an observation bundle"},
		{"bundle cycle", AgentObservationBundle{Records: []Record{&AgentInvocation{InvocationID: "a", ParentInvocationID: Ptr("c")}, &AgentInvocation{InvocationID: "b", ParentInvocationID: Ptr("a")}, &AgentInvocation{InvocationID: "c", ParentInvocationID: Ptr("b")}}}, "parent_invocation_id must not form a cycle"},
		{"bundle tool calls of absent invocations", AgentObservationBundle{Records: []Record{&ToolCallObservation{InvocationID: "ghost", ToolCallID: "t"}}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.v.Validate()
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}
