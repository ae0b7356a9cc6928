package proxy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/sdk/stream"
)

// TestStreamFactsMatchEncodedResponse: the facts a stream's reassembly gives (the handler's path)
// make exactly the span attributes that walking the encoded reassembled response makes, for every
// SSE body of the reassembly vectors and the conformance cases.
func TestStreamFactsMatchEncodedResponse(t *testing.T) {
	type body struct{ name, dialect, sse string }
	var bodies []body
	for _, tc := range testvectors.Load(t, "reassembly.json") {
		var in struct {
			Dialect string `json:"dialect"`
			SSE     string `json:"sse"`
		}
		require.NoError(t, json.Unmarshal(tc.Input, &in))
		bodies = append(bodies, body{tc.Name, in.Dialect, in.SSE})
	}
	for _, dir := range testvectors.ConformanceCases(t) {
		sse, err := os.ReadFile(filepath.Join(dir, "upstream.sse"))
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		exp, err := os.ReadFile(filepath.Join(dir, "expected.json"))
		require.NoError(t, err)
		var c struct {
			Dialect string `json:"dialect"`
		}
		require.NoError(t, json.Unmarshal(exp, &c))
		bodies = append(bodies, body{filepath.Base(dir), c.Dialect, string(sse)})
	}
	require.Greater(t, len(bodies), 40)
	withResponse := 0
	for _, b := range bodies {
		sc, err := stream.NewCapture(b.dialect)
		require.NoError(t, err, b.name)
		sc.Feed([]byte(b.sse))
		sc.Close(true)
		obj, f, ok := sc.ResponseWithFacts()
		if !ok {
			continue
		}
		withResponse++
		plain, _ := sc.Response()
		require.Equal(t, string(plain), string(obj), b.name)
		for _, content := range []bool{false, true} {
			e := capture.Exchange{ModelCallID: "id", Dialect: b.dialect, Response: obj}
			var facts capture.PayloadFacts
			facts.SetStreamResponse(obj, capture.ResponseFacts(f))
			want := capture.ExchangeAttributes(&e, capture.WithMessageContent(content))
			got := capture.ExchangeAttributes(&e, capture.WithMessageContent(content), capture.WithPayloadFacts(&facts))
			assert.Equal(t, want, got, "%s (message content %v)", b.name, content)
		}
	}
	assert.Greater(t, withResponse, 40)
}
