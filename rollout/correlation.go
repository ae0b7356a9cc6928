package rollout

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// Correlation holds an agent's two capture gates (SPEC §1.4) and builds the rollout-prefixed
// paths and base URLs of its model calls. The zero value has correlation off: every helper returns
// its input unchanged. Build it from Gym's global config with [CorrelationFromGlobalConfig], or set
// the fields directly. A Correlation is a value; its methods are safe for concurrent use.
type Correlation struct {
	// ModelCallCapture is the evaluation capture gate (global config observability_enabled).
	ModelCallCapture bool
	// TokenIDCapture is the training-token capture gate: the token_id_capture block is enabled
	// and either its all_agents flag or the agent's own token_id_capture flag is set. It adds the
	// "/training-token-capture" segment to every prefix.
	TokenIDCapture bool
}

// CorrelationFromGlobalConfig reads the gates the way Gym's agents do (SPEC §1.4), with Python
// truthiness on the raw values. globalConfig is the global config as JSON; a JSON value that is
// not an object means "no config" and gives both gates off; JSON that does not parse is an error.
//   - ModelCallCapture = truthy(globalConfig["observability_enabled"]) (the string "false" is
//     true here, unlike the model server's typed parse; 0, "" and null are false).
//   - TokenIDCapture = globalConfig["token_id_capture"] is an object with truthy "enabled", and
//     its "all_agents" is truthy or agentTokenIDCapture (the agent's own config flag) is set.
func CorrelationFromGlobalConfig(globalConfig []byte, agentTokenIDCapture bool) (Correlation, error) {
	v, err := python.Loads(globalConfig)
	if err != nil {
		return Correlation{}, fmt.Errorf("rollout correlation: decode global config: %w", err)
	}
	if v.Kind() != ojson.KindObject {
		return Correlation{}, nil
	}
	on, _ := v.Get(ObservabilityEnabledKey) // absent: null, falsy
	c := Correlation{ModelCallCapture: python.Truthy(on)}
	if block, ok := v.Get(TokenIDCaptureKey); ok && block.Kind() == ojson.KindObject {
		enabled, _ := block.Get("enabled")
		all, _ := block.Get("all_agents")
		c.TokenIDCapture = python.Truthy(enabled) && (python.Truthy(all) || agentTokenIDCapture)
	}
	return c, nil
}

// Enabled reports whether either gate is on (Gym's _capture_correlation_enabled); only then do
// run bodies yield rollout ids.
func (c Correlation) Enabled() bool { return c.ModelCallCapture || c.TokenIDCapture }

// IDFromRun returns the rollout id of a run body (Gym's rollout_id_from_run): ok false when
// correlation is off, else [IDFromRunBody](body), including its errors.
func (c Correlation) IDFromRun(body []byte) (id string, ok bool, err error) {
	if !c.Enabled() {
		return "", false, nil
	}
	return IDFromRunBody(body)
}

// URLPathForRun returns path prefixed with the run's rollout prefix (Gym's url_path_for_run):
// PathPrefix(IDFromRun(body), TokenIDCapture) + path; path unchanged when correlation is off or
// the body has no id. Errors are those of [IDFromRunBody].
func (c Correlation) URLPathForRun(path string, body []byte) (string, error) {
	id, _, err := c.IDFromRun(body)
	if err != nil {
		return "", err
	}
	return PathPrefix(id, c.TokenIDCapture) + path, nil
}

// BaseURLForRun returns baseURL with the run's rollout prefix (Gym's base_url_for_run):
// ApplyPrefix(baseURL, IDFromRun(body), TokenIDCapture). Point an OpenAI or Anthropic client at
// the result plus "/v1". Errors are those of [IDFromRunBody].
func (c Correlation) BaseURLForRun(baseURL string, body []byte) (string, error) {
	id, _, err := c.IDFromRun(body)
	if err != nil {
		return "", err
	}
	return ApplyPrefix(baseURL, id, c.TokenIDCapture), nil
}

