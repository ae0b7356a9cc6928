package agentobs_test

import (
	"fmt"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
)

func ExampleJoin() {
	bundle, err := agentobs.DecodeBundle([]byte(`{"source":"my_agent","records":[
		{"kind":"agent_invocation","invocation_id":"root","status":"completed",
		 "model_calls":[{"model_ref":{"type":"responses_api_models","name":"policy"},"response_id":"resp-1"}]}]}`))
	if err != nil {
		panic(err)
	}
	id, resp := "call-1", "resp-1"
	calls := []capture.ModelCallRecord{{
		ModelCallID: &id, ResponseID: &resp, CallIndex: 0,
		ModelRef: &capture.ModelRef{Type: "responses_api_models", Name: "policy"},
	}}
	out, err := agentobs.Join(bundle, calls).AppendJSON(nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	// Output:
	// {"source":"my_agent","records":[{"kind":"agent_invocation","invocation_id":"root","parent_invocation_id":null,"spawned_by_tool_call_id":null,"status":"completed","duration_ms":null,"error_type":null,"model_calls":[{"model_call_id":"call-1","model_ref":{"type":"responses_api_models","name":"policy"},"response_id":"resp-1"}],"conversation":[]}],"gaps":[]}
}

func ExampleDecodeBundle() {
	_, err := agentobs.DecodeBundle([]byte(`{"source":"s","records":[{"kind":"tool_call","invocation_id":"root","tool_call_id":"t1","output":"42"}]}`))
	fmt.Println(err)
	// Output:
	// agentobs: decode bundle: records[0].output: unknown field (extra inputs are not permitted)
}
