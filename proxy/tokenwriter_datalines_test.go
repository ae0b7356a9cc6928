package proxy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSSEEventOverDataLines: an event whose data spans several data lines (SSE joins their values
// by LF, and a JSON chunk may be split so) is read as its join and restored like a one-line event:
// the pieces of the edited join take the data lines' places in order, each with its own field
// name, space and line end, every other line in place; a data line whose join point an edit
// removed is left out; the token ids are read from the join (a fresh-user trial's upstream that
// split every chunk in two leaked the injected members to the client).
func TestSSEEventOverDataLines(t *testing.T) {
	tests := []struct {
		name, in, want string
		r              restoreRules
		editErr        string
	}{
		{
			name: "members on one piece",
			in:   "data: {\"id\":\"c\",\"model\":\"m\"\ndata: ,\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"token_ids\":[100]}],\"prompt_token_ids\":[1,2,3]}\n\n",
			want: "data: {\"id\":\"c\",\"model\":\"m\"\ndata: ,\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n",
			r:    streamRestore,
		},
		{
			name: "a removed member held a join point; other lines and line ends kept",
			in:   "id: 7\r\ndata:{\"choices\":[{\"index\":0,\"delta\":{},\"token_ids\":[1,\r\n: note\r\ndata: 2]}],\"prompt_token_ids\":[3]}\r\nevent: x\r\n\r\n",
			want: "id: 7\r\ndata:{\"choices\":[{\"index\":0,\"delta\":{}}]}\r\n: note\r\nevent: x\r\n\r\n",
			r:    streamRestore,
		},
		{
			name: "set to null across lines",
			in:   "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"logprobs\":\ndata: {\"content\":[]},\"token_ids\":[1]}],\ndata: \"prompt_token_ids\":[2]}\n\n",
			want: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"logprobs\":\ndata: null,\"token_ids\":null}],\ndata: \"prompt_token_ids\":null}\n\n",
			r:    vllmStreamRestore,
		},
		{
			name: "an empty-delta chunk over two lines is dropped whole",
			in:   "data: {\"choices\":[{\"index\":0,\"delta\":{},\ndata: \"finish_reason\":null,\"token_ids\":[]}]}\n\ndata: [DONE]\n\n",
			want: "data: [DONE]\n\n",
			r:    vllmStreamRestore,
		},
		{
			name:    "data whose join is no JSON object is passed on, as a one-line event's is",
			in:      "data: {\"a\"\ndata: :1\n\n",
			want:    "data: {\"a\"\ndata: :1\n\n",
			r:       streamRestore,
			editErr: "malformed JSON object",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, tw := runSSE([]byte(tt.in), tt.r, []byte{5, 11})
			assert.Equal(t, tt.want, string(got))
			if tt.editErr == "" {
				assert.NoError(t, tw.editErr)
			} else {
				assert.ErrorContains(t, tw.editErr, tt.editErr)
			}
			assert.Equal(t, string(got), string(editSSE(got, tt.r, nil)), "editing again changes nothing")
		})
	}
	// The ids are read from the join.
	_, tw := runSSE([]byte(tests[0].in+"data: [DONE]\n\n"), streamRestore, nil)
	ids, err := tw.acc.Result()
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2, 3}, ids.Prompt)
	assert.Equal(t, []int64{100}, ids.Generation)
}
