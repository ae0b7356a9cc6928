package sdk

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// RolloutPathPrefix returns the URL path prefix that routes a call to rollout id (SPEC §1.3, Gym's
// rollout_path_prefix): "" when id is empty, else "/ng-rollout/<id>", plus "/training-token-capture"
// when tokenCapture is set. The id is not escaped: it is meant to satisfy RolloutIDPattern already.
func RolloutPathPrefix(id string, tokenCapture bool) string {
	if id == "" {
		return ""
	}
	p := "/" + RolloutPathSegment + "/" + id
	if tokenCapture {
		p += "/" + TokenCapturePathSegment
	}
	return p
}

// ApplyRolloutPrefix appends the rollout prefix to a base URL (SPEC §1.3, Gym's
// apply_rollout_prefix): baseURL unchanged (trailing slash kept) when id is empty, else baseURL with
// every trailing "/" removed followed by RolloutPathPrefix(id, tokenCapture). The caller appends
// "/v1" (or the API path) afterwards. Example: ("http://h:1/", "r1", false) gives
// "http://h:1/ng-rollout/r1".
func ApplyRolloutPrefix(baseURL, id string, tokenCapture bool) string {
	if id == "" {
		return baseURL
	}
	return strings.TrimRight(baseURL, "/") + RolloutPathPrefix(id, tokenCapture)
}

// Correlation holds an agent's two capture gates (SPEC §1.4) and builds the rollout-prefixed paths
// and base URLs of its model calls. The zero value has correlation off: every helper returns its
// input unchanged. Build it from Gym's raw global config with CorrelationFromGlobalConfig, or set the
// fields directly. A Correlation is a value; its methods are safe for concurrent use.
type Correlation struct {
	// ModelCallCapture is the evaluation capture gate (global config observability_enabled).
	ModelCallCapture bool
	// TokenIDCapture is the training-token capture gate: the token_id_capture block is enabled and
	// either its all_agents flag or the agent's own token_id_capture flag is set. It adds the
	// "/training-token-capture" segment to every prefix.
	TokenIDCapture bool
}

// CorrelationFromGlobalConfig reads the gates the way Gym's agents do (SPEC §1.4), with Python
// truthiness on the raw values: globalConfig is the decoded global config (map[string]any as
// encoding/json gives it, or any map with string keys); anything else means "no config" and gives
// both gates off.
//   - ModelCallCapture = truthy(globalConfig["observability_enabled"]) (the string "false" is true
//     here, unlike the model server's typed parse; 0, "" and null are false).
//   - TokenIDCapture = globalConfig["token_id_capture"] is a mapping with truthy "enabled", and its
//     "all_agents" is truthy or agentTokenIDCapture (the agent's own config flag) is set.
func CorrelationFromGlobalConfig(globalConfig any, agentTokenIDCapture bool) Correlation {
	get, ok := pyMapping(globalConfig)
	if !ok {
		return Correlation{}
	}
	lookup := func(get func(string) (any, error), key string) any {
		v, err := get(key)
		if err != nil {
			return nil
		}
		return v
	}
	var c Correlation
	c.ModelCallCapture = pyTruthy(lookup(get, ObservabilityEnabledKey))
	if blockGet, isMapping := pyMapping(lookup(get, TokenIDCaptureKey)); isMapping {
		if pyTruthy(lookup(blockGet, "enabled")) {
			c.TokenIDCapture = pyTruthy(lookup(blockGet, "all_agents")) || agentTokenIDCapture
		}
	}
	return c
}

// Enabled reports whether either gate is on (Gym's _capture_correlation_enabled); only then do run
// bodies yield rollout ids.
func (c Correlation) Enabled() bool { return c.ModelCallCapture || c.TokenIDCapture }

// RolloutIDFromRun returns the rollout id of a run body (Gym's rollout_id_from_run): ok false when
// correlation is off, else MaybeRolloutIDFromRunBody(body), including its errors.
func (c Correlation) RolloutIDFromRun(body any) (id string, ok bool, err error) {
	if !c.Enabled() {
		return "", false, nil
	}
	return MaybeRolloutIDFromRunBody(body)
}

// URLPathForRun returns path prefixed with the run's rollout prefix (Gym's url_path_for_run):
// RolloutPathPrefix(RolloutIDFromRun(body), TokenIDCapture) + path; path unchanged when correlation
// is off or the body has no id. Errors are those of MaybeRolloutIDFromRunBody.
func (c Correlation) URLPathForRun(path string, body any) (string, error) {
	id, _, err := c.RolloutIDFromRun(body)
	if err != nil {
		return "", err
	}
	return RolloutPathPrefix(id, c.TokenIDCapture) + path, nil
}

// BaseURLForRun returns baseURL with the run's rollout prefix (Gym's base_url_for_run):
// ApplyRolloutPrefix(baseURL, RolloutIDFromRun(body), TokenIDCapture). Point an OpenAI or Anthropic
// client at the result plus "/v1". Errors are those of MaybeRolloutIDFromRunBody.
func (c Correlation) BaseURLForRun(baseURL string, body any) (string, error) {
	id, _, err := c.RolloutIDFromRun(body)
	if err != nil {
		return "", err
	}
	return ApplyRolloutPrefix(baseURL, id, c.TokenIDCapture), nil
}

