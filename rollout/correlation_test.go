package rollout

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
)

// urlHelperInput is the input object of a url_helpers.json case.
type urlHelperInput struct {
	Fn                  string          `json:"fn"`
	RolloutID           *string         `json:"rollout_id"`
	TokenCapture        bool            `json:"token_capture"`
	BaseURL             string          `json:"base_url"`
	URLPath             string          `json:"url_path"`
	Body                json.RawMessage `json:"body"`
	GlobalConfig        json.RawMessage `json:"global_config"`
	AgentTokenIDCapture bool            `json:"agent_token_id_capture"`
	Host                string          `json:"host"`
	Port                int             `json:"port"`
	Request             json.RawMessage `json:"request"`
}

func TestURLHelpersVectors(t *testing.T) {
	cases := testvectors.Load(t, "url_helpers.json")
	require.Equal(t, 55, len(cases), "url_helpers.json case count")
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			var in urlHelperInput
			require.NoError(t, json.Unmarshal(c.Input, &in))
			want := decodeExpectation(t, c.Expected)
			id := ""
			if in.RolloutID != nil {
				id = *in.RolloutID
			}
			corr := func() Correlation {
				c, err := CorrelationFromGlobalConfig(in.GlobalConfig, in.AgentTokenIDCapture)
				require.NoError(t, err)
				return c
			}
			body := func() []byte { return in.Body }

			var got string
			var ok = true
			var err error
			switch in.Fn {
			case "rollout_path_prefix":
				got = PathPrefix(id, in.TokenCapture)
			case "apply_rollout_prefix":
				got = ApplyPrefix(in.BaseURL, id, in.TokenCapture)
			case "rollout_id_from_run":
				got, ok, err = corr().IDFromRun(body())
			case "url_path_for_run":
				got, err = corr().URLPathForRun(in.URLPath, body())
			case "base_url_for_run":
				got, err = corr().BaseURLForRun(in.BaseURL, body())
			case "resolve_model_base_url":
				lookup := func(name string) (string, int, error) {
					require.Equal(t, "policy_model", name)
					return in.Host, in.Port, nil
				}
				got, err = corr().ResolveModelBaseURL(lookup, "policy_model", id)
			case "url_path_for_request":
				got = urlPathForRequestVector(t, in.Request, in.URLPath)
			default:
				t.Fatalf("unknown fn %q", in.Fn)
			}
			switch {
			case want.err != "":
				assertVectorError(t, want.err, err)
			case want.isNull:
				require.NoError(t, err)
				assert.False(t, ok)
				assert.Empty(t, got)
			default:
				require.NoError(t, err)
				assert.True(t, ok)
				assert.Equal(t, want.value, got)
			}
		})
	}
}

// urlPathForRequestVector runs the adapter on a vector's Python request description: null = no
// request; path_params absent = no mapping; url_path absent = "".
func urlPathForRequestVector(t *testing.T, raw json.RawMessage, path string) string {
	t.Helper()
	req, _ := testvectors.Decode(t, raw).(map[string]any)
	params, _ := req["path_params"].(map[string]any)
	id, _ := params["rollout_id"].(string)
	urlPath, _ := req["url_path"].(string)
	return urlPathForRequest(id, urlPath, path)
}

func TestURLPathForRequest(t *testing.T) {
	// SPEC §8 #48 through real requests: the id comes from the inbound prefix.
	tests := []struct {
		name   string
		target string
		want   string
	}{
		{name: "prefixed", target: "/ng-rollout/7-0/v1/responses", want: "/ng-rollout/7-0/v1/responses"},
		{name: "unprefixed", target: "/v1/responses", want: "/v1/responses"},
		{name: "token capture", target: "/ng-rollout/7-0/training-token-capture/v1/responses", want: "/ng-rollout/7-0/training-token-capture/v1/responses"},
		{name: "token segment without trailing slash", target: "/ng-rollout/7-0/training-token-capture", want: "/ng-rollout/7-0/v1/responses"},
		{name: "token segment but no rollout id", target: "/training-token-capture/v1/responses", want: "/v1/responses"},
		{name: "prefix without rest", target: "/ng-rollout/7-0", want: "/v1/responses"},
		{name: "decoded id", target: "/ng-rollout/a%20b/run", want: "/ng-rollout/a b/v1/responses"},
		{name: "query ignored", target: "/ng-rollout/s7.0-0/run?x=/training-token-capture/", want: "/ng-rollout/s7.0-0/v1/responses"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, tt.target, nil)
			assert.Equal(t, tt.want, URLPathForRequest(r, "/v1/responses"))
		})
	}
	t.Run("nil request", func(t *testing.T) {
		assert.Equal(t, "/v1/responses", URLPathForRequest(nil, "/v1/responses"))
	})
	t.Run("nil URL", func(t *testing.T) {
		assert.Equal(t, "/v1/responses", URLPathForRequest(&http.Request{}, "/v1/responses"))
	})
}

