package proxy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEditAnswerPythonJSON: an answer Python's json.dumps wrote (NaN, ±Infinity, integers beyond
// 64 bits, floats beyond the float64 range) is restored like strict JSON (docs/TOKENS.md §0 T2):
// the members the injection caused set back to null, every other byte kept, the literals in
// strings and values untouched.
func TestEditAnswerPythonJSON(t *testing.T) {
	chat := restoreRules{topNull: []string{"prompt_token_ids"}, choiceNull: []string{"token_ids", "logprobs"}}
	cases := []struct{ name, in, want string }{
		{"NaN log prob",
			`{"id": "c", "choices": [{"index": 0, "message": {"content": "NaN"}, "logprobs": {"content": [{"token": "x", "logprob": NaN}]}, "token_ids": [4]}], "prompt_token_ids": [1, 2]}`,
			`{"id": "c", "choices": [{"index": 0, "message": {"content": "NaN"}, "logprobs": null, "token_ids": null}], "prompt_token_ids": null}`},
		{"-Infinity and Infinity",
			`{"choices":[{"logprobs":{"content":[{"logprob":-Infinity},{"logprob":Infinity}]},"token_ids":[4,5]}],"prompt_token_ids":[1]}`,
			`{"choices":[{"logprobs":null,"token_ids":null}],"prompt_token_ids":null}`},
		{"id beyond 64 bits",
			`{"choices":[{"logprobs":null,"token_ids":[4]}],"prompt_token_ids":[1180591620717411303424]}`,
			`{"choices":[{"logprobs":null,"token_ids":null}],"prompt_token_ids":null}`},
		{"NaN kept where the proxy caused nothing",
			`{"usage": {"score": NaN, "big": 1180591620717411303424, "far": -1e400}, "choices": [{"token_ids": [4]}], "prompt_token_ids": [1]}`,
			`{"usage": {"score": NaN, "big": 1180591620717411303424, "far": -1e400}, "choices": [{"token_ids": null}], "prompt_token_ids": null}`},
		{"overflowing float log prob",
			`{"choices":[{"logprobs":{"content":[{"logprob":-1e400}]}}]}`,
			`{"choices":[{"logprobs":null}]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := editAnswer([]byte(c.in), chat)
			require.NoError(t, err)
			assert.Equal(t, c.want, string(got))
		})
	}
}
