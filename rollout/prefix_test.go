package rollout

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
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
		Match *match `json:"match"` // captured_dialect is the proxy's (proxy.CapturedDialect)
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

// SPEC §0 D12, last paragraph: a prefix whose id or rest exists only after percent-decoding a
// separator, and a rest with a dot segment, are refused like an invalid id.
func TestParseRequestPathD12(t *testing.T) {
	tests := []struct {
		name    string
		target  string // the request target as sent
		want    Prefix
		wantErr string // "" = accepted
	}{
		{name: "plain", target: "/ng-rollout/3-1/v1/responses", want: Prefix{ID: "3-1", Rest: "/v1/responses"}},
		{name: "token capture", target: "/ng-rollout/3-1/training-token-capture/v1/chat/completions", want: Prefix{ID: "3-1", TokenCapture: true, Rest: "/v1/chat/completions"}},
		{name: "encoded letters are fine", target: "/ng-rollout/%61bc/v1/%72esponses", want: Prefix{ID: "abc", Rest: "/v1/responses"}},
		{name: "encoded slash in rest is not the prefix's", target: "/ng-rollout/3-1/v1%2Fresponses", want: Prefix{ID: "3-1", Rest: "/v1/responses"}},
		{name: "dots inside a segment", target: "/ng-rollout/a..b/v1/x..y/.z/", want: Prefix{ID: "a..b", Rest: "/v1/x..y/.z/"}},
		{name: "id with %2F", target: "/ng-rollout/a%2Fb/v1/responses", want: Prefix{ID: "a/b", Rest: "/v1/responses"}, wantErr: `"a%2Fb"`},
		{name: "id with %2f", target: "/ng-rollout/a%2fb/v1/messages", want: Prefix{ID: "a/b", Rest: "/v1/messages"}, wantErr: `"a%2fb"`},
		{name: "id with %5C", target: "/ng-rollout/a%5Cb/v1/responses", want: Prefix{ID: `a\b`, Rest: "/v1/responses"}, wantErr: `"a%5Cb"`},
		{name: "id with %5c", target: "/ng-rollout/a%5cb/v1/responses", want: Prefix{ID: `a\b`, Rest: "/v1/responses"}, wantErr: `"a%5cb"`},
		{name: "rest slash encoded", target: "/ng-rollout/abc%2Fv1%2Fresponses", want: Prefix{ID: "abc/v1/responses", Rest: "/"}, wantErr: `"abc%2Fv1%2Fresponses"`},
		{name: "id segment with token segment after it", target: "/ng-rollout/a%2Fb/training-token-capture/v1/chat/completions", want: Prefix{ID: "a/b", TokenCapture: true, Rest: "/v1/chat/completions"}, wantErr: `"a%2Fb"`},
		{name: "first segment with %2F", target: "/ng-rollout%2Fabc/v1/responses", want: Prefix{ID: "abc", Rest: "/v1/responses"}, wantErr: `"ng-rollout%2Fabc"`},
		{name: "token segment with %2F", target: "/ng-rollout/abc/training-token-capture%2Fv1/responses", want: Prefix{ID: "abc", TokenCapture: true, Rest: "/v1/responses"}, wantErr: `"training-token-capture%2Fv1"`},
		{name: "dot dot segment", target: "/ng-rollout/3-1/../v1/responses", want: Prefix{ID: "3-1", Rest: "/../v1/responses"}, wantErr: `".." segment`},
		{name: "dot segment", target: "/ng-rollout/3-1/v1/./responses", want: Prefix{ID: "3-1", Rest: "/v1/./responses"}, wantErr: `".." segment`},
		{name: "trailing dot segment", target: "/ng-rollout/3-1/v1/.", want: Prefix{ID: "3-1", Rest: "/v1/."}, wantErr: `".." segment`},
		{name: "encoded dot dot", target: "/ng-rollout/3-1/v1/%2e%2e/admin", want: Prefix{ID: "3-1", Rest: "/v1/../admin"}, wantErr: `".." segment`},
		{name: "encoded upper dot", target: "/ng-rollout/3-1/%2E/v1/responses", want: Prefix{ID: "3-1", Rest: "/./v1/responses"}, wantErr: `".." segment`},
		{name: "half encoded dot dot", target: "/ng-rollout/3-1/.%2E/v1/responses", want: Prefix{ID: "3-1", Rest: "/../v1/responses"}, wantErr: `".." segment`},
		{name: "dot segment after token segment", target: "/ng-rollout/3-1/training-token-capture/../v1/responses", want: Prefix{ID: "3-1", TokenCapture: true, Rest: "/../v1/responses"}, wantErr: `".." segment`},
		{name: "invalid id", target: "/ng-rollout/a%20b/v1/responses", want: Prefix{ID: "a b", Rest: "/v1/responses"}, wantErr: IDPattern},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := url.ParseRequestURI(tt.target)
			require.NoError(t, err)
			p, ok, err := ParseRequestPath(u.Path, u.EscapedPath())
			require.True(t, ok)
			assert.Equal(t, tt.want, p)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidID)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
	t.Run("no prefix", func(t *testing.T) {
		for _, path := range []string{"/v1/responses", "/ng-rollout/abc", "/ng-rollout//v1/responses"} {
			p, ok, err := ParseRequestPath(path, path)
			assert.False(t, ok)
			assert.NoError(t, err)
			assert.Equal(t, Prefix{}, p)
		}
	})
	t.Run("escaped that does not match path is ignored", func(t *testing.T) {
		p, ok, err := ParseRequestPath("/ng-rollout/a/v1/responses", "/other%2Fpath")
		require.True(t, ok)
		require.NoError(t, err)
		assert.Equal(t, Prefix{ID: "a", Rest: "/v1/responses"}, p)
	})
}

