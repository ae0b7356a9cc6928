package agentobs

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeBundle(t *testing.T) {
	t.Run("defaults fill missing optional keys", func(t *testing.T) {
		b := mustDecode(t, `{"source":"s","records":[{"kind":"agent_invocation","invocation_id":"root"},{"kind":"tool_call","invocation_id":"root","tool_call_id":"t"},{"kind":"context_compaction","invocation_id":"root"},{"kind":"sandbox","role":"agent"}]}`)
		require.Len(t, b.Records, 4)
		assert.Equal(t, &AgentInvocation{InvocationID: "root", Status: InvocationStatusUnknown}, b.Records[0])
		assert.Equal(t, &ToolCallObservation{InvocationID: "root", ToolCallID: "t", Status: ToolCallStatusUnknown}, b.Records[1])
		assert.Equal(t, &ContextCompactionObservation{InvocationID: "root", Outcome: CompactionOutcomeUnknown}, b.Records[2])
		assert.Equal(t, &SandboxObservation{Role: SandboxRoleAgent, Outcome: SandboxOutcomeUnknown}, b.Records[3])
		assert.Nil(t, b.Gaps)
	})
	t.Run("full values", func(t *testing.T) {
		b := mustDecode(t, `{"source":"s","records":[
			{"kind":"tool_call","invocation_id":"root","tool_call_id":"t","sandbox_id":null,"tool_name":"bash","started_at":100,"completed_at":100.5,"duration_ms":500,"timing_source":"artifact","status":"completed","error_type":null},
			{"kind":"context_compaction","invocation_id":"root","tokens_before":1e3,"tokens_after":200.0,"before_model_call":{"model_call_id":"c"}},
			{"kind":"sandbox","role":"environment","exit_code":-1,"cpu_time_s":0}],
			"gaps":[{"code":"g","invocation_id":"root"}]}`)
		tc := b.Records[0].(*ToolCallObservation)
		assert.Equal(t, 100.0, *tc.StartedAt)
		assert.Equal(t, 100.5, *tc.CompletedAt)
		assert.Equal(t, TimingSourceArtifact, *tc.TimingSource)
		assert.Nil(t, tc.SandboxID)
		cc := b.Records[1].(*ContextCompactionObservation)
		assert.Equal(t, 1000, *cc.TokensBefore)
		assert.Equal(t, 200, *cc.TokensAfter)
		assert.Equal(t, "c", *cc.BeforeModelCall.ModelCallID)
		sb := b.Records[2].(*SandboxObservation)
		assert.Equal(t, -1, *sb.ExitCode)
		assert.Equal(t, []ObservationGap{{Code: "g", InvocationID: Ptr("root")}}, b.Gaps)
	})
	t.Run("model_ref ignores extra keys", func(t *testing.T) {
		b := mustDecode(t, `{"source":"s","records":[{"kind":"agent_invocation","invocation_id":"r","model_calls":[{"model_ref":{"type":"responses_api_models","name":"p","extra":1},"response_id":"x"}]}]}`)
		ref := b.Records[0].(*AgentInvocation).ModelCalls[0]
		assert.Equal(t, ModelServerRef{Type: ModelRefTypeResponsesAPIModels, Name: "p"}, *ref.ModelRef)
	})
	t.Run("duplicate keys: last value wins", func(t *testing.T) {
		b := mustDecode(t, `{"source":"a","source":"b"}`)
		assert.Equal(t, "b", b.Source)
	})
	t.Run("conversation items kept as compact objects", func(t *testing.T) {
		b := mustDecode(t, `{"source":"s","records":[{"kind":"agent_invocation","invocation_id":"r","conversation":[ {"role": "user", "content": "hi", "n": 1.50} ]}]}`)
		assert.Equal(t, []json.RawMessage{json.RawMessage(`{"role":"user","content":"hi","n":1.50}`)}, b.Records[0].(*AgentInvocation).Conversation)
	})

	errorCases := []struct {
		name string
		in   string
		want []string // substrings of the error
	}{
		{"not JSON", `{"source":`, []string{"agentobs: decode bundle"}},
		{"not an object", `[]`, []string{"not an object"}},
		{"source missing", `{}`, []string{"source: field required"}},
		{"source wrong type", `{"source":1}`, []string{"source: a JSON number, not a string"}},
		{"unknown bundle key", `{"source":"s","extra":1}`, []string{"extra: unknown field"}},
		{"records null", `{"source":"s","records":null}`, []string{"records: a JSON null, not an array"}},
		{"record not an object", `{"source":"s","records":[1]}`, []string{"records[0]: a JSON number, not an object"}},
		{"record without kind", `{"source":"s","records":[{"invocation_id":"r"}]}`, []string{"records[0].kind: field required"}},
		{"unknown kind", `{"source":"s","records":[{"kind":"turn"}]}`, []string{`records[0].kind: unknown record kind "turn"`}},
		{"kind not a string", `{"source":"s","records":[{"kind":1}]}`, []string{"records[0].kind: a JSON number"}},
		{"invocation_id missing", `{"source":"s","records":[{"kind":"agent_invocation"}]}`, []string{"records[0].invocation_id: field required"}},
		{"invocation_id null", `{"source":"s","records":[{"kind":"agent_invocation","invocation_id":null}]}`, []string{"records[0].invocation_id: a JSON null, not a string"}},
		{"status invalid", `{"source":"s","records":[{"kind":"agent_invocation","invocation_id":"r","status":"timeout"}]}`, []string{`records[0].status: "timeout" is not one of`}},
		{"status null", `{"source":"s","records":[{"kind":"agent_invocation","invocation_id":"r","status":null}]}`, []string{"records[0].status: a JSON null"}},
		{"duration string", `{"source":"s","records":[{"kind":"agent_invocation","invocation_id":"r","duration_ms":"1"}]}`, []string{"records[0].duration_ms: a JSON string, not a number"}},
		{"duration bool", `{"source":"s","records":[{"kind":"agent_invocation","invocation_id":"r","duration_ms":true}]}`, []string{"records[0].duration_ms: a JSON bool"}},
		{"float overflow", `{"source":"s","records":[{"kind":"tool_call","invocation_id":"r","tool_call_id":"t","started_at":1e999}]}`, []string{"decode bundle"}},
		{"int with fraction", `{"source":"s","records":[{"kind":"context_compaction","invocation_id":"r","tokens_before":1.5}]}`, []string{"records[0].tokens_before: 1.5 has a fractional part"}},
		{"int out of range", `{"source":"s","records":[{"kind":"sandbox","role":"agent","exit_code":9223372036854775808}]}`, []string{"records[0].exit_code: integer 9223372036854775808 is out of the int64 range"}},
		{"timing_source invalid", `{"source":"s","records":[{"kind":"tool_call","invocation_id":"r","tool_call_id":"t","timing_source":"clock"}]}`, []string{`records[0].timing_source: "clock" is not one of`}},
		{"role missing", `{"source":"s","records":[{"kind":"sandbox"}]}`, []string{"records[0].role: field required"}},
		{"role invalid", `{"source":"s","records":[{"kind":"sandbox","role":"judge"}]}`, []string{`records[0].role: "judge" is not one of`}},
		{"model_calls not a list", `{"source":"s","records":[{"kind":"agent_invocation","invocation_id":"r","model_calls":{}}]}`, []string{"records[0].model_calls: a JSON object, not an array"}},
		{"nested unknown key", `{"source":"s","records":[{"kind":"context_compaction","invocation_id":"r","after_model_call":{"model_call_id":"c","x":1}}]}`, []string{"records[0].after_model_call.x: unknown field"}},
		{"model_ref wrong type literal", `{"source":"s","records":[{"kind":"agent_invocation","invocation_id":"r","model_calls":[{"model_ref":{"type":"resources_servers","name":"p"},"response_id":"x"}]}]}`, []string{`records[0].model_calls[0].model_ref.type: "resources_servers" is not "responses_api_models"`}},
		{"model_ref name missing", `{"source":"s","records":[{"kind":"agent_invocation","invocation_id":"r","model_calls":[{"model_ref":{"type":"responses_api_models"},"response_id":"x"}]}]}`, []string{"records[0].model_calls[0].model_ref.name: field required"}},
		{"conversation item not an object", `{"source":"s","records":[{"kind":"agent_invocation","invocation_id":"r","conversation":["hi"]}]}`, []string{"records[0].conversation[0]: a JSON string, not an object"}},
		{"gap code missing", `{"source":"s","gaps":[{"detail":"d"}]}`, []string{"gaps[0].code: field required"}},
		{"gap unknown key", `{"source":"s","gaps":[{"code":"c","severity":"high"}]}`, []string{"gaps[0].severity: unknown field"}},
		{"every problem is reported", `{"source":"s","a":1,"records":[{"kind":"turn"},{"kind":"tool_call","invocation_id":"r","tool_call_id":"t","output":"x"}]}`, []string{"a: unknown field", `"turn"`, "records[1].output: unknown field"}},
		{"validation runs after decoding", `{"source":"s","records":[{"kind":"tool_call","invocation_id":"r","tool_call_id":"t","duration_ms":-1}]}`, []string{"records[0]: duration_ms: -1.0 must be greater than or equal to 0"}},
	}
	for _, tc := range errorCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeBundle([]byte(tc.in))
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestUnmarshalJSONSingleTypes(t *testing.T) {
	t.Run("kind optional but must match", func(t *testing.T) {
		var tc ToolCallObservation
		require.NoError(t, json.Unmarshal([]byte(`{"invocation_id":"r","tool_call_id":"t"}`), &tc))
		require.NoError(t, json.Unmarshal([]byte(`{"kind":"tool_call","invocation_id":"r","tool_call_id":"t"}`), &tc))
		err := json.Unmarshal([]byte(`{"kind":"sandbox","invocation_id":"r","tool_call_id":"t"}`), &tc)
		require.ErrorContains(t, err, `kind: "sandbox" is not "tool_call"`)
	})
	t.Run("value unchanged on error", func(t *testing.T) {
		a := AgentInvocation{InvocationID: "keep"}
		require.Error(t, a.UnmarshalJSON([]byte(`{"invocation_id":"x","duration_ms":-1}`)))
		assert.Equal(t, "keep", a.InvocationID)
	})
	t.Run("each type decodes", func(t *testing.T) {
		var m ModelServerRef
		require.NoError(t, m.UnmarshalJSON([]byte(`{"type":"responses_api_models","name":"p","x":[]}`)))
		assert.Equal(t, ModelServerRef{Type: "responses_api_models", Name: "p"}, m)
		var g ObservationGap
		require.NoError(t, g.UnmarshalJSON([]byte(`{"code":"c","invocation_id":null,"detail":"d"}`)))
		assert.Equal(t, ObservationGap{Code: "c", Detail: Ptr("d")}, g)
		var c ContextCompactionObservation
		require.NoError(t, c.UnmarshalJSON([]byte(`{"invocation_id":"r","outcome":"aborted"}`)))
		assert.Equal(t, CompactionOutcomeAborted, c.Outcome)
		var s SandboxObservation
		require.NoError(t, s.UnmarshalJSON([]byte(`{"role":"verifier","outcome":"sandbox_error"}`)))
		assert.Equal(t, SandboxOutcomeSandboxError, s.Outcome)
		var a AgentInvocation
		require.NoError(t, a.UnmarshalJSON([]byte(`{"invocation_id":"r","status":"incomplete"}`)))
		assert.Equal(t, InvocationStatusIncomplete, a.Status)
	})
	t.Run("model_ref errors", func(t *testing.T) {
		var m ModelServerRef
		require.ErrorContains(t, m.UnmarshalJSON([]byte(`{"type":"x","name":"p"}`)), `type: "x" is not "responses_api_models"`)
		require.ErrorContains(t, m.UnmarshalJSON([]byte(`{"type":"responses_api_models","name":3}`)), "name: a JSON number")
	})
}

// FuzzDecodeBundle checks that DecodeBundle never panics and that whatever it accepts is valid,
// encodes, and decodes again to the same value and the same bytes.
func FuzzDecodeBundle(f *testing.F) {
	seeds := []string{
		`{"source":"s"}`,
		`{"source":"s","records":[{"kind":"agent_invocation","invocation_id":"root","parent_invocation_id":"p","status":"completed","duration_ms":1.5,"model_calls":[{"model_call_id":"c"},{"model_ref":{"type":"responses_api_models","name":"p"},"response_id":"r"}],"conversation":[{"type":"message","role":"user","content":"hi"}]}],"gaps":[{"code":"g"}]}`,
		`{"source":"s","records":[{"kind":"tool_call","invocation_id":"r","tool_call_id":"t","started_at":1,"completed_at":2e0,"duration_ms":1000,"timing_source":"executor","status":"timeout"}]}`,
		`{"source":"s","records":[{"kind":"context_compaction","invocation_id":"r","tokens_before":10,"tokens_after":11.0,"before_model_call":{"model_call_id":"a"},"model_calls":[{"model_call_id":"b"}],"after_model_call":null}]}`,
		`{"source":"s","records":[{"kind":"sandbox","role":"agent","exit_code":137,"wall_time_s":0.5,"cpu_time_s":0.4,"peak_memory_mib":64,"outcome":"oom"}]}`,
		`{"source":"s","records":[{"kind":"turn"}]}`,
		`{"source":"s","records":[{"kind":"agent_invocation","invocation_id":"a","parent_invocation_id":"a"}]}`,
		`{"source":"\u00e9\u2028","gaps":[{"code":"c","detail":"x\ny"}]}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := DecodeBundle(data)
		if err != nil {
			return
		}
		require.NoError(t, b.Validate())
		first, err := b.AppendJSON(nil)
		require.NoError(t, err)
		again, err := DecodeBundle(first)
		require.NoError(t, err, "re-decode %s", first)
		require.Equal(t, b, again)
		second, err := again.AppendJSON(nil)
		require.NoError(t, err)
		require.Equal(t, string(first), string(second))
	})
}
