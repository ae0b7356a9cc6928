package rollouts

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadIDs(t *testing.T) {
	in := strings.Join([]string{
		`{"_ng_task_index":0,"_ng_rollout_index":1,"reward":1.0}`,
		``,
		`{"prompt":"no identity"}`,
		`not json`,
		`{"_ng_rollout_id":"explicit.id-7"}`,
		`{"_ng_rollout_id":"bad id"}`,
		`{"_ng_task_index":2,"_ng_rollout_index":0,"_ng_attempt_index":1}`,
		`{"_ng_task_index":-1,"_ng_rollout_index":1}`,
	}, "\n") // the last line has no newline
	ids, rowErrs, err := ReadIDs(context.Background(), strings.NewReader(in))
	require.NoError(t, err)
	assert.Equal(t, []RowID{{Line: 1, RolloutID: "0-1"}, {Line: 5, RolloutID: "explicit.id-7"}, {Line: 7, RolloutID: "2-0-a1"}}, ids)
	require.Len(t, rowErrs, 3)
	assert.Equal(t, 4, rowErrs[0].Line)
	assert.Contains(t, rowErrs[0].Error(), "not a JSON object")
	assert.Equal(t, 6, rowErrs[1].Line)
	assert.Contains(t, rowErrs[1].Error(), "bad id")
	assert.Equal(t, 8, rowErrs[2].Line)
	assert.Contains(t, rowErrs[2].Error(), "-1-1")
}

func TestReadIDsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := ReadIDs(ctx, strings.NewReader(`{"_ng_rollout_id":"a"}`+"\n"))
	require.ErrorIs(t, err, context.Canceled)
}

func FuzzReadIDs(f *testing.F) {
	f.Add([]byte(`{"_ng_task_index":0,"_ng_rollout_index":1}` + "\n" + `{"_ng_rollout_id":"x"}`))
	f.Add([]byte("\n\n{]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ids, rowErrs, err := ReadIDs(context.Background(), strings.NewReader(string(data)))
		require.NoError(t, err)
		lines := strings.Count(string(data), "\n") + 1
		require.LessOrEqual(t, len(ids)+len(rowErrs), lines)
		for _, id := range ids {
			require.NotEmpty(t, id.RolloutID)
			require.GreaterOrEqual(t, id.Line, 1)
		}
	})
}
