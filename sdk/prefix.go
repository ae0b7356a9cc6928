package sdk

import (
	"net/http"

	"github.com/gymtrace/gymtrace/rollout"
)

// CapturedDialect returns the dialect stored for a call to the stripped path rest (SPEC §1.6):
// "responses" for /v1/responses, "chat" for /v1/chat/completions, "messages" for /v1/messages, and ""
// for every other path (forwarded, never captured). The match is exact: no trailing slash, no query
// string, case-sensitive; the method is not checked.
func CapturedDialect(rest string) string {
	switch rest {
	case "/v1/responses":
		return "responses"
	case "/v1/chat/completions":
		return "chat"
	case "/v1/messages":
		return "messages"
	}
	return ""
}

// InvalidRolloutIDBody returns the response the model server gives itself for a prefix that
// rollout.ParseRequestPath refuses (SPEC §0 D12: an invalid id, an encoded separator in the prefix,
// a dot segment): status 400 and a JSON body (Content-Type application/json) whose message is
// err's text (naming the id and the rule). strippedPath is the parsed rollout.Prefix.Rest: for
// /v1/messages the body has Anthropic's shape
// {"type":"error","error":{"type":"invalid_request_error","message":M}}, for every other path
// OpenAI's {"error":{"message":M,"type":"invalid_request_error","param":null,"code":"invalid_rollout_id"}}.
// Nothing is forwarded or captured for such a call. A nil err gives the message "invalid rollout id".
func InvalidRolloutIDBody(strippedPath string, err error) (status int, body []byte) {
	msg := rollout.ErrInvalidID.Error()
	if err != nil {
		msg = err.Error()
	}
	return http.StatusBadRequest, ErrorBody(strippedPath, "invalid_request_error", msg, "invalid_rollout_id")
}
