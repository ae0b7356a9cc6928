package proxy

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
	"github.com/gymtrace/gymtrace/internal/testkit/syncbuf"
	"github.com/gymtrace/gymtrace/tokens"
)

// TestTokenCaptureAgreesWithFakeEngines: the proxy's restore rules (written from vLLM's and
// SGLang's serving code) and fakemodel's engines (written from the same code, separately) agree:
// through the proxy, the client gets exactly what the engine sends for the client's own request,
// JSON and SSE, with and without the client's own token members, and the entry holds the engine's
// ids (TOKENS.md §0 T2).
func TestTokenCaptureAgreesWithFakeEngines(t *testing.T) {
	const user = `{"role":"user","content":"What is the weather in Oslo?"}`
	const tools = `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]`
	cases := []struct {
		name         string
		engine       fakemodel.Engine
		noInline     bool
		fromLogprobs bool
		body         string
	}{
		{"vllm json", fakemodel.EngineVLLM, false, false, `{"model":"m","messages":[` + user + `]}`},
		{"vllm sse", fakemodel.EngineVLLM, false, false, `{"model":"m","stream":true,"messages":[` + user + `]}`},
		{"vllm sse usage", fakemodel.EngineVLLM, false, false, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[` + user + `]}`},
		{"vllm json tool call", fakemodel.EngineVLLM, false, false, `{"model":"m","messages":[` + user + `],` + tools + `}`},
		{"vllm sse tool call", fakemodel.EngineVLLM, false, false, `{"model":"m","stream":true,"messages":[` + user + `],` + tools + `}`},
		{"vllm json reasoning", fakemodel.EngineVLLM, false, false, `{"model":"m","reasoning_effort":"low","messages":[` + user + `]}`},
		{"vllm sse reasoning", fakemodel.EngineVLLM, false, false, `{"model":"m","stream":true,"reasoning_effort":"low","messages":[` + user + `]}`},
		{"vllm json client logprobs", fakemodel.EngineVLLM, false, false, `{"model":"m","logprobs":true,"top_logprobs":2,"messages":[` + user + `]}`},
		{"vllm sse client logprobs", fakemodel.EngineVLLM, false, false, `{"model":"m","stream":true,"logprobs":true,"messages":[` + user + `],` + tools + `}`},
		{"vllm json top_logprobs null", fakemodel.EngineVLLM, false, false, `{"model":"m","top_logprobs":null,"messages":[` + user + `]}`},
		{"vllm sse client logprobs top_logprobs null", fakemodel.EngineVLLM, false, false, `{"model":"m","stream":true,"logprobs":true,"top_logprobs":null,"messages":[` + user + `]}`},
		{"vllm json client ids", fakemodel.EngineVLLM, false, false, `{"model":"m","return_token_ids":true,"messages":[` + user + `]}`},
		{"vllm sse client ids", fakemodel.EngineVLLM, false, false, `{"model":"m","stream":true,"return_token_ids":true,"messages":[` + user + `],` + tools + `}`},
		{"vllm before 0.10.2 json", fakemodel.EngineVLLM, true, true, `{"model":"m","messages":[` + user + `]}`},
		{"vllm before 0.10.2 sse", fakemodel.EngineVLLM, true, true, `{"model":"m","stream":true,"messages":[` + user + `],` + tools + `}`},
		{"sglang json", fakemodel.EngineSGLang, false, false, `{"model":"m","messages":[` + user + `]}`},
		{"sglang json tool call", fakemodel.EngineSGLang, false, false, `{"model":"m","messages":[` + user + `],` + tools + `}`},
		{"sglang json client logprobs", fakemodel.EngineSGLang, false, false, `{"model":"m","logprobs":true,"top_logprobs":1,"messages":[` + user + `]}`},
		{"sglang json top_logprobs null", fakemodel.EngineSGLang, false, false, `{"model":"m","top_logprobs":null,"messages":[` + user + `]}`},
		{"sglang json client logprobs top_logprobs null", fakemodel.EngineSGLang, false, false, `{"model":"m","logprobs":true,"top_logprobs":null,"messages":[` + user + `]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := []fakemodel.Option{fakemodel.WithEngine(c.engine)}
			if c.noInline {
				opts = append(opts, fakemodel.WithoutInlineTokenIDs())
			}
			fake := fakemodel.New(opts...)
			up := newUpstream(t, fake.ServeHTTP)
			src := TokenSourceVLLM
			if c.engine == fakemodel.EngineSGLang {
				src = TokenSourceSGLang
			}
			dir := t.TempDir()
			env := newProxyEnv(t, up.URL, nil, WithTokenSource(src), WithTokenDir(dir), WithVLLMTokenIDsFromLogprobs(c.fromLogprobs))
			want := direct(t, up.URL, c.body)
			resp, got, err := env.post(t, tokenPath, c.body, nil)
			require.NoError(t, err)
			require.Equal(t, 200, resp.StatusCode, "%s", got)
			assert.Equal(t, string(want), string(got), "the client gets the engine's answer to its own request")
			if !strings.Contains(c.body, `"stream":true`) {
				assert.Equal(t, fmt.Sprint(len(want)), resp.Header.Get("Content-Length"))
			}
			st, err := tokens.OpenStore(dir)
			require.NoError(t, err)
			es, err := st.ReadEntries("r1")
			require.NoError(t, err)
			require.Len(t, es, 1, "the call is captured")
			assert.NotEmpty(t, es[0].PromptTokenIDs)
			assert.NotEmpty(t, es[0].GenerationTokenIDs)
			assert.Len(t, es[0].GenerationLogProbs, len(es[0].GenerationTokenIDs))
		})
	}
}

