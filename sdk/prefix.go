package sdk

import (
	"fmt"
	"net/http"
	"strings"
)

// MaxRolloutIDBytes is the longest prefix id accepted on the model server, in bytes (SPEC D12).
const MaxRolloutIDBytes = 200

// Prefix is the rollout prefix parsed from the start of a request path.
type Prefix struct {
	// RolloutID is the id segment, as it appears in the decoded path (not validated by the parse;
	// see ValidatePrefixID).
	RolloutID string
	// TokenCapture reports the "/training-token-capture" segment right after the id, followed by a
	// further "/" (the segment alone is part of Rest).
	TokenCapture bool
	// Rest is the remaining path, always starting with "/": the path to forward or route.
	Rest string
}

// ParsePrefix parses the model-server rollout prefix of a percent-DECODED request path (r.URL.Path,
// the ASGI scope path): the reference regex
// ^/ng-rollout/(?P<rollout_id>[^/]+)(?:/(?P<token_capture>training-token-capture))?(?P<rest>/.*)$
// of SPEC §1.6, matched over the whole string (D10: Rest keeps any trailing newline; the path is
// treated as opaque bytes, so Rest may hold any character). The id is any non-empty run of non-"/"
// characters; there must be a "/" after it, so "/ng-rollout/abc" has no prefix. The segment and
// prefix are case-sensitive and must start the path. ok is false when the path has no prefix (it is
// then routed unmodified and never captured).
//
// The parse does not validate the id: SPEC D12 requires the caller to refuse a parsed id for which
// ValidatePrefixID fails (see InvalidRolloutIDBody). For every ok result,
// RolloutPathPrefix(p.RolloutID, p.TokenCapture)+p.Rest == path.
func ParsePrefix(path string) (p Prefix, ok bool) {
	id, rest, ok := cutPrefixID(path)
	if !ok {
		return Prefix{}, false
	}
	const seg = "/" + TokenCapturePathSegment
	if len(rest) > len(seg) && strings.HasPrefix(rest, seg) && rest[len(seg)] == '/' {
		return Prefix{RolloutID: id, TokenCapture: true, Rest: rest[len(seg):]}, true
	}
	return Prefix{RolloutID: id, Rest: rest}, true
}

// ParseResourcesServerPrefix parses the resources-server prefix of a decoded path: the reference
// regex ^/ng-rollout/(?P<rollout_id>[A-Za-z0-9][A-Za-z0-9._-]*)(?P<rest>/.*)$ of SPEC §1.5
// (Gym's RolloutContextMiddleware), matched over the whole string like ParsePrefix. The id must fully
// match RolloutIDPattern (no length limit, as in Gym); the token-capture segment is not recognised
// and stays in Rest, so TokenCapture is always false.
func ParseResourcesServerPrefix(path string) (p Prefix, ok bool) {
	id, rest, ok := cutPrefixID(path)
	if !ok || !matchRolloutIDPattern(id) {
		return Prefix{}, false
	}
	return Prefix{RolloutID: id, Rest: rest}, true
}

// cutPrefixID splits "/ng-rollout/<id><rest>" where id is a non-empty run of non-"/" bytes and rest
// starts with "/".
func cutPrefixID(path string) (id, rest string, ok bool) {
	const lead = "/" + RolloutPathSegment + "/"
	after, found := strings.CutPrefix(path, lead)
	if !found {
		return "", "", false
	}
	i := strings.IndexByte(after, '/')
	if i <= 0 {
		return "", "", false
	}
	return after[:i], after[i:], true
}

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

// ValidatePrefixID checks a parsed prefix id against SPEC D12: it must fully match RolloutIDPattern
// (ASCII letters and digits, then also ".", "_" and "-"; no trailing newline, D10) and be at most
// MaxRolloutIDBytes bytes long. The error names the id (Go %q) and the rule, and matches
// ErrInvalidRolloutID. Every id Gym's agents produce passes; ids that pass are safe file names.
func ValidatePrefixID(id string) error {
	switch {
	case len(id) > MaxRolloutIDBytes:
		return fmt.Errorf("%w %q: longer than %d bytes (%d)", ErrInvalidRolloutID, id, MaxRolloutIDBytes, len(id))
	case !matchRolloutIDPattern(id):
		return fmt.Errorf("%w %q: must match %s (a letter or digit, then letters, digits, dots, dashes or underscores)", ErrInvalidRolloutID, id, RolloutIDPattern)
	}
	return nil
}

// InvalidRolloutIDBody returns the response the model server gives itself for a prefix id that fails
// ValidatePrefixID (SPEC D12): status 400 and a JSON body (Content-Type application/json) whose
// message is err's text (naming the id and the rule). strippedPath is the parsed Prefix.Rest: for
// /v1/messages the body has Anthropic's shape
// {"type":"error","error":{"type":"invalid_request_error","message":M}}, for every other path
// OpenAI's {"error":{"message":M,"type":"invalid_request_error","param":null,"code":"invalid_rollout_id"}}.
// Nothing is forwarded or captured for such a call. A nil err gives the message "invalid rollout id".
func InvalidRolloutIDBody(strippedPath string, err error) (status int, body []byte) {
	msg := ErrInvalidRolloutID.Error()
	if err != nil {
		msg = err.Error()
	}
	return http.StatusBadRequest, ErrorBody(strippedPath, "invalid_request_error", msg, "invalid_rollout_id")
}
