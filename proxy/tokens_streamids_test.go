package proxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/semconv"
	"github.com/gymtrace/gymtrace/tokens"
)

// TestTokenCaptureStreamPartialIDs: a streamed vLLM answer carries vLLM's inline ids both or
// neither (docs/TOKENS.md §1.5 step 2), as a JSON one does: generated ids without the prompt ids,
// or the prompt ids without generated ids, mark the rollout incomplete with the reference's
// "partial token metadata" error (cause adapter), and the proxy asks /tokenize for nothing; only
// an answer with neither reads the log-prob ids and asks /tokenize for the prompt ids.
func TestTokenCaptureStreamPartialIDs(t *testing.T) {
	cases := []struct {
		name         string
		fromLogprobs bool
		prompt, gen  bool   // the stream carries prompt_token_ids, token_ids
		missing      string // "": captured
		tokenize     bool
	}{
		{"generated ids without prompt ids", false, false, true, "prompt_token_ids", false},
		{"prompt ids without generated ids", false, true, false, "choice.token_ids", false},
		{"log-prob mode, generated ids without prompt ids", true, false, true, "prompt_token_ids", false},
		{"both", false, true, true, "", false},
		{"log-prob mode, neither", true, false, false, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var tokenizes int
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/tokenize" {
					tokenizes++
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"count":3,"max_model_len":100,"tokens":[1,2,3]}`)
					return
				}
				var req map[string]any
				_ = json.NewDecoder(r.Body).Decode(&req)
				prompt, tokenIDs := "null", func(int) string { return "null" }
				if c.prompt {
					prompt = "[1,2,3]"
				}
				if c.gen {
					tokenIDs = func(id int) string { return fmt.Sprintf("[%d]", id) }
				}
				lp := func(id int) string {
					if req["logprobs"] != true {
						return "null"
					}
					tok := "w"
					if req["return_tokens_as_token_ids"] == true {
						tok = fmt.Sprintf("token_id:%d", id)
					}
					return fmt.Sprintf(`{"content":[{"token":%q,"logprob":-0.5,"bytes":null,"top_logprobs":[]}]}`, tok)
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"prompt_token_ids\":%s,\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null,\"token_ids\":null}]}\n\n", prompt)
				for _, id := range []int{4, 5} {
					fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"w\"},\"logprobs\":%s,\"finish_reason\":null,\"token_ids\":%s}]}\n\n", lp(id), tokenIDs(id))
				}
				io.WriteString(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\",\"token_ids\":null}]}\n\ndata: [DONE]\n\n")
			})
			dir := t.TempDir()
			env := newProxyEnv(t, up.URL, nil, WithTokenSource(TokenSourceVLLM), WithTokenDir(dir), WithVLLMTokenIDsFromLogprobs(c.fromLogprobs))
			_, _, err := env.post(t, tokenPath, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, nil)
			require.NoError(t, err)
			st, err := tokens.OpenStore(dir)
			require.NoError(t, err)
			es, err := st.ReadEntries("r1")
			require.NoError(t, err)
			incomplete, err := st.IsIncomplete("r1")
			require.NoError(t, err)
			assert.Equal(t, c.tokenize, tokenizes == 1, "/tokenize asked: %d", tokenizes)
			a := env.spanAttrs(t)
			if c.missing == "" {
				require.Len(t, es, 1, "%s", env.logs.String())
				assert.Equal(t, []int64{1, 2, 3}, es[0].PromptTokenIDs)
				assert.Equal(t, []int64{4, 5}, es[0].GenerationTokenIDs)
				assert.False(t, incomplete)
				return
			}
			assert.Empty(t, es)
			assert.True(t, incomplete)
			assert.Equal(t, semconv.TokensCauseAdapter, a[semconv.GymtraceTokensIncompleteCauseKey].AsString())
			assert.Contains(t, env.logs.String(), "vLLM response returned partial token metadata; missing: "+c.missing+".")
		})
	}
}