// ResolveModelBaseURL returns the "/v1" base URL of a model server for a rollout (Gym's
// resolve_model_base_url): ApplyPrefix("http://<host>:<port>", rolloutID, TokenIDCapture) +
// "/v1". lookup maps the model server's name to its host and port (Gym's server registry); its
// error is returned wrapped. An empty rolloutID means no prefix. The gates are not consulted
// except for the token-capture segment, as in Gym. Unlike Gym's f-string, an IPv6 host is
// bracketed (net.JoinHostPort), so the URL stays usable; other hosts give the same text.
func (c Correlation) ResolveModelBaseURL(lookup func(name string) (host string, port int, err error), name, rolloutID string) (string, error) {
	if lookup == nil {
		return "", errors.New("resolve model base url: nil lookup")
	}
	host, port, err := lookup(name)
	if err != nil {
		return "", fmt.Errorf("resolve model base url %q: %w", name, err)
	}
	base := "http://" + net.JoinHostPort(host, strconv.Itoa(port))
	return ApplyPrefix(base, rolloutID, c.TokenIDCapture) + "/v1", nil
}

// BaseURLForRun is [Correlation.BaseURLForRun] with model-call capture on and no token capture: the
// base URL a Go agent gives its model client for this run ("http://h:1" and
// {"_ng_task_index":3,"_ng_rollout_index":1} give "http://h:1/ng-rollout/3-1"). Unlike the Gym-exact
// method, it refuses an id the proxy would answer with 400 (SPEC §0 D12, [ValidateID]), such as the
// "-1-1" of "_ng_task_index": -1, with an error matching [ErrInvalidID], so the agent fails before
// its first call instead of every call failing.
func BaseURLForRun(baseURL string, body []byte) (string, error) {
	id, err := acceptedRunID("base url for run", body)
	if err != nil {
		return "", err
	}
	return ApplyPrefix(baseURL, id, false), nil
}

// URLPathForRun is [Correlation.URLPathForRun] with model-call capture on and no token capture.
// Like [BaseURLForRun] it refuses a rollout id that fails SPEC §0 D12 ([ValidateID]).
func URLPathForRun(path string, body []byte) (string, error) {
	id, err := acceptedRunID("url path for run", body)
	if err != nil {
		return "", err
	}
	return PathPrefix(id, false) + path, nil
}

// acceptedRunID returns the run's rollout id ("" when the body has none), refusing one the proxy
// would answer with 400 (SPEC §0 D12); op prefixes that error.
func acceptedRunID(op string, body []byte) (string, error) {
	id, ok, err := IDFromRunBody(body)
	if err != nil {
		return "", err
	}
	if ok {
		if err := ValidateID(id); err != nil {
			return "", fmt.Errorf("%s: %w", op, err)
		}
	}
	return id, nil
}

// URLPathForRequest returns path prefixed with the rollout prefix of an inbound agent request
// (Gym's url_path_for_request, SPEC §1.4), so calls made while serving a prefixed request stay in
// its rollout: the id of r.URL.Path parsed with [ParsePrefix], plus the token-capture segment when
// that path contains "/training-token-capture/". r nil, or a path without a prefix (a middleware may
// have stripped it), gives path unchanged. The gates are not consulted (as in Gym).
func URLPathForRequest(r *http.Request, path string) string {
	if r == nil || r.URL == nil {
		return path
	}
	var id string
	if p, ok := ParsePrefix(r.URL.Path); ok {
		id = p.ID
	}
	return urlPathForRequest(id, r.URL.Path, path)
}

// urlPathForRequest is Gym's url_path_for_request over the two parts of a Starlette request it
// reads: the route parameter rollout_id ("" when absent) and request.url.path.
func urlPathForRequest(id, urlPath, path string) string {
	return PathPrefix(id, strings.Contains(urlPath, "/"+TokenCaptureSegment+"/")) + path
}
