package rollout

import (
	"net/url"
	"strings"
)

// NearMiss is a model-server call under the rollout prefix whose path is almost the capture
// contract (SPEC §1.6: capture matches the stripped path exactly against /v1/responses,
// /v1/chat/completions and /v1/messages) but not quite: forwarded as SPEC §1.6 says, and worth
// one log line naming the likely fix, so that a misconfigured client never looks like a quiet run.
type NearMiss struct {
	// Kind names the class, one of the NearMiss* constants (a metric attribute's value).
	Kind string
	// Shape is the path with the rollout id replaced by "<id>": the same mistake made by every
	// rollout of a run has one shape, so a log line per shape is enough.
	Shape string
	// Reason says what is wrong, Fix the likely fix (both one sentence, no final period).
	Reason, Fix string
}

// The kinds of [NearMiss].
const (
	NearMissEmptyID          = "empty_id"          // /ng-rollout//v1/...
	NearMissNoPath           = "no_path"           // /ng-rollout/<id> and nothing after it
	NearMissDoubledPrefix    = "doubled_prefix"    // /ng-rollout/<id>/ng-rollout/<id>/v1/...
	NearMissSlashes          = "slashes"           // a doubled or trailing slash
	NearMissDoubledV1        = "doubled_v1"        // /ng-rollout/<id>/v1/v1/...
	NearMissMissingV1        = "missing_v1"        // /ng-rollout/<id>/messages, /ng-rollout/<id>/chat/completions
	NearMissEndpointSuffix   = "endpoint_suffix"   // another path ending in an endpoint's name
	NearMissEncodedSeparator = "encoded_separator" // /ng-rollout/<id>/v1%2Fresponses
)

// capturedPaths are SPEC §1.6's captured endpoints (proxy.CapturedDialect maps them to dialects).
var capturedPaths = []string{"/v1/responses", "/v1/chat/completions", "/v1/messages"}

