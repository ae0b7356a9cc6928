package stream

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTokenAccumulator(t *testing.T) {
	first := `{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null}],"prompt_token_ids":[1,2,3]}`
	tok := func(id, text string) string {
		return `{"choices":[{"index":0,"delta":{"content":"x"},"logprobs":{"content":[{"token":"` + text + `","logprob":-0.5}]},"token_ids":[` + id + `]}]}`
	}
	tests := []struct {
		name    string
		data    []string
		want    TokenIDs
		wantErr string
	}{
		{name: "inline ids", data: []string{first, tok("7", "a"), tok("8", "b"), "[DONE]"},
			want: TokenIDs{Prompt: []int64{1, 2, 3}, Generation: []int64{7, 8}, LogProbs: []float64{-0.5, -0.5}, HasPrompt: true, HasGeneration: true, LogProbTokenID: []int64{0, 0}, FirstText: 0}},
		{name: "token_id log probs", data: []string{first, `{"choices":[{"index":0,"logprobs":{"content":[{"token":"token_id:9","logprob":-1}]}}]}`, "[DONE]"},
			want: TokenIDs{Prompt: []int64{1, 2, 3}, LogProbs: []float64{-1}, HasPrompt: true, LogProbTokenID: []int64{9}, LogProbIDs: true}},
		{name: "truncated", data: []string{first, tok("7", "a")}, wantErr: "the stream ended before [DONE]"},
		{name: "second choice", data: []string{`{"choices":[{"index":1}]}`, "[DONE]"}, wantErr: "n=1"},
		{name: "prompt twice", data: []string{first, first, "[DONE]"}, wantErr: "prompt_token_ids in more than one chunk"},
		{name: "not an object", data: []string{"[1]", "[DONE]"}, wantErr: "chunk 1 is not a JSON object"},
		{name: "bool logprob", data: []string{`{"choices":[{"logprobs":{"content":[{"token":"a","logprob":true}]}}]}`, "[DONE]"}, wantErr: "choice.logprobs.content[0].logprob must be numeric."},
		{name: "chunk after done", data: []string{"[DONE]", first}, wantErr: "a chunk after [DONE]"},
		{name: "string ids", data: []string{`{"choices":[],"prompt_token_ids":["1"]}`, "[DONE]"}, wantErr: "`prompt_token_ids` must be a list of integer token IDs."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a TokenAccumulator
			for _, d := range tt.data {
				a.Feed([]byte(d))
			}
			got, err := a.Result()
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
