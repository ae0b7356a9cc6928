package agentobs

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
)

// policy is the model server most test references name.
var policy = &ModelServerRef{Type: ModelRefTypeResponsesAPIModels, Name: "policy"}

// optStr returns nil for "" and a pointer otherwise (test inputs use "" for null).
func optStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// refByID is a reference by model_call_id only.
func refByID(id string) ModelCallRef { return ModelCallRef{ModelCallID: Ptr(id)} }

// refByResponse is a reference by (policy, response id).
func refByResponse(responseID string) ModelCallRef {
	return ModelCallRef{ModelRef: &ModelServerRef{Type: policy.Type, Name: policy.Name}, ResponseID: Ptr(responseID)}
}

// call builds a captured call; "" means null, modelRef "" means no model_ref.
func call(id, responseID, modelRef string, index int) capture.ModelCallRecord {
	c := capture.ModelCallRecord{ModelCallID: optStr(id), ResponseID: optStr(responseID), CallIndex: index}
	if modelRef != "" {
		c.ModelRef = &capture.ModelRef{Type: ModelRefTypeResponsesAPIModels, Name: modelRef}
	}
	return c
}

// encode dumps b and fails the test on error.
func encode(t testing.TB, b AgentObservationBundle) string {
	t.Helper()
	out, err := b.AppendJSON(nil)
	require.NoError(t, err)
	return string(out)
}

// mustDecode decodes a bundle and fails the test on error.
func mustDecode(t testing.TB, s string) AgentObservationBundle {
	t.Helper()
	b, err := DecodeBundle([]byte(s))
	require.NoError(t, err, "decode %s", s)
	return b
}

// gapTriples lists the gaps as (code, invocation_id, detail) with null written as "<nil>".
func gapTriples(gaps []ObservationGap) [][3]string {
	out := make([][3]string, 0, len(gaps))
	for _, g := range gaps {
		out = append(out, [3]string{g.Code, nilStr(g.InvocationID), nilStr(g.Detail)})
	}
	return out
}

func nilStr(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
