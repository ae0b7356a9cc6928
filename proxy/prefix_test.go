package proxy

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/rollout"
)

// The captured_dialect half of vectors/prefix_parse.json (the parse itself is package rollout's).
func TestCapturedDialectVectors(t *testing.T) {
	cases := testvectors.Load(t, "prefix_parse.json")
	require.Equal(t, 38, len(cases), "prefix_parse.json case count")
	for _, c := range cases {
		var in struct{ Parser, Path string }
		require.NoError(t, json.Unmarshal(c.Input, &in))
		if in.Parser != "model_server" {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			var want struct {
				CapturedDialect *string `json:"captured_dialect"`
			}
			require.NoError(t, json.Unmarshal(c.Expected, &want))
			dialect := ""
			if p, ok := rollout.ParsePrefix(in.Path); ok {
				dialect = CapturedDialect(p.Rest)
			}
			assert.Equal(t, ptrOr(want.CapturedDialect), dialect)
		})
	}
}

func ptrOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func TestCapturedDialect(t *testing.T) {
	tests := map[string]string{
		"/v1/responses":                        "responses",
		"/v1/chat/completions":                 "chat",
		"/v1/messages":                         "messages",
		"/v1/models":                           "",
		"/v1/completions":                      "",
		"/v1/responses/":                       "",
		"/v1/responses?x=1":                    "",
		"/V1/responses":                        "",
		"/v1/messages/batches":                 "",
		"":                                     "",
		"/training-token-capture/v1/responses": "",
	}
	for rest, want := range tests {
		t.Run(rest, func(t *testing.T) {
			assert.Equal(t, want, CapturedDialect(rest))
		})
	}
}

func TestInvalidRolloutIDBodyD12(t *testing.T) {
	p, ok := rollout.ParsePrefix("/ng-rollout/a b/v1/messages")
	require.True(t, ok)
	verr := rollout.ValidateID(p.ID)
	require.Error(t, verr)

	t.Run("messages shape", func(t *testing.T) {
		status, body := InvalidRolloutIDBody(p.Rest, verr)
		assert.Equal(t, http.StatusBadRequest, status)
		want, err := json.Marshal(verr.Error())
		require.NoError(t, err)
		assert.Equal(t, `{"type":"error","error":{"type":"invalid_request_error","message":`+string(want)+`}}`, string(body))
	})
	for _, rest := range []string{"/v1/responses", "/v1/chat/completions", "/v1/models", "/", "/v1/messages/"} {
		t.Run("openai shape "+rest, func(t *testing.T) {
			status, body := InvalidRolloutIDBody(rest, verr)
			assert.Equal(t, http.StatusBadRequest, status)
			want, err := json.Marshal(verr.Error())
			require.NoError(t, err)
			assert.Equal(t, `{"error":{"message":`+string(want)+`,"type":"invalid_request_error","param":null,"code":"invalid_rollout_id"}}`, string(body))
		})
	}
	t.Run("message names id and rule", func(t *testing.T) {
		_, body := InvalidRolloutIDBody("/v1/responses", rollout.ValidateID("<x>&"))
		var decoded struct {
			Error struct{ Message string } `json:"error"`
		}
		require.NoError(t, json.Unmarshal(body, &decoded))
		assert.Contains(t, decoded.Error.Message, `"<x>&"`)
		assert.Contains(t, decoded.Error.Message, rollout.IDPattern)
		assert.NotContains(t, string(body), `\u003c`, "no HTML escaping")
	})
	t.Run("nil error", func(t *testing.T) {
		status, body := InvalidRolloutIDBody("/v1/responses", nil)
		assert.Equal(t, http.StatusBadRequest, status)
		assert.Contains(t, string(body), `"message":"invalid rollout id"`)
	})
}

func TestErrorBody(t *testing.T) {
	assert.Equal(t,
		`{"type":"error","error":{"type":"api_error","message":"upstream unreachable"}}`,
		string(ErrorBody("/v1/messages", "api_error", "upstream unreachable", "upstream_unreachable")))
	assert.Equal(t,
		`{"error":{"message":"upstream timed out","type":"server_error","param":null,"code":"upstream_timeout"}}`,
		string(ErrorBody("/v1/chat/completions", "server_error", "upstream timed out", "upstream_timeout")))
	assert.Equal(t,
		`{"error":{"message":"m","type":"t","param":null,"code":null}}`,
		string(ErrorBody("/x", "t", "m", "")))
}
