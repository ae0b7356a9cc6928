package rollouts

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
)

// Attaching an attached file again, after the capture changed, writes the rows a fresh attach of the
// original file writes, byte for byte: the gaps the earlier projection derived are derived again in
// the fresh order, and stale ones go.
func TestReattachEqualsFreshAttach(t *testing.T) {
	const (
		emptyBundle = `,"ng_agent_observations":{"source":"x","records":[],"gaps":[]}`
		producer    = `,"ng_trajectory":{"schema_version":"1.0","task_id":"0","rollout_id":"0-0","gaps":[{"code":"resolution_unavailable"}]}`
	)
	c1, c2 := callLine("c1", usage, "1.0"), callLine("c2", usage, "2.0")
	tests := []struct {
		name         string
		row          string // the original line's keys after the identity
		before       string // the capture file at the first attach ("" none)
		beforeMarker bool
		after        string // the capture file at the re-attach
	}{
		{name: "a call captured since, unowned calls", row: emptyBundle, before: c1, after: c1 + c2},
		{name: "incomplete marker gone since", row: emptyBundle, before: c1, beforeMarker: true, after: c1},
		{name: "no capture at first", before: "", after: c1},
		{name: "producer gaps keep their place", row: producer + emptyBundle, before: c1, after: c1 + c2},
		{name: "nothing changed", row: emptyBundle, before: c1, after: c1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			line := `{"_ng_task_index":0,"_ng_rollout_index":0,"reward":1.0` + tt.row + "}\n"
			if tt.before != "" {
				writeCapture(t, s, "0-0", tt.before)
			}
			if tt.beforeMarker {
				require.NoError(t, s.MarkIncomplete("0-0"))
			}
			opts := Options{Trajectory: true}
			first, _, err := attachString(t, line, []*capture.Store{s}, opts)
			require.NoError(t, err)

			writeCapture(t, s, "0-0", tt.after)
			if tt.beforeMarker {
				m, err := s.MarkerPath("0-0")
				require.NoError(t, err)
				require.NoError(t, os.Remove(m))
			}
			fresh, _, err := attachString(t, line, []*capture.Store{s}, opts)
			require.NoError(t, err)
			again, _, err := attachString(t, first, []*capture.Store{s}, opts)
			require.NoError(t, err)
			assert.Equal(t, fresh, again)
			twice, _, err := attachString(t, again, []*capture.Store{s}, opts)
			require.NoError(t, err)
			assert.Equal(t, fresh, twice, "stable")
		})
	}
}