// ClassifyNearMiss reports whether a model-server request path is a [NearMiss]: path is the
// decoded path (r.URL.Path), escaped the path as sent (r.URL.EscapedPath()). It is false for a path
// without the "/ng-rollout/" lead, for one whose stripped path is a captured endpoint as sent, for
// one D12 refuses ([ParseRequestPath]: the server answers 400 and says why), and for paths under
// the prefix that do not end in a captured endpoint's name (/v1/models). The near misses, checked
// in this order:
//
//   - an empty id segment ("/ng-rollout//v1/..."), or an id with no path after it;
//   - the prefix applied twice;
//   - a doubled or trailing slash that, removed, leaves a captured endpoint;
//   - "/v1" twice ("/v1/v1/messages": the Anthropic SDK adds /v1 to its base URL itself);
//   - "/v1" missing ("/messages", "/chat/completions", "/responses");
//   - another path ending in an endpoint's name ("/api/v1/messages");
//   - a captured endpoint whose path as sent encodes a separator ("/v1%2Fresponses"): captured under
//     the decoded path, forwarded as sent, so the upstream may see another path than the record says.
//
// A pure function: safe for concurrent use.
func ClassifyNearMiss(path, escaped string) (NearMiss, bool) {
	const lead = "/" + PathSegment + "/"
	if !strings.HasPrefix(path, lead) {
		return NearMiss{}, false
	}
	p, ok, err := ParseRequestPath(path, escaped)
	switch {
	case !ok && strings.HasPrefix(path, lead+"/"):
		return NearMiss{Kind: NearMissEmptyID, Shape: path,
			Reason: "the rollout id segment is empty (SPEC §1.6: /ng-rollout/<id>/...), so the call belongs to no rollout",
			Fix:    "build the base URL with the rollout id: .../ng-rollout/<id>/v1 (the OpenAI SDKs), .../ng-rollout/<id> (the Anthropic SDKs)"}, true
	case !ok:
		return NearMiss{Kind: NearMissNoPath, Shape: lead + "<id>",
			Reason: "nothing follows the rollout id (SPEC §1.6: /ng-rollout/<id>/v1/...)",
			Fix:    "append the API path: .../ng-rollout/<id>/v1/responses, /v1/chat/completions or /v1/messages"}, true
	case err != nil:
		return NearMiss{}, false
	}
	shape := PathPrefix("<id>", p.TokenCapture) + p.Rest
	miss := func(kind, reason, fix string) (NearMiss, bool) {
		return NearMiss{Kind: kind, Shape: shape, Reason: reason, Fix: fix}, true
	}
	rest := p.Rest
	if isCapturedPath(rest) {
		if asSent := escapedRest(escaped, p); asSent != rest {
			return miss(NearMissEncodedSeparator,
				"the path as sent encodes a separator after the prefix ("+asSent+"): it is captured as "+rest+" but forwarded as sent, and the upstream may serve it as another path",
				"send the path with plain slashes")
		}
		return NearMiss{}, false
	}
	if inner, ok := ParsePrefix(rest); ok {
		shape = PathPrefix("<id>", p.TokenCapture) + PathPrefix("<id>", inner.TokenCapture) + inner.Rest
		return miss(NearMissDoubledPrefix, "the rollout prefix appears twice",
			"apply the prefix to the base URL once (rollout.ApplyPrefix on a base URL that has none)")
	}
	if isCapturedPath(collapseSlashes(rest)) {
		return miss(NearMissSlashes, "after the prefix the path "+rest+" has a doubled or trailing slash, and capture matches the endpoint exactly (SPEC §1.6)",
			"remove the trailing slash of the base URL (or the doubled one): .../ng-rollout/<id>/v1")
	}
	if after, ok := strings.CutPrefix(rest, "/v1"); ok && isCapturedPath(after) {
		if after == "/v1/messages" {
			return miss(NearMissDoubledV1, "the path has /v1 twice", "the Anthropic SDK adds /v1 itself: use .../ng-rollout/<id> as its base URL")
		}
		return miss(NearMissDoubledV1, "the path has /v1 twice", "the OpenAI SDK's base URL ends in /v1 and the path must not add another: use .../ng-rollout/<id>/v1 as its base URL")
	}
	if isCapturedPath("/v1" + rest) {
		if rest == "/messages" {
			return miss(NearMissMissingV1, "the path lacks /v1 (captured: /v1/messages)",
				"the Anthropic SDK adds /v1 itself to a base URL of .../ng-rollout/<id>; a client that does not must call .../ng-rollout/<id>/v1/messages")
		}
		return miss(NearMissMissingV1, "the path lacks /v1 (captured: /v1"+rest+")", "the OpenAI SDK's base URL must end in /v1: use .../ng-rollout/<id>/v1")
	}
	for _, ep := range capturedPaths {
		if name := ep[len("/v1"):]; strings.HasSuffix(collapseSlashes(rest), name) {
			return miss(NearMissEndpointSuffix, "the path ends in "+name+" but is not "+ep+" (SPEC §1.6 captures only /v1/responses, /v1/chat/completions and /v1/messages right after the prefix)",
				"put the prefix right before /v1: the base URL is the server's root plus /ng-rollout/<id> (plus /v1 for the OpenAI SDKs)")
		}
	}
	return NearMiss{}, false
}

// isCapturedPath reports whether rest is one of SPEC §1.6's captured endpoints.
func isCapturedPath(rest string) bool {
	for _, ep := range capturedPaths {
		if rest == ep {
			return true
		}
	}
	return false
}

// collapseSlashes returns rest with doubled slashes collapsed and a trailing slash dropped.
func collapseSlashes(rest string) string {
	for strings.Contains(rest, "//") {
		rest = strings.ReplaceAll(rest, "//", "/")
	}
	if len(rest) > 1 {
		rest = strings.TrimSuffix(rest, "/")
	}
	return rest
}

// escapedRest is the part of escaped (the path as sent) after p's prefix segments when it encodes
// a separator (%2F, %5C) and decodes to p.Rest; p.Rest otherwise.
func escapedRest(escaped string, p Prefix) string {
	n := 2 // "ng-rollout" and the id
	if p.TokenCapture {
		n = 3
	}
	segs := strings.SplitN(strings.TrimPrefix(escaped, "/"), "/", n+1)
	if len(segs) <= n {
		return p.Rest
	}
	asSent := "/" + segs[n]
	if !hasEncodedSeparator(asSent) {
		return p.Rest
	}
	if dec, err := url.PathUnescape(asSent); err != nil || dec != p.Rest {
		return p.Rest // escaped is not the path as sent of this request
	}
	return asSent
}
