package fakemodel_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
)

// TestDeterminism checks that the answer is a function of the request.
func TestDeterminism(t *testing.T) {
	srv := fakemodel.New()
	for _, d := range []fakemodel.Dialect{fakemodel.DialectResponses, fakemodel.DialectChat, fakemodel.DialectMessages} {
		t.Run(string(d), func(t *testing.T) {
			a := bodyOf(t, do(t, srv, "POST", paths[d], scenarios[1].body[d]))
			b := bodyOf(t, do(t, fakemodel.New(), "POST", paths[d], scenarios[1].body[d]))
			assert.Equal(t, a, b, "same request, same bytes (even from another Server)")
			other := bodyOf(t, do(t, srv, "POST", paths[d], scenarios[0].body[d]))
			assert.NotEqual(t, object(t, a)["id"], object(t, other)["id"], "another request, another id")
		})
	}
}

// TestUsage checks the token rules of doc.go on exact numbers.
func TestUsage(t *testing.T) {
	srv := fakemodel.New()
	// Strings other than the model: "user" (4) + "abcd" (4) = 8 characters → 8 + 2 = 10 tokens.
	chat := map[string]any{"model": "some-long-model-name", "messages": []any{map[string]any{"role": "user", "content": "abcd"}}}
	body := object(t, bodyOf(t, do(t, srv, "POST", "/v1/chat/completions", chat)))
	assert.Equal(t, int64(10), num(t, body, "usage", "prompt_tokens"))
	assert.Equal(t, int64(0), num(t, body, "usage", "prompt_tokens_details", "cached_tokens"))

	t.Run("anthropic cache", func(t *testing.T) {
		req := map[string]any{
			"model": "claude-sonnet-4-5", "max_tokens": 100,
			"system": []any{map[string]any{"type": "text", "text": strings.Repeat("policy ", 40), "cache_control": map[string]any{"type": "ephemeral"}}},
			"messages": []any{
				map[string]any{"role": "user", "content": "first"},
				map[string]any{"role": "assistant", "content": "ok"},
				map[string]any{"role": "user", "content": "second"},
			},
		}
		u := object(t, bodyOf(t, do(t, srv, "POST", "/v1/messages", req)))["usage"]
		read, write, in := num(t, u, "cache_read_input_tokens"), num(t, u, "cache_creation_input_tokens"), num(t, u, "input_tokens")
		assert.Positive(t, read)
		assert.Positive(t, write)
		assert.Positive(t, in)
		assert.Zero(t, read%8, "cached tokens are a multiple of 8")
		assert.Equal(t, write, num(t, u, "cache_creation", "ephemeral_5m_input_tokens"))
		// The same request in the OpenAI dialect reports all prompt tokens as input.
		assert.InDelta(t, float64(read), float64(read+write+in)/2, 8)
	})
}

// TestTruncation checks that an output limit below the answer cuts it the provider's way.
func TestTruncation(t *testing.T) {
	srv := fakemodel.New()
	t.Run("responses", func(t *testing.T) {
		req := map[string]any{"model": "gpt-4.1-mini", "input": "Explain everything.", "max_output_tokens": 5}
		body := object(t, bodyOf(t, do(t, srv, "POST", "/v1/responses", req)))
		assert.Equal(t, "incomplete", body["status"])
		assert.Equal(t, "max_output_tokens", str(t, body, "incomplete_details", "reason"))
		assert.Equal(t, int64(5), num(t, body, "usage", "output_tokens"))
		assert.Equal(t, "incomplete", str(t, body, "output", 0, "status"))
		assert.LessOrEqual(t, len(str(t, body, "output", 0, "content", 0, "text")), 20)
		req["stream"] = true
		events := parseSSE(t, bodyOf(t, do(t, srv, "POST", "/v1/responses", req)))
		last := events[len(events)-1]
		assert.Equal(t, "response.incomplete", last.Name)
		assert.Equal(t, body, object(t, last.Data)["response"])
	})
	t.Run("chat", func(t *testing.T) {
		req := map[string]any{"model": "gpt-4.1-mini", "max_completion_tokens": 4, "messages": []any{map[string]any{"role": "user", "content": "Explain everything."}}}
		body := object(t, bodyOf(t, do(t, srv, "POST", "/v1/chat/completions", req)))
		assert.Equal(t, "length", str(t, body, "choices", 0, "finish_reason"))
		assert.Equal(t, int64(4), num(t, body, "usage", "completion_tokens"))
	})
	t.Run("messages tool call cut", func(t *testing.T) {
		req := map[string]any{}
		for k, v := range scenarios[1].body[fakemodel.DialectMessages] {
			req[k] = v
		}
		req["max_tokens"] = 3
		body := object(t, bodyOf(t, do(t, srv, "POST", "/v1/messages", req)))
		assert.Equal(t, "max_tokens", body["stop_reason"])
		assert.Equal(t, int64(3), num(t, body, "usage", "output_tokens"))
		content := body["content"].([]any)
		require.Len(t, content, 1)
		assert.Equal(t, "text", str(t, content, 0, "type"))
	})
	t.Run("reasoning eats the budget", func(t *testing.T) {
		req := map[string]any{"model": "o4-mini", "input": "Explain everything.", "max_output_tokens": 8}
		body := object(t, bodyOf(t, do(t, srv, "POST", "/v1/responses", req)))
		assert.Equal(t, "incomplete", body["status"])
		assert.Equal(t, int64(8), num(t, body, "usage", "output_tokens_details", "reasoning_tokens"))
		output := body["output"].([]any)
		require.Len(t, output, 1)
		assert.Equal(t, "reasoning", str(t, output, 0, "type"))
	})
}

