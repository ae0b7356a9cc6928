package proxy

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTokenCaptureOneSampleRule: a token-captured call is refused before forwarding (HTTP 400,
// invalid_n) exactly when the reference's `n not in (None, 1)` holds for the n json.loads reads
// (docs/TOKENS.md §1.5 step 6, §0 T3): Python compares with ==, so 1.0, 1e0 and true (True == 1)
// are one sample, "1", 1.5, 2, false and NaN are not; the same for vLLM and SGLang.
func TestTokenCaptureOneSampleRule(t *testing.T) {
	cases := []struct {
		n       string // the member's JSON text; "" leaves it out
		refused bool
	}{
		{"", false}, {"null", false}, {"1", false}, {"1.0", false}, {"1e0", false}, {"10E-1", false},
		{"1.00000000000000001", false}, {"true", false},
		{"2", true}, {"0", true}, {"-1", true}, {"1.5", true}, {"0.9999", true}, {`"1"`, true}, {"false", true},
		{"[1]", true}, {`{"n":1}`, true}, {"1e400", true}, {"NaN", true}, {"Infinity", true},
		{"18446744073709551617", true},
	}
	for _, src := range []TokenSource{TokenSourceVLLM, TokenSourceSGLang} {
		for _, c := range cases {
			t.Run(string(src)+" n="+c.n, func(t *testing.T) {
				f := &fakeVLLM{inline: true, sglang: src == TokenSourceSGLang}
				env, _, _ := tokenEnv(t, f, src)
				body := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
				if c.n != "" {
					body = `{"model":"m","n":` + c.n + `,"messages":[{"role":"user","content":"hi"}]}`
				}
				resp, b, err := env.post(t, tokenPath, body, nil)
				require.NoError(t, err)
				if c.refused {
					assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", b)
					assert.Contains(t, string(b), `"code":"invalid_n"`)
					assert.Empty(t, f.requests, "not forwarded")
					return
				}
				assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
				assert.Len(t, f.requests, 1, "forwarded")
			})
		}
	}
}
