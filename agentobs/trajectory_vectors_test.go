package agentobs

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/ojson"
)

// trajectoryVector is the expected side of a trajectory.json case (its "note" explains the groups).
type trajectoryVector struct {
	Dump         json.RawMessage `json:"dump"`
	NgTrajectory json.RawMessage `json:"ng_trajectory"`
	Result       json.RawMessage `json:"result"`
	Export       json.RawMessage `json:"export"`
	Line         *string         `json:"line"`
	Error        string          `json:"error"`
	Message      string          `json:"message"`
	Errors       []struct {
		Type string `json:"type"`
		Msg  string `json:"msg"`
	} `json:"errors"`
}

// normativeMessages are the model-validator messages the vectors' note calls normative.
var normativeMessages = []string{"must be unique", "turn identity", "completed_at must not precede started_at", "Token metadata"}

// checkError compares a failure with the vector: the exception class, the message of a KeyError
// or TypeError, and every normative model-validator message.
func checkError(t *testing.T, want trajectoryVector, err error) {
	t.Helper()
	require.Error(t, err)
	var pe *ProjectionError
	if errors.As(err, &pe) {
		assert.Equal(t, want.Error, pe.Class)
		if want.Message != "" && (pe.Class == ClassKeyError || pe.Class == ClassTypeError) {
			assert.Equal(t, want.Message, pe.Err.Error())
		}
	} else {
		assert.Equal(t, ClassValidationError, want.Error)
	}
	for _, e := range want.Errors {
		for _, m := range normativeMessages {
			if strings.Contains(e.Msg, m) {
				assert.Contains(t, err.Error(), strings.TrimPrefix(e.Msg, "Value error, "))
			}
		}
	}
}

func TestTrajectoryVectors(t *testing.T) {
	counts := map[byte]int{}
	for _, c := range testvectors.Load(t, "trajectory.json") {
		group := c.Name[0]
		if group == 'C' {
			continue // the whole collector run: cmd/gymtrace/internal/rollouts
		}
		t.Run(c.Name, func(t *testing.T) {
			var in struct {
				Value            json.RawMessage `json:"value"`
				Row              json.RawMessage `json:"row"`
				Result           json.RawMessage `json:"result"`
				InjectBuildError string          `json:"inject_build_error"`
			}
			require.NoError(t, json.Unmarshal(c.Input, &in))
			var want trajectoryVector
			require.NoError(t, json.Unmarshal(c.Expected, &want))
			switch group {
			case 'M':
				got, err := validateTrajectory(laxTrajectory(testvectors.Value(t, in.Value)))
				if want.Dump == nil {
					checkError(t, want, err)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, testvectors.Canonical(t, want.Dump), got.String())
			case 'P':
				got, err := ProjectTrajectory(testvectors.Value(t, in.Row), testvectors.Value(t, in.Result))
				if want.NgTrajectory == nil {
					checkError(t, want, err)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, testvectors.Canonical(t, want.NgTrajectory), got.String())
			case 'A', 'R':
				result := testvectors.Value(t, in.Result)
				project := ProjectTrajectory
				if in.InjectBuildError != "" {
					project = func(ojson.Value, ojson.Value) (ojson.Value, error) {
						return ojson.Value{}, projErr(in.InjectBuildError, "injected")
					}
				}
				_ = attachTrajectory(testvectors.Value(t, in.Row), &result, project)
				assert.Equal(t, testvectors.Canonical(t, want.Result), result.String())
				require.NotNil(t, want.Line)
				assert.Equal(t, *want.Line, result.String())
			case 'X':
				got := RolloutForExport(testvectors.Value(t, in.Result))
				assert.Equal(t, testvectors.Canonical(t, want.Export), got.String())
				require.NotNil(t, want.Line)
				assert.Equal(t, *want.Line, got.String())
			default:
				t.Fatalf("unknown group %c", group)
			}
		})
		counts[group]++
	}
	assert.Equal(t, map[byte]int{'M': 28, 'P': 51, 'A': 11, 'X': 4, 'R': 3}, counts)
}

// TestProjectTrajectoryInvalidObservedConversation: an observed invocation whose conversation item
// fits no Responses item type makes the bundle invalid (agent_observations_invalid), as Gym's
// bundle validation does, instead of failing the whole projection.
func TestProjectTrajectoryInvalidObservedConversation(t *testing.T) {
	row := testvectors.Value(t, []byte(`{"_ng_task_index":0,"_ng_rollout_index":0}`))
	result := testvectors.Value(t, []byte(`{"ng_agent_observations":{"source":"harness","records":[`+
		`{"kind":"agent_invocation","invocation_id":"root","conversation":[{"type":"turn","text":"x"}]}],"gaps":[]}}`))
	got, err := ProjectTrajectory(row, result)
	require.NoError(t, err)
	assert.Equal(t, `{"schema_version":"1.0","task_id":"0","rollout_id":"0-0","invocations":[],"turns":[],"model_calls":[],"tool_calls":[],"gaps":[`+
		`{"code":"agent_observations_invalid","invocation_id":null,"detail":"ValidationError"},`+
		`{"code":"model_calls_unavailable","invocation_id":null,"detail":null},`+
		`{"code":"turns_unavailable","invocation_id":null,"detail":null},`+
		`{"code":"conversation_unavailable","invocation_id":null,"detail":null}]}`, got.String())
}
