package rollout

import (
	"strings"
)

// Prefix is the rollout prefix parsed from the start of a request path.
type Prefix struct {
	// ID is the id segment, as it appears in the decoded path (not validated by [ParsePrefix];
	// see [ValidateID]).
	ID string
	// TokenCapture reports the "/training-token-capture" segment right after the id, followed by
	// a further "/" (the segment alone is part of Rest).
	TokenCapture bool
	// Rest is the remaining path, always starting with "/": the path to forward or route.
	Rest string
}

// PathPrefix returns the URL path prefix that routes a call to rollout id (SPEC §1.3, Gym's
// rollout_path_prefix): "" when id is empty, else "/ng-rollout/<id>", plus
// "/training-token-capture" when tokenCapture is set. The id is not escaped: it is meant to pass
// [ValidateID] already.
func PathPrefix(id string, tokenCapture bool) string {
	if id == "" {
		return ""
	}
	p := "/" + PathSegment + "/" + id
	if tokenCapture {
		p += "/" + TokenCaptureSegment
	}
	return p
}

// ApplyPrefix appends the rollout prefix to a base URL (SPEC §1.3, Gym's apply_rollout_prefix):
// baseURL unchanged (trailing slash kept) when id is empty, else baseURL with every trailing "/"
// removed followed by PathPrefix(id, tokenCapture). The caller appends "/v1" (or the API path)
// afterwards.
func ApplyPrefix(baseURL, id string, tokenCapture bool) string {
	if id == "" {
		return baseURL
	}
	return strings.TrimRight(baseURL, "/") + PathPrefix(id, tokenCapture)
}

// ParsePrefix parses the model-server rollout prefix of a percent-DECODED request path
// (r.URL.Path, the ASGI scope path): the reference regex
// ^/ng-rollout/(?P<rollout_id>[^/]+)(?:/(?P<token_capture>training-token-capture))?(?P<rest>/.*)$
// of SPEC §1.6, matched over the whole string (D10: Rest keeps any trailing newline; the path is
// treated as opaque bytes). The id is any non-empty run of non-"/" characters; there must be a "/"
// after it, so "/ng-rollout/abc" has no prefix. The segments are case-sensitive and must start the
// path. ok is false when the path has no prefix (it is then routed unmodified and never captured).
//
// The parse validates nothing: a server refuses a parsed id that fails [ValidateID] (SPEC §0 D12).
// For every ok result, PathPrefix(p.ID, p.TokenCapture)+p.Rest == path.
func ParsePrefix(path string) (p Prefix, ok bool) {
	id, rest, ok := cutPrefixID(path)
	if !ok {
		return Prefix{}, false
	}
	const seg = "/" + TokenCaptureSegment
	if len(rest) > len(seg) && strings.HasPrefix(rest, seg) && rest[len(seg)] == '/' {
		return Prefix{ID: id, TokenCapture: true, Rest: rest[len(seg):]}, true
	}
	return Prefix{ID: id, Rest: rest}, true
}

// ParseResourcesServerPrefix parses the resources-server prefix of a decoded path: the reference
// regex ^/ng-rollout/(?P<rollout_id>[A-Za-z0-9][A-Za-z0-9._-]*)(?P<rest>/.*)$ of SPEC §1.5 (Gym's
// RolloutContextMiddleware), matched over the whole string like [ParsePrefix]. The id must fully
// match [IDPattern] (no length limit, as in Gym); the token-capture segment is not recognised and
// stays in Rest, so TokenCapture is always false.
func ParseResourcesServerPrefix(path string) (p Prefix, ok bool) {
	id, rest, ok := cutPrefixID(path)
	if !ok || !matchIDPattern(id) {
		return Prefix{}, false
	}
	return Prefix{ID: id, Rest: rest}, true
}

// cutPrefixID splits "/ng-rollout/<id><rest>" where id is a non-empty run of non-"/" bytes and
// rest starts with "/".
func cutPrefixID(path string) (id, rest string, ok bool) {
	const lead = "/" + PathSegment + "/"
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