// ResolveModelBaseURL returns the "/v1" base URL of a model server for a rollout (Gym's
// resolve_model_base_url): ApplyRolloutPrefix("http://<host>:<port>", rolloutID, TokenIDCapture) +
// "/v1". lookup maps the model server's name to its host and port (Gym's server registry); its error
// is returned wrapped. An empty rolloutID means no prefix. The gates are not consulted except for the
// token-capture segment, as in Gym. Unlike Gym's f-string, an IPv6 host is bracketed
// (net.JoinHostPort), so the URL stays usable; other hosts give the same text.
func (c Correlation) ResolveModelBaseURL(lookup func(name string) (host string, port int, err error), name, rolloutID string) (string, error) {
	if lookup == nil {
		return "", errors.New("resolve model base url: nil lookup")
	}
	host, port, err := lookup(name)
	if err != nil {
		return "", fmt.Errorf("resolve model base url %q: %w", name, err)
	}
	base := "http://" + net.JoinHostPort(host, strconv.Itoa(port))
	return ApplyRolloutPrefix(base, rolloutID, c.TokenIDCapture) + "/v1", nil
}

// captureOn is the correlation of a Go agent that always captures model calls.
var captureOn = Correlation{ModelCallCapture: true}

// BaseURLForRun is Correlation.BaseURLForRun with model-call capture on and no token capture: the
// base URL a Go agent gives its model client for this run. Example: ("http://h:1",
// {"_ng_task_index":3,"_ng_rollout_index":1}) gives "http://h:1/ng-rollout/3-1".
//
// Unlike the Gym-exact Correlation method, it also refuses a rollout id the proxy would answer with
// 400 (SPEC D12, [ValidatePrefixID]: ^[A-Za-z0-9][A-Za-z0-9._-]*$, at most 200 bytes), such as the
// "-1-1" of "_ng_task_index": -1 or an over-long _ng_rollout_id: the error matches
// [ErrInvalidRolloutID] and names the id and the rule, so the agent fails before its first call
// instead of every call failing.
func BaseURLForRun(baseURL string, body any) (string, error) {
	id, err := proxyAcceptedRunID("base url for run", body)
	if err != nil {
		return "", err
	}
	return ApplyRolloutPrefix(baseURL, id, captureOn.TokenIDCapture), nil
}

// URLPathForRun is Correlation.URLPathForRun with model-call capture on and no token capture. Like
// [BaseURLForRun] it refuses a rollout id that fails SPEC D12 ([ValidatePrefixID]).
func URLPathForRun(path string, body any) (string, error) {
	id, err := proxyAcceptedRunID("url path for run", body)
	if err != nil {
		return "", err
	}
	return RolloutPathPrefix(id, captureOn.TokenIDCapture) + path, nil
}

// proxyAcceptedRunID returns the run's rollout id ("" when the body has none), refusing one the
// proxy would answer with 400 (SPEC D12); op prefixes that error.
func proxyAcceptedRunID(op string, body any) (string, error) {
	id, ok, err := captureOn.RolloutIDFromRun(body)
	if err != nil {
		return "", err
	}
	if ok {
		if err := ValidatePrefixID(id); err != nil {
			return "", fmt.Errorf("%s: %w", op, err)
		}
	}
	return id, nil
}

// URLPathForRequest returns path prefixed with the rollout prefix of an inbound agent request (Gym's
// url_path_for_request, SPEC §1.4), so calls made while serving a prefixed request stay in its
// rollout. The id comes from r.URL.Path (the decoded path) parsed with ParsePrefix, as Gym's route
// parameter {rollout_id} does; the token-capture segment is added when r.URL.Path contains
// "/training-token-capture/". r nil, or a path without a rollout prefix, gives path unchanged. The
// gates are not consulted (as in Gym). A middleware that strips the prefix before the handler runs
// hides it from this function.
func URLPathForRequest(r *http.Request, path string) string {
	if r == nil || r.URL == nil {
		return urlPathForRequestParams(nil, false, "", path)
	}
	params := map[string]any{}
	if p, ok := ParsePrefix(r.URL.Path); ok {
		params["rollout_id"] = p.RolloutID
	}
	return urlPathForRequestParams(params, true, r.URL.Path, path)
}

// urlPathForRequestParams is Gym's url_path_for_request over the parts of a Starlette request it
// reads: pathParams (used only when hasParams) may hold "rollout_id" (a string; any other value
// counts as absent), urlPath is request.url.path ("" when absent).
func urlPathForRequestParams(pathParams map[string]any, hasParams bool, urlPath string, path string) string {
	var id string
	if hasParams {
		if s, ok := pathParams["rollout_id"].(string); ok {
			id = s
		}
	}
	tokenCapture := strings.Contains(urlPath, "/"+TokenCapturePathSegment+"/")
	return RolloutPathPrefix(id, tokenCapture) + path
}
