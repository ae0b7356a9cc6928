package rollout

import (
	"fmt"
	"net/url"
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
// rollout_path_prefix): "" when id is empty, else "/ng-rollout/<id>", plus "/training-token-capture"
// when tokenCapture is set. The id is not escaped (it is meant to pass [ValidateID]).
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
// baseURL unchanged when id is empty, else baseURL without its trailing "/"s followed by
// PathPrefix(id, tokenCapture). The caller appends "/v1" (or the API path).
func ApplyPrefix(baseURL, id string, tokenCapture bool) string {
	if id == "" {
		return baseURL
	}
	return strings.TrimRight(baseURL, "/") + PathPrefix(id, tokenCapture)
}

// ParsePrefix parses the model-server rollout prefix of a percent-DECODED request path
// (r.URL.Path, the ASGI scope path): the reference regex
// ^/ng-rollout/(?P<rollout_id>[^/]+)(?:/(?P<token_capture>training-token-capture))?(?P<rest>/.*)$
// of SPEC §1.6, matched over the whole string as opaque bytes (D10: Rest keeps a trailing newline),
// so "/ng-rollout/abc" has no prefix. ok is false when the path has none. The parse validates
// nothing ([ParseRequestPath] applies D12). For every ok result, PathPrefix(p.ID,
// p.TokenCapture)+p.Rest == path.
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
// RolloutContextMiddleware), matched like [ParsePrefix]: no length limit, and the token-capture
// segment stays in Rest.
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

// ParseRequestPath parses the rollout prefix of a model-server request and applies SPEC §0 D12:
// path is the decoded path (r.URL.Path), escaped the path as sent (r.URL.EscapedPath()). ok is
// false when path has no prefix ([ParsePrefix]). When ok, err is non-nil (and matches
// [ErrInvalidID]) if the server must answer 400 and neither forward nor write anything:
//
//   - the id fails [ValidateID];
//   - a segment of escaped up to and including the id (and the token-capture segment when
//     present) holds a percent-encoded separator (%2F, %5C in either case): the id or the rest
//     exists only after decoding ("/ng-rollout/a%2Fb/v1/..." decodes to id "a" and rest
//     "/b/v1/..."). When it is the id segment, p holds the client's reading: ID the decoded raw
//     segment ("a/b") and Rest the decoded path after it, so the error body follows the dialect
//     the client meant;
//   - Rest has a "." or ".." segment (checked after decoding, so "%2e" and "%2E" count too).
//
// The error names the id and the rule. An escaped that does not decode to path is read as path
// itself (its separators are then all literal).
func ParseRequestPath(path, escaped string) (p Prefix, ok bool, err error) {
	p, ok = ParsePrefix(path)
	if !ok {
		return Prefix{}, false, nil
	}
	if escaped != path {
		if dec, derr := url.PathUnescape(escaped); derr != nil || dec != path {
			escaped = path
		}
	}
	// escaped is "/" + segments; the decoded prefix spans 2 segments (3 with the token one).
	n := 2
	if p.TokenCapture {
		n = 3
	}
	segs := strings.SplitN(strings.TrimPrefix(escaped, "/"), "/", n+1)
	for i := 0; i < n && i < len(segs); i++ {
		if !hasEncodedSeparator(segs[i]) {
			continue
		}
		bad := p
		if i == 1 {
			bad = clientReading(segs)
		}
		return bad, true, fmt.Errorf("%w %q: the prefix segment %q of the path as sent holds a percent-encoded separator (%%2F or %%5C), so the id or the rest exists only after decoding (SPEC §0 D12)", ErrInvalidID, bad.ID, segs[i])
	}
	if err := ValidateID(p.ID); err != nil {
		return p, true, err
	}
	if hasDotSegment(p.Rest) {
		return p, true, fmt.Errorf("%w %q: the path after the prefix %q has a \".\" or \"..\" segment (SPEC §0 D12)", ErrInvalidID, p.ID, p.Rest)
	}
	return p, true, nil
}

// clientReading is the prefix a client meant whose escaped path segments are segs (segs[1] the
// raw id segment), decoded and cut as ParsePrefix would.
func clientReading(segs []string) Prefix {
	id, err := url.PathUnescape(segs[1])
	if err != nil {
		id = segs[1]
	}
	rest := "/"
	if len(segs) > 2 {
		r, err := url.PathUnescape(strings.Join(segs[2:], "/"))
		if err != nil {
			r = strings.Join(segs[2:], "/")
		}
		rest += r
	}
	if q, ok := ParsePrefix("/" + PathSegment + "/x" + rest); ok {
		return Prefix{ID: id, TokenCapture: q.TokenCapture, Rest: q.Rest}
	}
	return Prefix{ID: id, Rest: rest}
}

// hasEncodedSeparator reports whether s holds %2F, %2f, %5C or %5c.
func hasEncodedSeparator(s string) bool {
	for i := 0; i+2 < len(s); i++ {
		if c1, c2 := s[i+1], s[i+2]|0x20; s[i] == '%' && (c1 == '2' && c2 == 'f' || c1 == '5' && c2 == 'c') {
			return true
		}
	}
	return false
}

// hasDotSegment reports whether the path has a "." or ".." segment.
func hasDotSegment(path string) bool {
	for seg := range strings.SplitSeq(path, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}
