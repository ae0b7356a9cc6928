package agentobs

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendJSONFieldOrderAndDefaults(t *testing.T) {
	tests := []struct {
		name   string
		record Record
		want   string
	}{
		{
			name:   "invocation defaults",
			record: &AgentInvocation{InvocationID: "root"},
			want:   `{"kind":"agent_invocation","invocation_id":"root","parent_invocation_id":null,"spawned_by_tool_call_id":null,"status":"unknown","duration_ms":null,"error_type":null,"model_calls":[],"conversation":[]}`,
		},
		{
			name: "invocation full",
			record: &AgentInvocation{
				InvocationID: "child", ParentInvocationID: Ptr("root"), SpawnedByToolCallID: Ptr("tool-1"),
				Status: InvocationStatusFailed, DurationMS: Ptr(5000.0), ErrorType: Ptr("agent_error"),
				ModelCalls:   []ModelCallRef{refByID("c1"), refByResponse("resp-1")},
				Conversation: []json.RawMessage{json.RawMessage(`{ "content": "hi <b>", "role": "user", "type": "message" }`)},
			},
			want: `{"kind":"agent_invocation","invocation_id":"child","parent_invocation_id":"root","spawned_by_tool_call_id":"tool-1","status":"failed","duration_ms":5000.0,"error_type":"agent_error","model_calls":[{"model_call_id":"c1","model_ref":null,"response_id":null},{"model_call_id":null,"model_ref":{"type":"responses_api_models","name":"policy"},"response_id":"resp-1"}],"conversation":[{"content":"hi <b>","role":"user","type":"message"}]}`,
		},
		{
			name: "tool call",
			record: &ToolCallObservation{
				InvocationID: "root", ToolCallID: "t1", SandboxID: Ptr("sb"), ToolName: Ptr("bash"),
				StartedAt: Ptr(100.0), CompletedAt: Ptr(100.25), DurationMS: Ptr(250.0),
				TimingSource: Ptr(TimingSourceExecutor), Status: ToolCallStatusTimeout,
			},
			want: `{"kind":"tool_call","invocation_id":"root","tool_call_id":"t1","sandbox_id":"sb","tool_name":"bash","started_at":100.0,"completed_at":100.25,"duration_ms":250.0,"timing_source":"executor","status":"timeout","error_type":null}`,
		},
		{
			name:   "tool call defaults",
			record: &ToolCallObservation{InvocationID: "root", ToolCallID: "t1"},
			want:   `{"kind":"tool_call","invocation_id":"root","tool_call_id":"t1","sandbox_id":null,"tool_name":null,"started_at":null,"completed_at":null,"duration_ms":null,"timing_source":null,"status":"unknown","error_type":null}`,
		},
		{
			name: "compaction",
			record: &ContextCompactionObservation{
				InvocationID: "root", ObservedAt: Ptr(1784714401.0), Trigger: Ptr("auto"),
				TokensBefore: Ptr(1000), TokensAfter: Ptr(200), Outcome: CompactionOutcomeCompleted,
				Summary: Ptr("summary"), BeforeModelCall: Ptr(refByResponse("before")),
				ModelCalls: []ModelCallRef{refByID("c")}, AfterModelCall: Ptr(refByResponse("after")),
			},
			want: `{"kind":"context_compaction","invocation_id":"root","observed_at":1784714401.0,"trigger":"auto","tokens_before":1000,"tokens_after":200,"outcome":"completed","summary":"summary","first_kept_item_id":null,"before_model_call":{"model_call_id":null,"model_ref":{"type":"responses_api_models","name":"policy"},"response_id":"before"},"model_calls":[{"model_call_id":"c","model_ref":null,"response_id":null}],"after_model_call":{"model_call_id":null,"model_ref":{"type":"responses_api_models","name":"policy"},"response_id":"after"}}`,
		},
		{
			name:   "compaction defaults",
			record: &ContextCompactionObservation{InvocationID: "root"},
			want:   `{"kind":"context_compaction","invocation_id":"root","observed_at":null,"trigger":null,"tokens_before":null,"tokens_after":null,"outcome":"unknown","summary":null,"first_kept_item_id":null,"before_model_call":null,"model_calls":[],"after_model_call":null}`,
		},
		{
			name: "sandbox with python float forms",
			record: &SandboxObservation{
				Role: SandboxRoleAgent, Provider: Ptr("local"), SandboxID: Ptr("sb-1"), Outcome: SandboxOutcomeOOM,
				ExitCode: Ptr(-9), WallTimeS: Ptr(0.00001), CPUTimeS: Ptr(1e16), PeakMemoryMiB: Ptr(64.0),
				ResourceUsageSource: Ptr("rusage"),
			},
			want: `{"kind":"sandbox","role":"agent","provider":"local","sandbox_id":"sb-1","outcome":"oom","exit_code":-9,"wall_time_s":0.00001,"cpu_time_s":1e16,"peak_memory_mib":64.0,"resource_usage_source":"rusage","error_type":null}`,
		},
		{
			name:   "sandbox defaults",
			record: &SandboxObservation{Role: SandboxRoleVerifier},
			want:   `{"kind":"sandbox","role":"verifier","provider":null,"sandbox_id":null,"outcome":"unknown","exit_code":null,"wall_time_s":null,"cpu_time_s":null,"peak_memory_mib":null,"resource_usage_source":null,"error_type":null}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.record.MarshalJSON()
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			// In a bundle the record is written the same way.
			b := AgentObservationBundle{Source: "s", Records: []Record{tt.record}}
			assert.Equal(t, `{"source":"s","records":[`+tt.want+`],"gaps":[]}`, encode(t, b))
		})
	}
}

func TestBundleAppendJSON(t *testing.T) {
	t.Run("empty bundle writes empty lists", func(t *testing.T) {
		assert.Equal(t, `{"source":"gymtrace","records":[],"gaps":[]}`, encode(t, AgentObservationBundle{Source: "gymtrace"}))
	})
	t.Run("gaps keep null keys and write strings like orjson", func(t *testing.T) {
		b := AgentObservationBundle{Source: "s", Gaps: []ObservationGap{
			{Code: GapModelCallOwnershipUnavailable},
			{Code: "x", InvocationID: Ptr("root"), Detail: Ptr("é\u2028<&>\n")},
		}}
		assert.Equal(t, `{"source":"s","records":[],"gaps":[{"code":"model_call_ownership_unavailable","invocation_id":null,"detail":null},{"code":"x","invocation_id":"root","detail":"é`+"\u2028"+`<&>\n"}]}`, encode(t, b))
	})
	t.Run("appends to dst", func(t *testing.T) {
		out, err := AgentObservationBundle{Source: "s"}.AppendJSON([]byte("prefix:"))
		require.NoError(t, err)
		assert.Equal(t, `prefix:{"source":"s","records":[],"gaps":[]}`, string(out))
	})
	t.Run("nil record fails and leaves dst", func(t *testing.T) {
		out, err := AgentObservationBundle{Source: "s", Records: []Record{nil}}.AppendJSON([]byte("x"))
		require.ErrorContains(t, err, "records[0]")
		assert.Equal(t, "x", string(out))
		_, err = AgentObservationBundle{Source: "s", Records: []Record{(*SandboxObservation)(nil)}}.AppendJSON(nil)
		require.ErrorContains(t, err, "nil record")
	})
	t.Run("invalid conversation item fails", func(t *testing.T) {
		for _, item := range []string{`{"a":`, `[1]`, `"text"`} {
			b := AgentObservationBundle{Source: "s", Records: []Record{&AgentInvocation{InvocationID: "r", Conversation: []json.RawMessage{json.RawMessage(item)}}}}
			_, err := b.AppendJSON(nil)
			require.ErrorContains(t, err, "conversation[0]", "item %s", item)
		}
	})
	t.Run("encoding/json uses MarshalJSON", func(t *testing.T) {
		out, err := json.Marshal(AgentObservationBundle{Source: "s", Records: []Record{&SandboxObservation{Role: SandboxRoleAgent, WallTimeS: Ptr(2.0)}}})
		require.NoError(t, err)
		assert.Contains(t, string(out), `"wall_time_s":2.0`)
	})
	t.Run("non-finite floats are written as null", func(t *testing.T) {
		got, err := SandboxObservation{Role: SandboxRoleAgent, WallTimeS: Ptr(math.Inf(1))}.MarshalJSON()
		require.NoError(t, err)
		assert.Contains(t, string(got), `"wall_time_s":null`)
	})
}

func TestSmallTypesMarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		v    json.Marshaler
		want string
	}{
		{"model server ref", ModelServerRef{Type: "responses_api_models", Name: "p"}, `{"type":"responses_api_models","name":"p"}`},
		{"ref nulls", ModelCallRef{}, `{"model_call_id":null,"model_ref":null,"response_id":null}`},
		{"gap", ObservationGap{Code: "c", Detail: Ptr("d")}, `{"code":"c","invocation_id":null,"detail":"d"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.v.MarshalJSON()
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
}
