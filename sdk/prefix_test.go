package sdk

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
)

func TestParsePrefixVectors(t *testing.T) {
	type match struct {
		RolloutID    string `json:"rollout_id"`
		TokenCapture *bool  `json:"token_capture"`
		Rest         string `json:"rest"`
	}
	type expected struct {
		Match           *match  `json:"match"`
		CapturedDialect *string `json:"captured_dialect"`
	}
	cases := testvectors.Load(t, "prefix_parse.json")
	require.Equal(t, 38, len(cases), "prefix_parse.json case count")
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			var in struct{ Parser, Path string }
			require.NoError(t, json.Unmarshal(c.Input, &in))
			var want expected
			require.NoError(t, json.Unmarshal(c.Expected, &want))

			var p Prefix
			var ok bool
			switch in.Parser {
			case "model_server":
				p, ok = ParsePrefix(in.Path)
			case "resources_server":
				p, ok = ParseResourcesServerPrefix(in.Path)
			default:
				t.Fatalf("unknown parser %q", in.Parser)
			}
			if want.Match == nil {
				assert.False(t, ok)
				assert.Equal(t, Prefix{}, p)
			} else {
				require.True(t, ok)
				wantTC := want.Match.TokenCapture != nil && *want.Match.TokenCapture
				assert.Equal(t, Prefix{RolloutID: want.Match.RolloutID, TokenCapture: wantTC, Rest: want.Match.Rest}, p)
			}
			if in.Parser == "model_server" {
				dialect := ""
				if ok {
					dialect = CapturedDialect(p.Rest)
				}
				wantDialect := ""
				if want.CapturedDialect != nil {
					wantDialect = *want.CapturedDialect
				}
				assert.Equal(t, wantDialect, dialect)
			}
		})
	}
}

func TestParseResourcesServerPrefixSpec58(t *testing.T) {
	for _, id := range []string{"s7-3-2", "step7.task3", "a", "A_b-1.2"} {
		t.Run(id, func(t *testing.T) {
			p, ok := ParseResourcesServerPrefix("/ng-rollout/" + id + "/v1/responses")
			require.True(t, ok)
			assert.Equal(t, Prefix{RolloutID: id, Rest: "/v1/responses"}, p)
		})
	}
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

func TestValidatePrefixIDD12(t *testing.T) {
	valid := []string{"a", "0", "3-1", "s7.0-0-a1", "A_b-1.2", "x-", "a..b", strings.Repeat("a", MaxRolloutIDBytes)}
	for _, id := range valid {
		t.Run("valid "+id[:min(len(id), 20)], func(t *testing.T) {
			require.NoError(t, ValidatePrefixID(id))
		})
	}
	invalid := []struct {
		name string
		id   string
		rule string
	}{
		{name: "leading dot", id: ".hidden", rule: RolloutIDPattern},
		{name: "leading dash", id: "-x", rule: RolloutIDPattern},
		{name: "leading underscore", id: "_x", rule: RolloutIDPattern},
		{name: "space", id: "a b", rule: RolloutIDPattern},
		{name: "slash", id: "a/b", rule: RolloutIDPattern},
		{name: "percent-decoded slash kept as text", id: "a%2Fb", rule: RolloutIDPattern},
		{name: "trailing newline (D10)", id: "a\n", rule: RolloutIDPattern},
		{name: "unicode", id: "röllout", rule: RolloutIDPattern},
		{name: "empty", id: "", rule: RolloutIDPattern},
		{name: "dot dot", id: "..", rule: RolloutIDPattern},
		{name: "invalid utf-8", id: "a\xff", rule: RolloutIDPattern},
		{name: "201 bytes", id: strings.Repeat("a", MaxRolloutIDBytes+1), rule: "longer than 200 bytes"},
	}
	for _, tt := range invalid {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidatePrefixID(tt.id)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidRolloutID)
			assert.Contains(t, err.Error(), fmt.Sprintf("%q", tt.id), "names the id")
			assert.Contains(t, err.Error(), tt.rule, "names the rule")
		})
	}
}

func TestInvalidRolloutIDBodyD12(t *testing.T) {
	p, ok := ParsePrefix("/ng-rollout/a b/v1/messages")
	require.True(t, ok)
	verr := ValidatePrefixID(p.RolloutID)
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
		_, body := InvalidRolloutIDBody("/v1/responses", ValidatePrefixID("<x>&"))
		var decoded struct {
			Error struct{ Message string } `json:"error"`
		}
		require.NoError(t, json.Unmarshal(body, &decoded))
		assert.Contains(t, decoded.Error.Message, `"<x>&"`)
		assert.Contains(t, decoded.Error.Message, RolloutIDPattern)
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

func TestParsePrefixRoundTrip(t *testing.T) {
	for _, path := range []string{
		"/ng-rollout/r1/training-token-capture/",
		"/ng-rollout/r1/training-token-capture//x",
		"/ng-rollout/r\n1/x\ny",
		"/ng-rollout/\xff/\x00",
	} {
		t.Run(path, func(t *testing.T) {
			p, ok := ParsePrefix(path)
			require.True(t, ok)
			assert.Equal(t, path, RolloutPathPrefix(p.RolloutID, p.TokenCapture)+p.Rest)
		})
	}
}

func FuzzParsePrefix(f *testing.F) {
	for _, c := range testvectors.Load(f, "prefix_parse.json") {
		var in struct{ Path string }
		if err := json.Unmarshal(c.Input, &in); err != nil {
			f.Fatal(err)
		}
		f.Add(in.Path)
	}
	f.Fuzz(func(t *testing.T, path string) {
		p, ok := ParsePrefix(path)
		if !ok {
			if p != (Prefix{}) {
				t.Fatalf("no match but %+v", p)
			}
		} else {
			if RolloutPathPrefix(p.RolloutID, p.TokenCapture)+p.Rest != path {
				t.Fatalf("round trip of %q gave %+v", path, p)
			}
			if p.RolloutID == "" || strings.Contains(p.RolloutID, "/") || !strings.HasPrefix(p.Rest, "/") {
				t.Fatalf("bad parse of %q: %+v", path, p)
			}
			if err := ValidatePrefixID(p.RolloutID); err == nil && (len(p.RolloutID) > MaxRolloutIDBytes || !matchRolloutIDPattern(p.RolloutID)) {
				t.Fatalf("invalid id %q accepted", p.RolloutID)
			}
			status, body := InvalidRolloutIDBody(p.Rest, ValidatePrefixID(p.RolloutID))
			if status != http.StatusBadRequest || !json.Valid(body) {
				t.Fatalf("bad D12 response %d %q", status, body)
			}
		}
		rp, rok := ParseResourcesServerPrefix(path)
		if rok {
			if !ok || rp.RolloutID != p.RolloutID || rp.TokenCapture || !matchRolloutIDPattern(rp.RolloutID) {
				t.Fatalf("resources parse of %q: %+v vs model %+v", path, rp, p)
			}
			if RolloutPathPrefix(rp.RolloutID, false)+rp.Rest != path {
				t.Fatalf("resources round trip of %q gave %+v", path, rp)
			}
		}
	})
}

func BenchmarkParsePrefix(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		p, ok := ParsePrefix("/ng-rollout/s7.0-0-a1/training-token-capture/v1/chat/completions")
		if !ok || ValidatePrefixID(p.RolloutID) != nil || CapturedDialect(p.Rest) != "chat" {
			b.Fatal("unexpected parse")
		}
	}
}
