package rollouts

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/rollout"
)

// seed gives every id a capture file and a marker in s.
func seed(t *testing.T, s *capture.Store, ids ...string) {
	t.Helper()
	for _, id := range ids {
		writeCapture(t, s, id, callLine("c-"+id, usage, "1.0"))
		require.NoError(t, s.MarkIncomplete(id))
	}
}

// present reports whether id's capture file and marker exist in s.
func present(t *testing.T, s *capture.Store, id string) (file, marker bool) {
	t.Helper()
	p, err := s.CapturePath(id)
	require.NoError(t, err)
	_, err = os.Stat(p)
	file = err == nil
	m, err := s.MarkerPath(id)
	require.NoError(t, err)
	_, err = os.Stat(m)
	return file, err == nil
}

func TestClear(t *testing.T) {
	a, b := newStore(t), newStore(t)
	seed(t, a, "0-0", "0-1-a1", "s7", "9-9")
	seed(t, b, "0-0", "9-9")
	input := `{"_ng_task_index":0,"_ng_rollout_index":0}

{"_ng_task_index":0,"_ng_rollout_index":1,"_ng_attempt_index":1}
{"reward":1.0}
{"_ng_rollout_id":"s7"}
{"_ng_task_index":0,"_ng_rollout_index":0}
{"_ng_task_index":4,"_ng_rollout_index":4}
`
	sum, err := Clear(strings.NewReader(input), []*capture.Store{a, b})
	require.NoError(t, err)
	assert.Equal(t, ClearSummary{
		IDs:     []string{"0-0", "0-1-a1", "s7", "4-4"},
		Cleared: []string{"0-0", "0-1-a1", "s7"}, // 4-4 had nothing to remove
		Files:   2 + 2 + 2 + 2,                   // 0-0 in a and b, 0-1-a1 and s7 in a
	}, sum)
	for _, s := range []*capture.Store{a, b} {
		for _, id := range []string{"0-0", "0-1-a1", "s7", "4-4"} {
			f, m := present(t, s, id)
			assert.False(t, f, id)
			assert.False(t, m, id)
		}
		f, m := present(t, s, "9-9")
		assert.True(t, f && m, "other rollouts untouched")
	}
}

func TestClearValidatesEveryRowFirst(t *testing.T) {
	tests := []struct {
		name string
		bad  string
		want []string
		is   error
	}{
		{name: "malformed explicit id", bad: `{"_ng_rollout_id":"has space"}`,
			want: []string{"line 3:", "_ng_rollout_id must be a string", "'has space'"}, is: rollout.ErrInvalidID},
		{name: "derived id not a file name", bad: `{"_ng_task_index":"../x","_ng_rollout_index":0}`,
			want: []string{"line 3:", `"../x-0"`, "SPEC D12", rollout.IDPattern}, is: rollout.ErrInvalidID},
		{name: "derived id with a leading dash", bad: `{"_ng_task_index":-1,"_ng_rollout_index":1}`,
			want: []string{"line 3:", `"-1-1"`, rollout.IDPattern}, is: rollout.ErrInvalidID},
		{name: "explicit id longer than 200 bytes", bad: `{"_ng_rollout_id":"` + strings.Repeat("r", 300) + `"}`,
			want: []string{"line 3:", strings.Repeat("r", 300), "longer than 200 bytes (300)"}, is: rollout.ErrInvalidID},
		{name: "attempt suffix pushes the id over 200 bytes", bad: `{"_ng_rollout_id":"` + strings.Repeat("r", 199) + `","_ng_attempt_index":1}`,
			want: []string{"line 3:", "-a1", "longer than 200 bytes (202)"}, is: rollout.ErrInvalidID},
		{name: "bad attempt index", bad: `{"_ng_task_index":1,"_ng_rollout_index":0,"_ng_attempt_index":[1]}`,
			want: []string{"line 3:", "_ng_attempt_index"}},
		{name: "not an object", bad: `"row"`, want: []string{"line 3:", `not a JSON object (line starts "\"row\"")`}},
		{name: "not JSON", bad: `{"_ng_task_index":`, want: []string{"line 3:", "not a JSON object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			seed(t, s, "0-0", "0-1")
			input := "{\"_ng_task_index\":0,\"_ng_rollout_index\":0}\n\n" + tt.bad + "\n{\"_ng_task_index\":0,\"_ng_rollout_index\":1}\n"
			sum, err := Clear(strings.NewReader(input), []*capture.Store{s})
			require.Error(t, err)
			assert.Equal(t, ClearSummary{}, sum)
			assert.Contains(t, err.Error(), "nothing removed")
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			var re RowError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, 3, re.Line)
			for _, id := range []string{"0-0", "0-1"} {
				f, m := present(t, s, id)
				assert.True(t, f && m, "nothing deleted: %s", id)
			}
		})
	}
}

