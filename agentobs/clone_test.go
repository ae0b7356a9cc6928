package agentobs

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fullBundle sets every field of every type.
func fullBundle() AgentObservationBundle {
	ref := ModelCallRef{ModelCallID: Ptr("c"), ModelRef: &ModelServerRef{Type: ModelRefTypeResponsesAPIModels, Name: "p"}, ResponseID: Ptr("r")}
	return AgentObservationBundle{
		Source: "s",
		Records: []Record{
			&AgentInvocation{InvocationID: "root", ParentInvocationID: Ptr("p"), SpawnedByToolCallID: Ptr("t"), Status: InvocationStatusCompleted,
				DurationMS: Ptr(1.0), ErrorType: Ptr("e"), ModelCalls: []ModelCallRef{ref}, Conversation: []json.RawMessage{json.RawMessage(`{"a":"b"}`)}},
			&ToolCallObservation{InvocationID: "root", ToolCallID: "t", SandboxID: Ptr("sb"), ToolName: Ptr("n"), StartedAt: Ptr(1.0),
				CompletedAt: Ptr(2.0), DurationMS: Ptr(1000.0), TimingSource: Ptr(TimingSourceHarness), Status: ToolCallStatusCompleted, ErrorType: Ptr("e")},
			&ContextCompactionObservation{InvocationID: "root", ObservedAt: Ptr(1.0), Trigger: Ptr("auto"), TokensBefore: Ptr(2), TokensAfter: Ptr(1),
				Outcome: CompactionOutcomeFailed, Summary: Ptr("s"), FirstKeptItemID: Ptr("i"), BeforeModelCall: Ptr(ref), ModelCalls: []ModelCallRef{ref}, AfterModelCall: Ptr(ref)},
			&SandboxObservation{Role: SandboxRoleAgent, Provider: Ptr("local"), SandboxID: Ptr("sb"), Outcome: SandboxOutcomeCompleted, ExitCode: Ptr(0),
				WallTimeS: Ptr(1.0), CPUTimeS: Ptr(1.0), PeakMemoryMiB: Ptr(1.0), ResourceUsageSource: Ptr("rusage"), ErrorType: Ptr("e")},
		},
		Gaps: []ObservationGap{{Code: "g", InvocationID: Ptr("root"), Detail: Ptr("d")}},
	}
}

// mutate changes every string, number and byte reachable from v through pointers, slices and
// interfaces.
func mutate(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			mutate(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			mutate(v.Field(i))
		}
	case reflect.Slice:
		for i := range v.Len() {
			mutate(v.Index(i))
		}
	case reflect.String:
		v.SetString(v.String() + "!")
	case reflect.Float64:
		v.SetFloat(v.Float() + 1)
	case reflect.Int:
		v.SetInt(v.Int() + 1)
	case reflect.Uint8:
		v.SetUint(v.Uint() + 1)
	}
}

func TestCloneIsDeep(t *testing.T) {
	orig := fullBundle()
	require.NoError(t, orig.Validate())
	want := encode(t, orig)
	c := orig.Clone()
	assert.Equal(t, orig, c)
	mutate(reflect.ValueOf(&c))
	assert.NotEqual(t, orig, c)
	assert.Equal(t, want, encode(t, orig), "mutating the clone changed the original")

	t.Run("nil lists stay nil, nil records stay nil", func(t *testing.T) {
		c := AgentObservationBundle{Source: "s", Records: []Record{nil, (*AgentInvocation)(nil)}}.Clone()
		assert.Nil(t, c.Gaps)
		assert.Nil(t, c.Records[0])
		assert.Equal(t, (*AgentInvocation)(nil), c.Records[1])
	})
}

func TestRecordKinds(t *testing.T) {
	kinds := map[string]Record{
		KindAgentInvocation:   &AgentInvocation{},
		KindToolCall:          &ToolCallObservation{},
		KindContextCompaction: &ContextCompactionObservation{},
		KindSandbox:           &SandboxObservation{Role: SandboxRoleAgent},
	}
	for kind, r := range kinds {
		t.Run(kind, func(t *testing.T) {
			assert.Equal(t, kind, r.Kind())
			out, err := r.MarshalJSON()
			require.NoError(t, err)
			assert.Contains(t, string(out), `{"kind":"`+kind+`"`)
			// The dump decodes back through the bundle's kind dispatch.
			b := mustDecode(t, `{"source":"s","records":[`+string(out)+`]}`)
			assert.Equal(t, kind, b.Records[0].Kind())
		})
	}
}
