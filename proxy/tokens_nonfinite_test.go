package proxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/semconv"
	"github.com/gymtrace/gymtrace/tokens"
)

// pythonVLLM answers like vLLM serialized by Python's json.dumps (", " and ": " separators, NaN
// and ±Infinity written as literals, integers of any size as digits): prompt and gen are the
// texts of the id lists (sent only when return_token_ids is asked), lps those of the log probs
// (sent only when log probs are asked), extra more top-level members. stream answers in chunks, one
// generated token each.
func pythonVLLM(prompt string, gen, lps []string, extra string, stream bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &req)
		ids := req["return_token_ids"] == true
		logprobs := req["logprobs"] == true
		lp := func(i int) string {
			return fmt.Sprintf(`{"token": "w", "logprob": %s, "bytes": null, "top_logprobs": []}`, lps[i])
		}
		if stream {
			w.Header().Set("Content-Type", "text/event-stream")
			p := "null"
			if ids {
				p = prompt
			}
			fmt.Fprintf(w, "data: {\"id\": \"c\", \"object\": \"chat.completion.chunk\", \"model\": \"m\", \"prompt_token_ids\": %s, \"choices\": [{\"index\": 0, \"delta\": {\"role\": \"assistant\", \"content\": \"\"}, \"logprobs\": null, \"finish_reason\": null, \"token_ids\": null}]}\n\n", p)
			for i := range gen {
				l, t := "null", "null"
				if logprobs {
					l = `{"content": [` + lp(i) + `]}`
				}
				if ids {
					t = "[" + gen[i] + "]"
				}
				fmt.Fprintf(w, "data: {\"id\": \"c\", \"object\": \"chat.completion.chunk\", \"model\": \"m\", \"choices\": [{\"index\": 0, \"delta\": {\"content\": \"w\"}, \"logprobs\": %s, \"finish_reason\": null, \"token_ids\": %s}]}\n\n", l, t)
			}
			io.WriteString(w, "data: {\"id\": \"c\", \"object\": \"chat.completion.chunk\", \"model\": \"m\", \"choices\": [{\"index\": 0, \"delta\": {}, \"logprobs\": null, \"finish_reason\": \"stop\", \"token_ids\": null}]}\n\ndata: [DONE]\n\n")
			return
		}
		l, p, t := "null", "null", "null"
		if logprobs {
			var es []string
			for i := range lps {
				es = append(es, lp(i))
			}
			l = `{"content": [` + strings.Join(es, ", ") + `]}`
		}
		if ids {
			p, t = prompt, "["+strings.Join(gen, ", ")+"]"
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id": "c", "object": "chat.completion", "model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": "NaN -Infinity"}, "logprobs": %s, "finish_reason": "stop", "token_ids": %s}], "prompt_token_ids": %s%s}`, l, t, p, extra)
	}
}

// TestTokenCaptureNonFiniteAndWideValues: an answer that Python's json.dumps wrote with NaN or
// ±Infinity log probs, or with an id int64 cannot hold, is a JSON object as json.loads reads it.
// The client gets exactly the upstream's answer to its own request, the injected members restored
// (docs/TOKENS.md §0 T2), and the rollout is marked incomplete with the rule the value breaks (T7:
// cause build; a non-finite log prob is never written, an id beyond 64 bits is the reference's
// "Integer exceeds 64-bit range", one in [2^63, 2^64) names the field and the value). A
// non-finite float elsewhere in the answer does not stop the capture.
func TestTokenCaptureNonFiniteAndWideValues(t *testing.T) {
	cases := []struct {
		name   string
		prompt string
		gen    []string
		lps    []string
		extra  string
		stream bool
		reason string // "": captured
	}{
		{"NaN log prob", "[1, 2, 3]", []string{"4", "5"}, []string{"NaN", "-0.2"}, "", false, "generation_log_probs[0] is nan: gymtrace never writes a non-finite log prob"},
		{"-Infinity log prob", "[1, 2, 3]", []string{"4", "5"}, []string{"-0.1", "-Infinity"}, "", false, "generation_log_probs[1] is -inf: gymtrace never writes a non-finite log prob"},
		{"Infinity log prob", "[1, 2, 3]", []string{"4", "5"}, []string{"Infinity", "-0.2"}, "", false, "generation_log_probs[0] is inf"},
		{"prompt id 2^70", "[1180591620717411303424, 2, 3]", []string{"4", "5"}, []string{"-0.1", "-0.2"}, "", false, "Integer exceeds 64-bit range (prompt_token_ids[0] is 1180591620717411303424"},
		{"generated id -2^70", "[1, 2, 3]", []string{"4", "-1180591620717411303424"}, []string{"-0.1", "-0.2"}, "", false, "Integer exceeds 64-bit range (choice.token_ids[1] is -1180591620717411303424"},
		{"prompt id 2^63+5", "[9223372036854775813, 2, 3]", []string{"4", "5"}, []string{"-0.1", "-0.2"}, "", false, "prompt_token_ids[0] is 9223372036854775813, outside the signed 64-bit range"},
		{"NaN and 2^70 together", "[1180591620717411303424, 2, 3]", []string{"4", "5"}, []string{"NaN", "-0.2"}, "", false, "Integer exceeds 64-bit range"},
		{"NaN outside the token members", "[1, 2, 3]", []string{"4", "5"}, []string{"-0.1", "-0.2"}, `, "usage": {"prompt_tokens": 3, "score": NaN, "big": 1180591620717411303424}`, false, ""},
		{"stream NaN log prob", "[1, 2, 3]", []string{"4", "5"}, []string{"-0.1", "NaN"}, "", true, "generation_log_probs[1] is nan"},
		{"stream -Infinity log prob", "[1, 2, 3]", []string{"4", "5"}, []string{"-Infinity", "-0.2"}, "", true, "generation_log_probs[0] is -inf"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			up := newUpstream(t, pythonVLLM(c.prompt, c.gen, c.lps, c.extra, c.stream))
			dir := t.TempDir()
			env := newProxyEnv(t, up.URL, nil, WithTokenSource(TokenSourceVLLM), WithTokenDir(dir))
			body := fmt.Sprintf(`{"model":"m","stream":%v,"messages":[{"role":"user","content":"hi"}]}`, c.stream)
			want := direct(t, up.URL, body)
			resp, got, err := env.post(t, tokenPath, body, nil)
			require.NoError(t, err)
			require.Equal(t, 200, resp.StatusCode)
			assert.Equal(t, string(want), string(got), "the client gets the upstream's answer to its own request")
			if !c.stream {
				assert.Equal(t, fmt.Sprint(len(want)), resp.Header.Get("Content-Length"))
			}
			logs := env.logs.String()
			assert.NotContains(t, logs, "could not be restored")
			st, err := tokens.OpenStore(dir)
			require.NoError(t, err)
			es, err := st.ReadEntries("r1")
			require.NoError(t, err)
			incomplete, err := st.IsIncomplete("r1")
			require.NoError(t, err)
			a := env.spanAttrs(t)
			if c.reason == "" {
				require.Len(t, es, 1, "%s", logs)
				assert.Equal(t, []int64{1, 2, 3}, es[0].PromptTokenIDs)
				assert.Equal(t, []int64{4, 5}, es[0].GenerationTokenIDs)
				assert.False(t, incomplete)
				return
			}
			assert.Empty(t, es)
			assert.True(t, incomplete)
			assert.Equal(t, semconv.TokensCauseBuild, a[semconv.GymtraceTokensIncompleteCauseKey].AsString(), "%s", logs)
			assert.Contains(t, logs, c.reason)
		})
	}
}