func TestPrefixRoundTripSpec43(t *testing.T) {
	assert.Equal(t, "http://h:1/ng-rollout/r1", ApplyPrefix("http://h:1", "r1", false))
	assert.Equal(t, "http://h:1/", ApplyPrefix("http://h:1/", "", false))
	assert.Equal(t, "", PathPrefix("", false))
	p, ok := ParsePrefix("/ng-rollout/task-7/v1/chat/completions")
	require.True(t, ok)
	assert.Equal(t, Prefix{ID: "task-7", Rest: "/v1/chat/completions"}, p)
}

func TestCorrelationGatesSpec44to47And113(t *testing.T) {
	body := map[string]any{TaskIndexKey: json.Number("3"), IndexKey: json.Number("1")}
	zero := map[string]any{TaskIndexKey: json.Number("0"), IndexKey: json.Number("0")}
	tests := []struct {
		name         string
		globalConfig any
		agentOptIn   bool
		wantCorr     Correlation
		wantPath     string
		wantZeroID   string
	}{
		{name: "113 empty config", globalConfig: map[string]any{}, wantPath: "/v1/responses"},
		{name: "113 observability on", globalConfig: map[string]any{"observability_enabled": true}, wantCorr: Correlation{ModelCallCapture: true}, wantPath: "/ng-rollout/3-1/v1/responses", wantZeroID: "0-0"},
		{name: "45 observability off", globalConfig: map[string]any{"observability_enabled": false}, wantPath: "/v1/responses"},
		{name: "45 non-mapping config", globalConfig: []any{"observability_enabled"}, wantPath: "/v1/responses"},
		{name: "45 nil config", globalConfig: nil, wantPath: "/v1/responses"},
		{name: "46 token block, agent opted in", globalConfig: map[string]any{"observability_enabled": true, "token_id_capture": map[string]any{"enabled": true}}, agentOptIn: true, wantCorr: Correlation{ModelCallCapture: true, TokenIDCapture: true}, wantPath: "/ng-rollout/3-1/training-token-capture/v1/responses", wantZeroID: "0-0"},
		{name: "46 token block, agent not opted in", globalConfig: map[string]any{"observability_enabled": true, "token_id_capture": map[string]any{"enabled": true}}, wantCorr: Correlation{ModelCallCapture: true}, wantPath: "/ng-rollout/3-1/v1/responses", wantZeroID: "0-0"},
		{name: "113 token only needs agent opt-in", globalConfig: map[string]any{"token_id_capture": map[string]any{"enabled": true}}, wantPath: "/v1/responses"},
		{name: "113 token block and opt-in", globalConfig: map[string]any{"token_id_capture": map[string]any{"enabled": true}}, agentOptIn: true, wantCorr: Correlation{TokenIDCapture: true}, wantPath: "/ng-rollout/3-1/training-token-capture/v1/responses", wantZeroID: "0-0"},
		{name: "113 opt-in without run-level enable", globalConfig: map[string]any{"token_id_capture": map[string]any{"all_agents": true}}, agentOptIn: true, wantPath: "/v1/responses"},
		{name: "47 all_agents overrides opt-in", globalConfig: map[string]any{"token_id_capture": map[string]any{"enabled": true, "all_agents": true}}, wantCorr: Correlation{TokenIDCapture: true}, wantPath: "/ng-rollout/3-1/training-token-capture/v1/responses", wantZeroID: "0-0"},
		{name: "string false is truthy", globalConfig: map[string]any{"observability_enabled": "false"}, wantCorr: Correlation{ModelCallCapture: true}, wantPath: "/ng-rollout/3-1/v1/responses", wantZeroID: "0-0"},
		{name: "float 0.0 is falsy", globalConfig: map[string]any{"observability_enabled": json.Number("0.0")}, wantPath: "/v1/responses"},
		{name: "empty token block is falsy", globalConfig: map[string]any{"token_id_capture": map[string]any{}}, agentOptIn: true, wantPath: "/v1/responses"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := CorrelationFromGlobalConfig(js(t, tt.globalConfig), tt.agentOptIn)
			require.NoError(t, err)
			assert.Equal(t, tt.wantCorr, c)
			assert.Equal(t, tt.wantCorr != Correlation{}, c.Enabled())
			got, err := c.URLPathForRun("/v1/responses", js(t, body))
			require.NoError(t, err)
			assert.Equal(t, tt.wantPath, got)
			id, ok, err := c.IDFromRun(js(t, zero))
			require.NoError(t, err)
			assert.Equal(t, tt.wantZeroID != "", ok)
			assert.Equal(t, tt.wantZeroID, id)
		})
	}
}