func TestClearReportsEveryBadRow(t *testing.T) {
	_, err := Clear(strings.NewReader("[]\n{}\n{\"_ng_rollout_id\":\"-x\"}\n"), []*capture.Store{newStore(t)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 1:")
	assert.Contains(t, err.Error(), "line 3:")
	assert.NotContains(t, err.Error(), "line 2:")
}

func TestClearNoStores(t *testing.T) {
	sum, err := Clear(strings.NewReader("{\"_ng_task_index\":0,\"_ng_rollout_index\":0}\n"), nil)
	require.NoError(t, err)
	assert.Equal(t, ClearSummary{IDs: []string{"0-0"}}, sum)
	_, err = Clear(strings.NewReader("[]\n"), nil)
	require.Error(t, err, "rows are validated even without stores")
}

func TestClearReadError(t *testing.T) {
	s := newStore(t)
	seed(t, s, "0-0")
	_, err := Clear(&failingReader{data: "{\"_ng_task_index\":0,\"_ng_rollout_index\":0}\n", err: errors.New("boom")}, []*capture.Store{s})
	require.ErrorContains(t, err, "read line 2: boom")
	f, _ := present(t, s, "0-0")
	assert.True(t, f, "nothing removed after a read error")
}

// blockCapture puts a non-empty directory where id's capture file should be, which unlink cannot
// remove as a file.
func blockCapture(t *testing.T, s *capture.Store, id string) {
	t.Helper()
	p, err := s.CapturePath(id)
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(p, 0o700))
	require.NoError(t, os.WriteFile(p+"/x", nil, 0o600))
}

// A removal that fails does not stop the clear: every row is tried in every store, and every failure
// is reported.
func TestClearRemoveFailureTriesEveryRow(t *testing.T) {
	rows := func(idx ...int) string {
		var b strings.Builder
		for _, i := range idx {
			fmt.Fprintf(&b, "{\"_ng_task_index\":0,\"_ng_rollout_index\":%d}\n", i)
		}
		return b.String()
	}
	tests := []struct {
		name      string
		blocked   []string // ids whose capture file is a directory, in the first store
		seeded    []string // ids with a capture file and a marker, in every store
		stores    int
		input     string
		want      ClearSummary
		untouched int
		wantInErr []string
	}{
		{name: "one failure in the middle", blocked: []string{"0-1"}, seeded: []string{"0-0", "0-2"}, stores: 1,
			input: rows(0, 1, 2, 5),
			want: ClearSummary{IDs: []string{"0-0", "0-1", "0-2", "0-5"}, Cleared: []string{"0-0", "0-2"},
				Failed: []string{"0-1"}, Files: 4},
			untouched: 1, // 0-5 had nothing
			wantInErr: []string{"1 of 4 rollouts failed", "capture clear 0-1", "0-1.capture.jsonl"}},
		{name: "every failure is reported", blocked: []string{"0-0", "0-2"}, seeded: []string{"0-1", "0-3"}, stores: 1,
			input: rows(0, 1, 2, 3),
			want: ClearSummary{IDs: []string{"0-0", "0-1", "0-2", "0-3"}, Cleared: []string{"0-1", "0-3"},
				Failed: []string{"0-0", "0-2"}, Files: 4},
			wantInErr: []string{"2 of 4 rollouts failed", "0-0.capture.jsonl", "0-2.capture.jsonl"}},
		{name: "the failed id's marker and the other stores are still cleared", blocked: []string{"0-0"}, seeded: []string{"0-0", "0-1"}, stores: 2,
			input: rows(0, 1),
			// 0-0: its marker in the first store, file and marker in the second; 0-1: 2 files in each.
			want: ClearSummary{IDs: []string{"0-0", "0-1"}, Cleared: []string{"0-0", "0-1"},
				Failed: []string{"0-0"}, Files: 1 + 2 + 2 + 2},
			wantInErr: []string{"1 of 2 rollouts failed", "0-0.capture.jsonl"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stores []*capture.Store
			for range tt.stores {
				stores = append(stores, newStore(t))
			}
			for _, id := range tt.blocked {
				blockCapture(t, stores[0], id)
			}
			for i, s := range stores {
				for _, id := range tt.seeded {
					if i == 0 && slices.Contains(tt.blocked, id) {
						require.NoError(t, s.MarkIncomplete(id))
						continue
					}
					seed(t, s, id)
				}
			}
			sum, err := Clear(strings.NewReader(tt.input), stores)
			require.Error(t, err)
			for _, w := range tt.wantInErr {
				assert.Contains(t, err.Error(), w)
			}
			assert.Equal(t, tt.want, sum)
			assert.Equal(t, tt.untouched, sum.Untouched())
			for _, s := range stores {
				for _, id := range sum.IDs {
					f, m := present(t, s, id)
					assert.False(t, m, "%s's marker removed", id)
					if s != stores[0] || !slices.Contains(tt.blocked, id) {
						assert.False(t, f, "%s's capture file removed", id)
					}
				}
			}
		})
	}
}
