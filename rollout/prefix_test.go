package rollout

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testvectors"
)

func TestParsePrefixVectors(t *testing.T) {
	type match struct {
		RolloutID    string `json:"rollout_id"`
		TokenCapture *bool  `json:"token_capture"`
		Rest         string `json:"rest"`
	}
	type expected struct {
		Match *match `json:"match"` // captured_dialect is the proxy's (sdk.CapturedDialect)
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
				assert.Equal(t, Prefix{ID: want.Match.RolloutID, TokenCapture: wantTC, Rest: want.Match.Rest}, p)
			}
		})
	}
}

func TestParseResourcesServerPrefixSpec58(t *testing.T) {
	for _, id := range []string{"s7-3-2", "step7.task3", "a", "A_b-1.2"} {
		t.Run(id, func(t *testing.T) {
			p, ok := ParseResourcesServerPrefix("/ng-rollout/" + id + "/v1/responses")
			require.True(t, ok)
			assert.Equal(t, Prefix{ID: id, Rest: "/v1/responses"}, p)
		})
	}
}

func TestValidateIDD12(t *testing.T) {
	valid := []string{"a", "0", "3-1", "s7.0-0-a1", "A_b-1.2", "x-", "a..b", strings.Repeat("a", MaxIDBytes)}
	for _, id := range valid {
		t.Run("valid "+id[:min(len(id), 20)], func(t *testing.T) {
			require.NoError(t, ValidateID(id))
		})
	}
	invalid := []struct {
		name string
		id   string
		rule string
	}{
		{name: "leading dot", id: ".hidden", rule: IDPattern},
		{name: "leading dash", id: "-x", rule: IDPattern},
		{name: "leading underscore", id: "_x", rule: IDPattern},
		{name: "space", id: "a b", rule: IDPattern},
		{name: "slash", id: "a/b", rule: IDPattern},
		{name: "percent-decoded slash kept as text", id: "a%2Fb", rule: IDPattern},
		{name: "trailing newline (D10)", id: "a\n", rule: IDPattern},
		{name: "unicode", id: "röllout", rule: IDPattern},
		{name: "empty", id: "", rule: IDPattern},
		{name: "dot dot", id: "..", rule: IDPattern},
		{name: "invalid utf-8", id: "a\xff", rule: IDPattern},
		{name: "201 bytes", id: strings.Repeat("a", MaxIDBytes+1), rule: "longer than 200 bytes"},
	}
	for _, tt := range invalid {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateID(tt.id)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidID)
			assert.Contains(t, err.Error(), fmt.Sprintf("%q", tt.id), "names the id")
			assert.Contains(t, err.Error(), tt.rule, "names the rule")
		})
	}
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
			assert.Equal(t, path, PathPrefix(p.ID, p.TokenCapture)+p.Rest)
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
			if PathPrefix(p.ID, p.TokenCapture)+p.Rest != path {
				t.Fatalf("round trip of %q gave %+v", path, p)
			}
			if p.ID == "" || strings.Contains(p.ID, "/") || !strings.HasPrefix(p.Rest, "/") {
				t.Fatalf("bad parse of %q: %+v", path, p)
			}
			if err := ValidateID(p.ID); err == nil && (len(p.ID) > MaxIDBytes || !matchIDPattern(p.ID)) {
				t.Fatalf("invalid id %q accepted", p.ID)
			}
		}
		rp, rok := ParseResourcesServerPrefix(path)
		if rok {
			if !ok || rp.ID != p.ID || rp.TokenCapture || !matchIDPattern(rp.ID) {
				t.Fatalf("resources parse of %q: %+v vs model %+v", path, rp, p)
			}
			if PathPrefix(rp.ID, false)+rp.Rest != path {
				t.Fatalf("resources round trip of %q gave %+v", path, rp)
			}
		}
	})
}

func BenchmarkParsePrefix(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		p, ok := ParsePrefix("/ng-rollout/s7.0-0-a1/training-token-capture/v1/chat/completions")
		if !ok || ValidateID(p.ID) != nil || p.Rest != "/v1/chat/completions" {
			b.Fatal("unexpected parse")
		}
	}
}