func TestResolveModelBaseURL(t *testing.T) {
	lookup := func(host string, port int) func(string) (string, int, error) {
		return func(string) (string, int, error) { return host, port, nil }
	}
	tests := []struct {
		name   string
		c      Correlation
		lookup func(string) (string, int, error)
		id     string
		want   string
	}{
		{name: "rid", lookup: lookup("h", 1), id: "rid", want: "http://h:1/ng-rollout/rid/v1"},
		{name: "no rid", lookup: lookup("h", 1), want: "http://h:1/v1"},
		{name: "token capture", c: Correlation{TokenIDCapture: true}, lookup: lookup("h", 1), id: "rid", want: "http://h:1/ng-rollout/rid/training-token-capture/v1"},
		{name: "ipv6 bracketed", lookup: lookup("::1", 8000), id: "r", want: "http://[::1]:8000/ng-rollout/r/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.c.ResolveModelBaseURL(tt.lookup, "policy_model", tt.id)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	t.Run("lookup error", func(t *testing.T) {
		errUnknown := errors.New("unknown server")
		_, err := Correlation{}.ResolveModelBaseURL(func(string) (string, int, error) { return "", 0, errUnknown }, "judge", "r")
		require.ErrorIs(t, err, errUnknown)
		assert.Contains(t, err.Error(), `"judge"`)
	})
	t.Run("nil lookup", func(t *testing.T) {
		_, err := Correlation{}.ResolveModelBaseURL(nil, "judge", "r")
		require.Error(t, err)
	})
}

func TestTopLevelHelpersAlwaysCapture(t *testing.T) {
	body := map[string]any{TaskIndexKey: json.Number("3"), IndexKey: json.Number("1")}
	got, err := BaseURLForRun("http://h:1/", js(t, body))
	require.NoError(t, err)
	assert.Equal(t, "http://h:1/ng-rollout/3-1", got)
	got, err = URLPathForRun("/v1/messages", js(t, body))
	require.NoError(t, err)
	assert.Equal(t, "/ng-rollout/3-1/v1/messages", got)
	got, err = BaseURLForRun("http://h:1/", []byte(`{}`))
	require.NoError(t, err)
	assert.Equal(t, "http://h:1/", got)
	_, err = BaseURLForRun("http://h:1", js(t, map[string]any{IDKey: "bad id"}))
	require.ErrorIs(t, err, ErrInvalidID)
	_, err = URLPathForRun("/v1/responses", js(t, map[string]any{IDKey: "bad id"}))
	require.ErrorIs(t, err, ErrInvalidID)
}

func TestCorrelationFromGlobalConfigInvalidJSON(t *testing.T) {
	_, err := CorrelationFromGlobalConfig([]byte(`{"observability_enabled":`), false)
	require.ErrorContains(t, err, "decode global config")
}

// The always-on Go conveniences refuse the ids the proxy answers with 400 (SPEC D12); the
// Correlation methods keep Gym's exact behaviour (vectors/url_helpers.json).
func TestTopLevelHelpersRefuseD12(t *testing.T) {
	long := strings.Repeat("r", 300)
	tests := []struct {
		name string
		body map[string]any
		id   string // the id SPEC §1.2 derives, which Correlation still uses
		want []string
	}{
		{name: "negative task index", body: map[string]any{TaskIndexKey: json.Number("-1"), IndexKey: json.Number("1")},
			id: "-1-1", want: []string{`"-1-1"`, IDPattern}},
		{name: "float task index", body: map[string]any{TaskIndexKey: json.Number("0.5"), IndexKey: json.Number("1")},
			id: "0.5-1"},
		{name: "string index with a slash", body: map[string]any{TaskIndexKey: "a/b", IndexKey: json.Number("0")},
			id: "a/b-0", want: []string{`"a/b-0"`, IDPattern}},
		{name: "explicit id of 300 bytes", body: map[string]any{IDKey: long},
			id: long, want: []string{long, "longer than 200 bytes (300)"}},
		{name: "attempt suffix over 200 bytes", body: map[string]any{IDKey: long[:199], AttemptIndexKey: json.Number("3")},
			id: long[:199] + "-a3", want: []string{"longer than 200 bytes (202)"}},
		{name: "exactly 200 bytes", body: map[string]any{IDKey: long[:200]}, id: long[:200]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := js(t, tt.body)
			gym, err := Correlation{ModelCallCapture: true}.BaseURLForRun("http://h:1", body)
			require.NoError(t, err, "the Correlation method stays Gym-exact")
			assert.Equal(t, "http://h:1/ng-rollout/"+tt.id, gym)
			gymPath, err := Correlation{ModelCallCapture: true}.URLPathForRun("/v1/responses", body)
			require.NoError(t, err)

			base, err := BaseURLForRun("http://h:1", body)
			path, perr := URLPathForRun("/v1/responses", body)
			if len(tt.want) == 0 {
				require.NoError(t, err)
				require.NoError(t, perr)
				assert.Equal(t, gym, base)
				assert.Equal(t, gymPath, path)
				return
			}
			for _, e := range []error{err, perr} {
				require.Error(t, e)
				require.ErrorIs(t, e, ErrInvalidID)
				for _, w := range tt.want {
					assert.Contains(t, e.Error(), w)
				}
			}
			assert.Contains(t, err.Error(), "base url for run: ")
			assert.Contains(t, perr.Error(), "url path for run: ")
			assert.Empty(t, base)
			assert.Empty(t, path)
		})
	}
}