func TestHasEncodedSeparator(t *testing.T) {
	for s, want := range map[string]bool{
		"": false, "%": false, "%2": false, "a%2F": true, "%2f": true, "%5C": true, "%5cx": true,
		"%25": false, "%252F": false, "%%2F": true, "%2G": false, "%3F": false, "%2E": false, "%5D": false,
	} {
		assert.Equal(t, want, hasEncodedSeparator(s), s)
	}
}

// FuzzParseRequestPath checks that the D12 parse never panics, agrees with ParsePrefix on whether
// a prefix is there, and accepts only ids that pass ValidateID and rests without dot segments.
func FuzzParseRequestPath(f *testing.F) {
	for _, s := range []string{"/ng-rollout/a%2Fb/v1/responses", "/ng-rollout/3-1/%2e%2e/x", "/ng-rollout/r/training-token-capture%2F/v1", "/ng-rollout/%61/v1/messages"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, escaped string) {
		path, err := url.PathUnescape(escaped)
		if err != nil {
			return
		}
		p, ok, err := ParseRequestPath(path, escaped)
		q, qok := ParsePrefix(path)
		if ok != qok {
			t.Fatalf("%q: ok %v, ParsePrefix %v", escaped, ok, qok)
		}
		if !ok {
			return
		}
		if err == nil {
			n := 2
			if p.TokenCapture {
				n = 3
			}
			segs := strings.SplitN(strings.TrimPrefix(escaped, "/"), "/", n+1)
			if p != q || ValidateID(p.ID) != nil || hasDotSegment(p.Rest) || len(segs) <= n || hasEncodedSeparator(strings.Join(segs[:n], "/")) {
				t.Fatalf("%q accepted as %+v", escaped, p)
			}
			return
		}
		if !errors.Is(err, ErrInvalidID) || !strings.HasPrefix(p.Rest, "/") {
			t.Fatalf("%q: refused as %+v: %v", escaped, p, err)
		}
	})
}

// TestParsePrefixTokenCaptureVectors runs the capture middleware's paths (token_capture.json group
// MW, TOKENS.md §1.3) through ParsePrefix: the downstream path is the rest after the prefix (the
// whole path when there is none), and a case where the middleware minted a context or marked the
// rollout incomplete parsed the token-capture segment and the id. What the middleware then does
// (the context, the unobserved-path mark) is tested with the store (tokens) and the proxy.
func TestParsePrefixTokenCaptureVectors(t *testing.T) {
	var n int
	for _, c := range testvectors.Load(t, "token_capture.json") {
		if !strings.HasPrefix(c.Name, "MW-") {
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			var in struct{ Path string }
			require.NoError(t, json.Unmarshal(c.Input, &in))
			var want struct {
				DownstreamPath string `json:"downstream_path"`
				Context        *struct {
					RolloutID string `json:"rollout_id"`
				} `json:"context"`
				FilesAfter map[string]string `json:"files_after"`
			}
			require.NoError(t, json.Unmarshal(c.Expected, &want))
			p, ok := ParsePrefix(in.Path)
			if !ok {
				assert.Equal(t, want.DownstreamPath, in.Path)
				assert.Nil(t, want.Context)
				return
			}
			assert.Equal(t, want.DownstreamPath, p.Rest)
			if want.Context != nil {
				assert.True(t, p.TokenCapture)
				assert.Equal(t, want.Context.RolloutID, p.ID)
			}
			for name := range want.FilesAfter {
				if id, ok := strings.CutSuffix(name, ".tokens.incomplete"); ok {
					assert.True(t, p.TokenCapture)
					assert.Equal(t, id, p.ID)
				}
			}
		})
	}
	require.Equal(t, 14, n, "MW case count")
}
