package fakemodel_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
)

// The vLLM adapter vectors (token_capture.json VL-*, TOKENS.md §1.5, §7) give, per request, the
// response a vLLM or SGLang server sent. For the same request members the fake's answer has the
// same structure: every member of the vector's response is there with the same JSON kind, null
// where it is null, and the token members (prompt_token_ids, token_ids, logprobs) are present
// exactly when the vector has them (vLLM writes null for an absent one, SGLang omits it).
// The vectors' responses are hand-built after the protocol files; where they differ from what
// the protocol code writes, the exception names the rule.
func TestVLLMAdapterVectorShapes(t *testing.T) {
	cases := map[string]struct {
		engine fakemodel.Engine
		// extra request members: SGLang fills a choice's prompt_token_ids only with
		// return_prompt_token_ids (its ChatCompletionRequest field); VL-17's response has them.
		extra map[string]any
	}{
		"VL-01": {engine: fakemodel.EngineVLLM},
		"VL-02": {engine: fakemodel.EngineVLLM},
		"VL-11": {engine: fakemodel.EngineVLLM},
		"VL-16": {engine: fakemodel.EngineSGLang},
		"VL-17": {engine: fakemodel.EngineSGLang, extra: map[string]any{"return_prompt_token_ids": true}},
	}
	// Where vLLM's protocol code writes other than the hand-built vectors.
	exceptions := map[string]string{
		"choices.0.message.tool_calls":       "vLLM's ChatMessage.tool_calls defaults to [] (chat_completion/protocol.py)",
		"choices.0.logprobs.content.0.bytes": "vLLM writes null bytes only for a token without decoded text; the fake's tokens all have text",
	}
	seen := 0
	for _, c := range testvectors.Load(t, "token_capture.json") {
		spec, ok := cases[c.Name]
		if !ok {
			continue
		}
		seen++
		t.Run(c.Name, func(t *testing.T) {
			var in struct {
				Response json.RawMessage `json:"vllm_response"`
			}
			var exp struct {
				Request map[string]any `json:"upstream_request"`
			}
			require.NoError(t, json.Unmarshal(c.Input, &in))
			require.NoError(t, json.Unmarshal(c.Expected, &exp))
			for k, v := range spec.extra {
				exp.Request[k] = v
			}
			srv := fakemodel.New(fakemodel.WithEngine(spec.engine))
			resp := do(t, srv, http.MethodPost, "/v1/chat/completions", exp.Request)
			body := bodyOf(t, resp)
			require.Equal(t, http.StatusOK, resp.StatusCode, body)
			vec, got := decode(t, string(in.Response)), decode(t, body)
			conform(t, "", vec, got, exceptions)
			for _, p := range [][]any{{"prompt_token_ids"}, {"choices", 0, "token_ids"}, {"choices", 0, "prompt_token_ids"}, {"choices", 0, "logprobs"}} {
				v, vok := lookup(vec, p...)
				g, gok := lookup(got, p...)
				switch {
				case vok && v != nil:
					require.NotNil(t, g, "%v: the vector has it", p)
				case spec.engine == fakemodel.EngineVLLM && len(p) > 1 && p[2] == "prompt_token_ids":
					require.False(t, gok, "%v: vLLM has no such member", p)
				case spec.engine == fakemodel.EngineVLLM:
					require.True(t, gok, "%v: vLLM writes every member", p)
					require.Nil(t, g, "%v: not asked, so null", p)
				default:
					require.False(t, gok, "%v: SGLang omits what was not asked", p)
				}
			}
			if v, ok := lookup(vec, "choices", 0, "logprobs", "content", 0, "token"); ok {
				g, _ := lookup(got, "choices", 0, "logprobs", "content", 0, "token")
				require.Equal(t, tokenIDText.MatchString(v.(string)), tokenIDText.MatchString(g.(string)), "token %q vs %q", v, g)
			}
		})
	}
	require.Equal(t, len(cases), seen, "every listed vector exists")
}

// conform checks that got has every member of vec with the same kind (see above).
func conform(t *testing.T, path string, vec, got any, exceptions map[string]string) {
	t.Helper()
	if _, ok := exceptions[path]; ok {
		return
	}
	switch v := vec.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		require.True(t, ok, "%s: want an object, got %v", path, got)
		for k, sub := range v {
			p := strings.TrimPrefix(path+"."+k, ".")
			if _, skip := exceptions[p]; skip {
				continue
			}
			gs, ok := g[k]
			require.True(t, ok, "%s: missing", p)
			conform(t, p, sub, gs, exceptions)
		}
	case []any:
		g, ok := got.([]any)
		require.True(t, ok, "%s: want an array, got %v", path, got)
		if len(v) > 0 && len(g) > 0 {
			conform(t, path+".0", v[0], g[0], exceptions)
		}
	case nil:
		require.Nil(t, got, "%s: want null", path)
	case string:
		require.IsType(t, "", got, "%s", path)
	case json.Number:
		require.IsType(t, json.Number(""), got, "%s", path)
	case bool:
		require.IsType(t, true, got, "%s", path)
	}
}

// lookup walks a path like at, reporting whether it exists.
func lookup(v any, path ...any) (any, bool) {
	for _, p := range path {
		switch p := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[p]; !ok {
				return nil, false
			}
		case int:
			a, ok := v.([]any)
			if !ok || p >= len(a) {
				return nil, false
			}
			v = a[p]
		}
	}
	return v, true
}