// TestToolResultWithoutCall checks the answer to a tool result whose call is not in the request
// (Responses with previous_response_id).
func TestToolResultWithoutCall(t *testing.T) {
	req := map[string]any{"model": "gpt-4.1-mini", "previous_response_id": "resp_1",
		"input": []any{map[string]any{"type": "function_call_output", "call_id": "call_1", "output": "12 C"}}}
	body := object(t, bodyOf(t, do(t, fakemodel.New(), "POST", "/v1/responses", req)))
	assert.Equal(t, "The tool returned: 12 C", str(t, body, "output", 0, "content", 0, "text"))
	assert.Positive(t, num(t, body, "usage", "input_tokens_details", "cached_tokens"), "a follow-up turn is cached")
	assert.Equal(t, "resp_1", body["previous_response_id"])
}

// TestChatChoices checks that n > 1 is refused: the fake model serves one choice per answer.
func TestChatChoices(t *testing.T) {
	req := map[string]any{}
	for k, v := range scenarios[1].body[fakemodel.DialectChat] {
		req[k] = v
	}
	req["n"] = 2
	resp := do(t, fakemodel.New(), "POST", "/v1/chat/completions", req)
	body := object(t, bodyOf(t, resp))
	assert.Equal(t, 400, resp.StatusCode)
	assert.Equal(t, "fakemodel: 'n' is 2: one choice per answer is served", str(t, body, "error", "message"))
	req["n"] = 1
	body = object(t, bodyOf(t, do(t, fakemodel.New(), "POST", "/v1/chat/completions", req)))
	assert.Len(t, body["choices"], 1)
}

// TestOptions checks the fixed clock, and that tool_choice "none" suppresses the call.
func TestOptions(t *testing.T) {
	t.Run("clock", func(t *testing.T) {
		body := object(t, bodyOf(t, do(t, fakemodel.New(), "POST", "/v1/responses", scenarios[0].body[fakemodel.DialectResponses])))
		assert.Equal(t, int64(1760000000), num(t, body, "created_at"))
	})
	t.Run("tool_choice none", func(t *testing.T) {
		req := map[string]any{}
		for k, v := range scenarios[1].body[fakemodel.DialectChat] {
			req[k] = v
		}
		req["tool_choice"] = "none"
		body := object(t, bodyOf(t, do(t, fakemodel.New(), "POST", "/v1/chat/completions", req)))
		assert.Equal(t, "stop", str(t, body, "choices", 0, "finish_reason"))
	})
}

// TestArguments checks the call arguments built from various parameter schemas.
func TestArguments(t *testing.T) {
	tests := []struct {
		name   string
		schema any
		want   string
	}{
		{"no schema", nil, `{}`},
		{"no properties", map[string]any{"type": "object"}, `{}`},
		{"all properties when none required, in schema order",
			rawSchema(`{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"integer"},"m":{"type":"boolean"},"n":{"type":"number"},"l":{"type":"array"},"o":{"type":"object"},"s2":{"type":"string"},"u":{"type":["null","string"]},"k":{}}}`),
			`{"z":"go","a":1,"m":true,"n":1.5,"l":[],"o":{},"s2":"example","u":"example","k":"example"}`},
		{"required only", rawSchema(`{"properties":{"a":{"type":"string"},"b":{"enum":[3,4]}},"required":["b"]}`), `{"b":3}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fn := map[string]any{"name": "f"}
			if tt.schema != nil {
				fn["parameters"] = tt.schema
			}
			req := map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "go"}},
				"tools": []any{map[string]any{"type": "function", "function": fn}}}
			body := object(t, bodyOf(t, do(t, fakemodel.New(), "POST", "/v1/chat/completions", req)))
			assert.Equal(t, tt.want, str(t, body, "choices", 0, "message", "tool_calls", 0, "function", "arguments"))
		})
	}
}

// rawSchema keeps a schema's member order (a Go map would sort it).
type rawSchema string

func (r rawSchema) MarshalJSON() ([]byte, error) { return []byte(r), nil }
