package rollouts

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestAttachGolden attaches testdata/captures to testdata/rollouts.jsonl and compares the output with
// the golden files byte for byte (go test -run Golden -update rewrites them after a reviewed change).
func TestAttachGolden(t *testing.T) {
	input, err := os.ReadFile(filepath.Join("testdata", "rollouts.jsonl"))
	require.NoError(t, err)
	store, err := capture.NewStore(absTestdata(t, "captures"))
	require.NoError(t, err)

	tests := []struct {
		name   string
		golden string
		opts   Options
	}{
		{name: "without payloads", golden: "attach.golden.jsonl"},
		{name: "with payloads", golden: "attach_payloads.golden.jsonl", opts: Options{IncludePayloads: true}},
		{name: "with the projection", golden: "attach_trajectory.golden.jsonl", opts: Options{Trajectory: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			sum, err := Attach(context.Background(), bytes.NewReader(input), &out, []*capture.Store{store}, tt.opts)
			var me *MalformedRowsError
			require.ErrorAs(t, err, &me)
			require.Len(t, me.Rows, 2)
			assert.Equal(t, 7, me.Rows[0].Line)
			assert.Contains(t, me.Rows[0].Error(), "'bad id'")
			assert.Equal(t, 8, me.Rows[1].Line)
			assert.Contains(t, me.Rows[1].Error(), `not a JSON object (line starts "not json at all")`)
			assert.Equal(t, 10, sum.Rows)
			assert.Equal(t, 6, sum.Attached)
			assert.Equal(t, 2, sum.Unchanged)
			assert.Equal(t, 2, sum.Malformed)
			assert.Equal(t, []RolloutHealth{
				{Line: 2, RolloutID: "0-1", Calls: 2, UnreadableLines: 1},
				{Line: 3, RolloutID: "0-2", Calls: 1, Incomplete: true},
				{Line: 9, RolloutID: "1-0", NoRecords: true},
			}, sum.Rollouts)

			if tt.opts.Trajectory {
				assert.Equal(t, sum.Attached, sum.Projected)
				assert.Empty(t, sum.TrajectoryErrors)
			}

			path := filepath.Join("testdata", tt.golden)
			if *update {
				require.NoError(t, os.WriteFile(path, out.Bytes(), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test -run Golden -update to create it")
			assert.Equal(t, string(want), out.String())
			assert.Equal(t, bytes.Count(input, []byte("\n")), bytes.Count(out.Bytes(), []byte("\n")))
		})
	}
}
