package proxy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTokenCaptureRequestJSONLoadsReads: a request that strict JSON refuses but json.loads reads
// (an integer beyond 64 bits, a float out of range) is token-captured as the reference
// captures it: the members are injected (or a null one set) in its text, every byte of the
// client's own members kept, and the entry is written (a fresh-user trial's such requests got no
// injection and a misleading "no token ids" mark).
func TestTokenCaptureRequestJSONLoadsReads(t *testing.T) {
	for _, tt := range []struct {
		name, body, keep string
	}{
		{"integer beyond 64 bits", `{"model":"m","messages":[{"role":"user","content":"hi"}],"seed":123456789012345678901234567890}`, `"seed":123456789012345678901234567890`},
		{"float out of range", `{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":1e999}`, `"temperature":1e999`},
		{"a null member set in place", `{"model":"m","top_logprobs":null,"messages":[{"role":"user","content":"hi"}],"seed":-123456789012345678901234567890}`, `"seed":-123456789012345678901234567890`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeVLLM{inline: true}
			env, _, st := tokenEnv(t, f, TokenSourceVLLM)
			resp, _, err := env.post(t, tokenPath, tt.body, nil)
			require.NoError(t, err)
			require.Equal(t, 200, resp.StatusCode)
			require.Len(t, f.bodies, 1)
			sent := f.bodies[0]
			assert.Contains(t, sent, tt.keep, "the client's member as sent")
			assert.Contains(t, sent, `"logprobs":true`)
			assert.Contains(t, sent, `"top_logprobs":0`)
			assert.Contains(t, sent, `"return_token_ids":true`)
			assert.NotContains(t, sent, `"top_logprobs":null`)
			es, err := st.ReadEntries("r1")
			require.NoError(t, err)
			require.Len(t, es, 1)
			assert.Equal(t, []int64{31, 32, 33}, es[0].GenerationTokenIDs)
			snap, err := st.Freeze("r1")
			require.NoError(t, err)
			assert.False(t, snap.Incomplete)
		})
	}
}
