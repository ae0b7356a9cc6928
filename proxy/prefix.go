package proxy

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
// rollout.ParseRequestPath refuses (SPEC §0 D12): status 400 and the JSON body
// ErrorBody(strippedPath, "invalid_request_error", err's text, "invalid_rollout_id"), strippedPath
// being the parsed rollout.Prefix.Rest. A nil err gives the message "invalid rollout id". Nothing
// is forwarded or captured for such a call.
func InvalidRolloutIDBody(strippedPath string, err error) (status int, body []byte) {
	msg := rollout.ErrInvalidID.Error()
	if err != nil {
		msg = err.Error()
	}
	return http.StatusBadRequest, ErrorBody(strippedPath, "invalid_request_error", msg, "invalid_rollout_id")
}
