package fakemodel_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
)

// TestValidation checks that invalid requests get the provider's status and error shape.
func TestValidation(t *testing.T) {
	srv := fakemodel.New()
	user := []any{map[string]any{"role": "user", "content": "hi"}}
	tests := []struct {
		name    string
		method  string
		path    string
		body    any
		status  int
		message string
		param   any // OpenAI only; nil = JSON null
		code    any // OpenAI only
	}{
		{"responses missing model", "POST", "/v1/responses", map[string]any{"input": "hi"}, 400,
			"Missing required parameter: 'model'.", "model", "missing_required_parameter"},
		{"responses null model", "POST", "/v1/responses", map[string]any{"model": nil, "input": "hi"}, 400,
			"Missing required parameter: 'model'.", "model", "missing_required_parameter"},
		{"responses model not a string", "POST", "/v1/responses", map[string]any{"model": 7, "input": "hi"}, 400,
			"Invalid type for 'model': expected a string, but got an integer instead.", "model", "invalid_type"},
		{"responses stream not a boolean", "POST", "/v1/responses", map[string]any{"model": "m", "stream": "yes"}, 400,
			"Invalid type for 'stream': expected a boolean, but got a string instead.", "stream", "invalid_type"},
		{"responses not json", "POST", "/v1/responses", "{not json", 400,
			"We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)", nil, nil},
		{"responses json array", "POST", "/v1/responses", "[1]", 400,
			"We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)", nil, nil},
		{"chat missing model", "POST", "/v1/chat/completions", map[string]any{"messages": user}, 400,
			"you must provide a model parameter", nil, nil},
		{"chat missing messages", "POST", "/v1/chat/completions", map[string]any{"model": "m"}, 400,
			"Missing required parameter: 'messages'.", "messages", "missing_required_parameter"},
		{"chat empty messages", "POST", "/v1/chat/completions", map[string]any{"model": "m", "messages": []any{}}, 400,
			"Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", "messages", "empty_array"},
		{"chat max_tokens not an integer", "POST", "/v1/chat/completions", map[string]any{"model": "m", "messages": user, "max_tokens": "x"}, 400,
			"Invalid type for 'max_tokens': expected an integer, but got a string instead.", "max_tokens", "invalid_type"},
		{"messages missing model", "POST", "/v1/messages", map[string]any{"max_tokens": 10, "messages": user}, 400,
			"model: Field required", nil, nil},
		{"messages missing max_tokens", "POST", "/v1/messages", map[string]any{"model": "c", "messages": user}, 400,
			"max_tokens: Field required", nil, nil},
		{"messages zero max_tokens", "POST", "/v1/messages", map[string]any{"model": "c", "max_tokens": 0, "messages": user}, 400,
			"max_tokens: Input should be greater than or equal to 1", nil, nil},
		{"messages missing messages", "POST", "/v1/messages", map[string]any{"model": "c", "max_tokens": 10}, 400,
			"messages: Field required", nil, nil},
		{"messages bad role", "POST", "/v1/messages", map[string]any{"model": "c", "max_tokens": 10, "messages": []any{map[string]any{"role": "system", "content": "x"}}}, 400,
			"messages.0.role: Input should be 'user' or 'assistant'", nil, nil},
		{"messages not json", "POST", "/v1/messages", "", 400,
			"There was an error parsing the body of your request. Please make sure the body is a valid JSON object.", nil, nil},
		{"unknown path", "POST", "/v1/completions", map[string]any{"model": "m"}, 404,
			"Invalid URL (POST /v1/completions)", nil, nil},
		{"prefixed path is not ours", "POST", "/ng-rollout/r1/v1/responses", map[string]any{"model": "m"}, 404,
			"Invalid URL (POST /ng-rollout/r1/v1/responses)", nil, nil},
		{"GET on a model endpoint", "GET", "/v1/chat/completions", nil, 405,
			"Method GET is not allowed for /v1/chat/completions; use POST.", nil, nil},
		{"GET on messages", "GET", "/v1/messages", nil, 405,
			"Method GET is not allowed for /v1/messages; use POST.", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := do(t, srv, tt.method, tt.path, tt.body)
			body := bodyOf(t, resp)
			require.Equal(t, tt.status, resp.StatusCode, body)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			got := object(t, body)
			if tt.path == "/v1/messages" {
				assert.Equal(t, []string{"type", "error", "request_id"}, keys(t, body))
				assert.Equal(t, "error", got["type"])
				assert.Equal(t, tt.message, str(t, got, "error", "message"))
				assert.Equal(t, "invalid_request_error", str(t, got, "error", "type"))
				assert.Regexp(t, `^req_011C[A-Za-z0-9]{20}$`, got["request_id"])
				assert.NotEmpty(t, resp.Header.Get("Request-Id"))
				return
			}
			assert.Equal(t, []string{"error"}, keys(t, body))
			assert.Equal(t, tt.message, str(t, got, "error", "message"))
			assert.Equal(t, "invalid_request_error", str(t, got, "error", "type"))
			assert.Equal(t, tt.param, at(t, got, "error", "param"))
			assert.Equal(t, tt.code, at(t, got, "error", "code"))
			assert.Regexp(t, `^req_[0-9a-f]{32}$`, resp.Header.Get("X-Request-Id"))
		})
	}
}

// TestBodyTooLarge checks the 32 MiB request body limit.
func TestBodyTooLarge(t *testing.T) {
	body := `{"model":"m","input":"` + strings.Repeat("a", 32<<20) + `"}`
	resp := do(t, fakemodel.New(), "POST", "/v1/responses", body)
	got := object(t, bodyOf(t, resp))
	assert.Equal(t, 413, resp.StatusCode)
	assert.Equal(t, "Request body exceeds the maximum size of 33554432 bytes.", str(t, got, "error", "message"))
}