// TestTokenCaptureHintsLogprobsMode: a vLLM without inline ids (before v0.10.2) behind a proxy not
// in the log-prob mode marks the rollout incomplete with the reference's message, and the proxy's
// log adds which flag captures such a server.
func TestTokenCaptureHintsLogprobsMode(t *testing.T) {
	up := newUpstream(t, fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM), fakemodel.WithoutInlineTokenIDs()).ServeHTTP)
	dir := t.TempDir()
	var logs syncbuf.Buffer
	env := newProxyEnv(t, up.URL, nil, WithTokenSource(TokenSourceVLLM), WithTokenDir(dir),
		WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	resp, got, err := env.post(t, tokenPath, `{"model":"m","messages":[{"role":"user","content":"Hi"}]}`, nil)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, "%s", got)
	st, err := tokens.OpenStore(dir)
	require.NoError(t, err)
	incomplete, err := st.IsIncomplete("r1")
	require.NoError(t, err)
	assert.True(t, incomplete, "the call without ids marks its rollout incomplete")
	assert.Contains(t, logs.String(), "must use the `token_id:<int>` format.")
	assert.Contains(t, logs.String(), "run the proxy with --vllm-token-ids-from-logprobs")
}

// TestUpstreamFailureReason: status 0 is no answer, not "HTTP 0".
func TestUpstreamFailureReason(t *testing.T) {
	assert.Equal(t, "the upstream gave no answer (connection failed or closed before the status line)", upstreamFailure(0))
	assert.Equal(t, "the upstream answered HTTP 502", upstreamFailure(502))
}

// TestTokenCaptureVLLMResponses: a Responses call to vLLM through the proxy (enable_response_messages
// and the output_text log probs added, tokenadapter_responses.go): the client gets exactly what
// vLLM sends for its own request, JSON and SSE, with and without its own token members, and the
// entry holds the engine's prompt and generated ids with a log prob per generated token, on the
// answer's last output item. A turn without text (a tool call alone) has no log probs in vLLM's
// answer and marks the rollout incomplete, the client's bytes still unchanged.
func TestTokenCaptureVLLMResponses(t *testing.T) {
	const tools = `"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]`
	cases := []struct {
		name, body string
		captured   bool
	}{
		{"json", `{"model":"m","input":"Hi there"}`, true},
		{"sse", `{"model":"m","stream":true,"input":"Hi there"}`, true},
		{"json reasoning", `{"model":"m","reasoning":{"effort":"low"},"input":"Hi there"}`, true},
		{"sse reasoning", `{"model":"m","stream":true,"reasoning":{"effort":"low"},"input":"Hi there"}`, true},
		{"json client include", `{"model":"m","include":["reasoning.encrypted_content"],"input":"Hi"}`, true},
		{"sse client logprobs", `{"model":"m","stream":true,"include":["message.output_text.logprobs"],"top_logprobs":2,"input":"Hi"}`, true},
		{"json client messages", `{"model":"m","enable_response_messages":true,"input":"Hi"}`, true},
		{"json tool call", `{"model":"m","input":"What is the weather in Oslo?",` + tools + `}`, false},
		{"sse tool call", `{"model":"m","stream":true,"input":"What is the weather in Oslo?",` + tools + `}`, false},
		{"client refuses messages", `{"model":"m","enable_response_messages":false,"input":"Hi"}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake := fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM))
			up := newUpstream(t, fake.ServeHTTP)
			dir := t.TempDir()
			env := newProxyEnv(t, up.URL, nil, WithTokenSource(TokenSourceVLLM), WithTokenDir(dir))
			resp, err := http.Post(up.URL+"/v1/responses", "application/json", strings.NewReader(c.body))
			require.NoError(t, err)
			want, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			resp, got, err := env.post(t, "/ng-rollout/r1/training-token-capture/v1/responses", c.body, nil)
			require.NoError(t, err)
			require.Equal(t, 200, resp.StatusCode, "%s", got)
			assert.Equal(t, string(want), string(got), "the client gets vLLM's answer to its own request")
			st, err := tokens.OpenStore(dir)
			require.NoError(t, err)
			es, err := st.ReadEntries("r1")
			require.NoError(t, err)
			incomplete, err := st.IsIncomplete("r1")
			require.NoError(t, err)
			if !c.captured {
				assert.Empty(t, es)
				assert.True(t, incomplete)
				return
			}
			require.Len(t, es, 1, "the call is captured")
			assert.False(t, incomplete)
			e := es[0]
			assert.NotEmpty(t, e.PromptTokenIDs)
			assert.NotEmpty(t, e.GenerationTokenIDs)
			assert.Len(t, e.GenerationLogProbs, len(e.GenerationTokenIDs))
			// The ids are the engine's: its own answer with the members asked for.
			asked := strings.Replace(c.body, `{"model":"m",`, `{"model":"m","enable_response_messages":true,"include":["message.output_text.logprobs"],`, 1)
			if strings.Contains(c.body, `"include"`) || strings.Contains(c.body, `"enable_response_messages"`) {
				return // the client's own members: its ids are checked by the counts above
			}
			r, err := http.Post(up.URL+"/v1/responses", "application/json", strings.NewReader(strings.Replace(asked, `"stream":true,`, ``, 1)))
			require.NoError(t, err)
			var full struct {
				InputMessages  []struct{ Tokens []int64 } `json:"input_messages"`
				OutputMessages []struct{ Tokens []int64 } `json:"output_messages"`
			}
			require.NoError(t, json.NewDecoder(r.Body).Decode(&full))
			r.Body.Close()
			assert.Equal(t, full.InputMessages[0].Tokens, e.PromptTokenIDs)
			assert.Equal(t, full.OutputMessages[0].Tokens, e.GenerationTokenIDs)
		})
	}
}
