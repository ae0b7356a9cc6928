package proxy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/sdk/stream"
)

// TestTokenAdapterNullMembers: a member the client sets to null is one its request lacks
// (docs/TOKENS.md §1.5 step 3: a null top_logprobs is removed after step 2 set it to 0): the proxy
// sets it in place, once, and restores the log probs its value caused; vLLM sends a client whose
// own request says logprobs: true with top_logprobs: null no log probs, SGLang reads that null as 0.
func TestTokenAdapterNullMembers(t *testing.T) {
	cases := []struct {
		name         string
		src          TokenSource
		fromLogprobs bool
		body         string
		sent         string // the request as forwarded
		choiceNull   []string
		refused      bool
	}{
		{"vllm top_logprobs null", TokenSourceVLLM, false,
			`{"model":"m","top_logprobs":null}`,
			`{"model":"m","top_logprobs":0,"logprobs":true,"return_token_ids":true}`, []string{"logprobs", "token_ids"}, false},
		{"vllm every member null", TokenSourceVLLM, false,
			`{"logprobs":null,"top_logprobs":null,"return_token_ids":null,"model":"m"}`,
			`{"logprobs":true,"top_logprobs":0,"return_token_ids":true,"model":"m"}`, []string{"logprobs", "token_ids"}, false},
		{"vllm client logprobs, top_logprobs null", TokenSourceVLLM, false,
			`{"model":"m","logprobs":true,"top_logprobs":null}`,
			`{"model":"m","logprobs":true,"top_logprobs":0,"return_token_ids":true}`, []string{"logprobs", "token_ids"}, false},
		{"vllm client logprobs, top_logprobs 0", TokenSourceVLLM, false,
			`{"model":"m","logprobs":true,"top_logprobs":0}`,
			`{"model":"m","logprobs":true,"top_logprobs":0,"return_token_ids":true}`, []string{"token_ids"}, false},
		{"vllm duplicate top_logprobs, the last null", TokenSourceVLLM, false,
			`{"model":"m","top_logprobs":3,"top_logprobs":null}`,
			`{"model":"m","top_logprobs":3,"top_logprobs":0,"logprobs":true,"return_token_ids":true}`, []string{"logprobs", "token_ids"}, false},
		{"vllm log-prob mode, client logprobs, top_logprobs null", TokenSourceVLLM, true,
			`{"model":"m","logprobs":true,"top_logprobs":null}`,
			`{"model":"m","logprobs":true,"top_logprobs":0,"return_tokens_as_token_ids":true}`, []string{"logprobs"}, false},
		{"vllm log-prob mode, client logprobs", TokenSourceVLLM, true,
			`{"model":"m","logprobs":true}`, "", nil, true},
		{"sglang top_logprobs null", TokenSourceSGLang, false,
			`{"model":"m","top_logprobs":null}`,
			`{"model":"m","top_logprobs":0,"logprobs":true,"return_token_ids":true,"return_prompt_token_ids":true}`, []string{"logprobs"}, false},
		{"sglang client logprobs, top_logprobs null", TokenSourceSGLang, false,
			`{"model":"m","logprobs":true,"top_logprobs":null}`,
			`{"model":"m","logprobs":true,"top_logprobs":0,"return_token_ids":true,"return_prompt_token_ids":true}`, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := ojson.Parse([]byte(c.body))
			require.NoError(t, err)
			a := newAdapterCall(c.src, c.fromLogprobs, stream.DialectChat, req)
			require.NotNil(t, a)
			if c.refused {
				assert.NotEmpty(t, a.refuse)
				return
			}
			require.Empty(t, a.refuse)
			assert.Equal(t, c.sent, string(a.requestBody([]byte(c.body))))
			assert.ElementsMatch(t, c.choiceNull, a.restore.choiceNull)
		})
	}
}

// TestTokenCaptureNullTopLogprobs: through the proxy, a request with "top_logprobs": null is
// captured, the upstream gets top_logprobs 0 once, and the client gets exactly what the upstream
// sends for the client's own request (docs/TOKENS.md §0 T2, §1.5 step 3).
func TestTokenCaptureNullTopLogprobs(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	cases := []struct {
		name         string
		src          TokenSource
		fromLogprobs bool
		body         string
	}{
		{"vllm json", TokenSourceVLLM, false, `{"model":"m","top_logprobs":null,` + msgs + `}`},
		{"vllm sse", TokenSourceVLLM, false, `{"model":"m","stream":true,"top_logprobs":null,` + msgs + `}`},
		{"vllm json client logprobs", TokenSourceVLLM, false, `{"model":"m","logprobs":true,"top_logprobs":null,` + msgs + `}`},
		{"vllm sse client logprobs", TokenSourceVLLM, false, `{"model":"m","stream":true,"logprobs":true,"top_logprobs":null,` + msgs + `}`},
		{"vllm log-prob mode client logprobs", TokenSourceVLLM, true, `{"model":"m","logprobs":true,"top_logprobs":null,` + msgs + `}`},
		{"vllm every member null", TokenSourceVLLM, false, `{"model":"m","logprobs":null,"top_logprobs":null,"return_token_ids":null,` + msgs + `}`},
		{"sglang json", TokenSourceSGLang, false, `{"model":"m","top_logprobs":null,` + msgs + `}`},
		{"sglang json client logprobs", TokenSourceSGLang, false, `{"model":"m","logprobs":true,"top_logprobs":null,` + msgs + `}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeVLLM{inline: !c.fromLogprobs, sglang: c.src == TokenSourceSGLang}
			env, up, st := tokenEnv(t, f, c.src, WithVLLMTokenIDsFromLogprobs(c.fromLogprobs))
			want := direct(t, up, c.body)
			resp, got, err := env.post(t, tokenPath, c.body, nil)
			require.NoError(t, err)
			require.Equal(t, 200, resp.StatusCode)
			assert.Equal(t, string(want), string(got), "the client gets the upstream's answer to its own request")
			sent := f.bodies[len(f.bodies)-1]
			for _, k := range []string{`"top_logprobs"`, `"logprobs"`} {
				assert.Equal(t, 1, strings.Count(sent, k), "%s sent once: %s", k, sent)
			}
			assert.EqualValues(t, 0, f.requests[len(f.requests)-1]["top_logprobs"])
			es, err := st.ReadEntries("r1")
			require.NoError(t, err)
			require.Len(t, es, 1, "the call is captured: %s", env.logs.String())
			assert.Equal(t, []int64{101, 7, 8, 9}, es[0].PromptTokenIDs)
			assert.Equal(t, []int64{31, 32, 33}, es[0].GenerationTokenIDs)
			assert.Equal(t, []float64{-0.5, -0.25, -0.125}, es[0].GenerationLogProbs)
			incomplete, err := st.IsIncomplete("r1")
			require.NoError(t, err)
			assert.False(t, incomplete)
		})
	}
}
