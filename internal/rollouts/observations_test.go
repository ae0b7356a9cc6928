package rollouts

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
)

// TestAttachJoinsObservations: SPEC §5.4 — a row's ng_agent_observations is validated and joined
// with its captured calls in place; an invalid bundle is kept as it was and reported; joining an
// attached output again changes nothing (SPEC D11).
func TestAttachJoinsObservations(t *testing.T) {
	s := newStore(t)
	writeCapture(t, s, "r1", callLine("c1", usage, "2.5")+callLine("c2", usage, "1.0"))
	stores := []*capture.Store{s}
	tests := []struct {
		name       string
		line       string
		want       string // ng_agent_observations after attach
		wantJoined int
		wantErr    string
	}{
		{
			name: "ref by model_call_id resolved, other call unowned",
			line: `{"_ng_rollout_id":"r1","ng_agent_observations":{"source":"gymtrace","records":[{"kind":"agent_invocation","invocation_id":"root","model_calls":[{"model_call_id":"c1"}]}],"gaps":[]}}`,
			want: `{"source":"gymtrace","records":[{"kind":"agent_invocation","invocation_id":"root","parent_invocation_id":null,"spawned_by_tool_call_id":null,"status":"unknown","duration_ms":null,"error_type":null,` +
				`"model_calls":[{"model_call_id":"c1","model_ref":{"type":"responses_api_models","name":"policy"},"response_id":"resp-c1"}],"conversation":[]}],` +
				`"gaps":[{"code":"model_call_ownership_unavailable","invocation_id":null,"detail":"capture:c2:call_index=1"}]}`,
			wantJoined: 1,
		},
		{
			name: "ref by response id resolved",
			line: `{"_ng_rollout_id":"r1","ng_agent_observations":{"source":"gymtrace","records":[{"kind":"agent_invocation","invocation_id":"root","model_calls":[{"model_ref":{"type":"responses_api_models","name":"policy"},"response_id":"resp-c2"}]}],"gaps":[]}}`,
			want: `{"source":"gymtrace","records":[{"kind":"agent_invocation","invocation_id":"root","parent_invocation_id":null,"spawned_by_tool_call_id":null,"status":"unknown","duration_ms":null,"error_type":null,` +
				`"model_calls":[{"model_call_id":"c2","model_ref":{"type":"responses_api_models","name":"policy"},"response_id":"resp-c2"}],"conversation":[]}],` +
				`"gaps":[{"code":"model_call_ownership_unavailable","invocation_id":null,"detail":"capture:c1:call_index=0"}]}`,
			wantJoined: 1,
		},
		{
			name:    "unknown field: kept as it was, reported",
			line:    `{"_ng_rollout_id":"r1","ng_agent_observations":{"source":"gymtrace","records":[{"kind":"tool_call","invocation_id":"root","tool_call_id":"t1","output":"x"}],"gaps":[]}}`,
			want:    `{"source":"gymtrace","records":[{"kind":"tool_call","invocation_id":"root","tool_call_id":"t1","output":"x"}],"gaps":[]}`,
			wantErr: "output",
		},
		{
			name: "null left alone",
			line: `{"_ng_rollout_id":"r1","ng_agent_observations":null}`,
			want: `null`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, sum, err := attachString(t, tt.line+"\n", stores, Options{})
			require.NoError(t, err)
			assert.Equal(t, tt.want, member(t, lines(out)[0], "ng_agent_observations"))
			assert.Equal(t, tt.wantJoined, sum.ObservationsJoined)
			if tt.wantErr != "" {
				require.Len(t, sum.ObservationErrors, 1)
				assert.Equal(t, 1, sum.ObservationErrors[0].Line)
				assert.ErrorContains(t, sum.ObservationErrors[0], tt.wantErr)
			} else {
				assert.Empty(t, sum.ObservationErrors)
			}
			again, _, err := attachString(t, out, stores, Options{})
			require.NoError(t, err)
			assert.Equal(t, out, again, "attach is idempotent")
		})
	}
}
