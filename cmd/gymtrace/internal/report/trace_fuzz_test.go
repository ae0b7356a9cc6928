package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/rollout"
)

// FuzzTraceView writes arbitrary bytes as the observations file of the trace fixture's rollout
// 5-0 (its capture file unchanged) and builds its trace view: building never fails, every call is
// drawn, row ids are unique, every row's parent is drawn before it one level up, every link names
// a drawn row, and the page holds the view as JSON and parses.
func FuzzTraceView(f *testing.F) {
	fixture := writeTraceFixture(f)
	store, err := capture.NewStore(fixture)
	require.NoError(f, err)
	obsPath, err := store.ObservationsPath("5-0")
	require.NoError(f, err)
	seed, err := os.ReadFile(obsPath)
	require.NoError(f, err)
	captured, err := os.ReadFile(filepath.Join(fixture, "5-0"+capture.CaptureFileSuffix))
	require.NoError(f, err)
	f.Add(seed)
	f.Add(append(append([]byte{}, seed...), seed...)) // every span twice
	own, other := rollout.ID{Rollout: "5-0"}.TraceID().String(), rollout.ID{Rollout: "other"}.TraceID().String()
	f.Add(append(append([]byte{}, seed...), bytes.ReplaceAll(seed, []byte(own), []byte(other))...)) // the same span ids in two traces
	f.Add([]byte("\n{}\n[]\nnull\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "5-0"+capture.CaptureFileSuffix), captured, 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(obsPath)), data, 0o600))
		rep, err := Build(t.Context(), dir, Options{TraceViews: true})
		require.NoError(t, err)
		require.Len(t, rep.Rollouts, 1)
		r := rep.Rollouts[0]
		v := r.Trace
		require.NotNil(t, v)
		require.LessOrEqual(t, len(v.Spans), MaxTraceSpans)
		depth := map[string]int{}
		calls := 0
		for _, s := range v.Spans {
			require.NotContains(t, depth, s.ID, "row ids are unique")
			if s.Parent == "" {
				require.Zero(t, s.Depth, s.ID)
			} else {
				d, ok := depth[s.Parent]
				require.True(t, ok, "the parent of %s is drawn before it", s.ID)
				require.Equal(t, d+1, s.Depth, s.ID)
			}
			depth[s.ID] = s.Depth
			if s.Kind == TraceKindModelCall {
				calls++
			}
		}
		if v.Omitted == 0 {
			require.Equal(t, len(r.Calls), calls, "every call is drawn")
		}
		for _, s := range v.Spans {
			if s.AskedBy != "" {
				require.Contains(t, depth, s.AskedBy)
			}
			for _, a := range s.Asks {
				require.Contains(t, depth, a)
			}
		}
		_, err = json.Marshal(v)
		require.NoError(t, err)
		var h bytes.Buffer
		require.NoError(t, WriteHTML(&h, rep, ""))
		_, err = html.Parse(bytes.NewReader(h.Bytes()))
		require.NoError(t, err)
		require.Contains(t, h.String(), `<script type="application/json" class="trace-data">`)
	})
}
