package rollouts

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/ojson"
)

// collectorCasesForAttach are the C cases of vectors/trajectory.json that `gymtrace attach`
// reproduces: model-call capture on, no token capture. The others wait or do not apply: C-10 and
// C-11 run with capture off (attach always attaches the capture), C-16–C-18 finalize token capture
// (#15 part 3). The kill-shaped row of C-14 (_ng_no_persist) is written nowhere by Gym, so attach
// never sees it; the pre-dispatch clear of C-15 is `gymtrace clear`'s, attach sees the files the
// run left.
var collectorCasesForAttach = []string{"C-01", "C-02", "C-03", "C-04", "C-05", "C-06", "C-07", "C-08",
	"C-09", "C-12", "C-13", "C-14", "C-15"}

// copiedKeys are the row keys Gym's collector copies onto a result before writing it (SPEC §5.5
// step 1): the first three always, the others when the row has them.
var copiedKeys = []string{"_ng_task_index", "_ng_rollout_index", "agent_ref", "skills_ref", "_ng_attempt_index", "_ng_rollout_id"}

// TestAttachCollectorVectors runs the collector cases attach reproduces (collectorCasesForAttach)
// through Attach with the projection on and the case's rows as Options.Inputs: each result, with
// the row's keys copied on as Gym's collector does (its line without capture), is attached from
// the case's capture files and must be exactly the case's rollouts line or failures-sidecar line.
func TestAttachCollectorVectors(t *testing.T) {
	ran := 0
	for _, c := range testvectors.Load(t, "trajectory.json") {
		if !isCollectorCaseForAttach(c.Name) {
			continue
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			var in struct {
				Rows           []json.RawMessage `json:"rows"`
				Results        []json.RawMessage `json:"results"`
				CaptureFiles   map[string]string `json:"capture_files"`
				CaptureMarkers []string          `json:"capture_markers"`
			}
			require.NoError(t, json.Unmarshal(c.Input, &in))
			var want struct {
				MainLines    []string `json:"main_lines"`
				FailureLines []string `json:"failure_lines"`
			}
			require.NoError(t, json.Unmarshal(c.Expected, &want))

			s := newStore(t)
			for id, text := range in.CaptureFiles {
				writeCapture(t, s, id, text)
			}
			for _, id := range in.CaptureMarkers {
				require.NoError(t, s.MarkIncomplete(id))
			}
			var inputs strings.Builder
			for _, r := range in.Rows {
				inputs.WriteString(testvectors.Canonical(t, r) + "\n")
			}
			rows, err := ReadInputRows(context.Background(), strings.NewReader(inputs.String()))
			require.NoError(t, err)
			opts := Options{Trajectory: true, Inputs: rows}

			var main, failures []string
			for i, r := range in.Results {
				result := collectorLine(t, testvectors.Value(t, in.Rows[i]), testvectors.Value(t, r))
				if v, _ := result.Get("_ng_no_persist"); v.Kind() == ojson.KindBool {
					continue // written nowhere
				}
				out, sum, err := attachString(t, result.String()+"\n", []*capture.Store{s}, opts)
				require.NoError(t, err)
				require.Equal(t, 1, sum.Attached)
				assert.Equal(t, 1, sum.InputsMatched)
				line := strings.TrimSuffix(out, "\n")
				if v, _ := result.Get("_ng_failure_class"); !v.IsNull() {
					failures = append(failures, line)
				} else {
					main = append(main, line)
				}
			}
			assert.Equal(t, want.MainLines, nonNil(main))
			assert.Equal(t, want.FailureLines, nonNil(failures))
		})
	}
	assert.Equal(t, len(collectorCasesForAttach), ran)
}

func isCollectorCaseForAttach(name string) bool {
	for _, id := range collectorCasesForAttach {
		if strings.HasPrefix(name, id+" ") {
			return true
		}
	}
	return false
}

// collectorLine is result with row's keys copied on (SPEC §5.5 step 1): a key result has keeps
// its position, a new one is appended.
func collectorLine(t *testing.T, row, result ojson.Value) ojson.Value {
	t.Helper()
	for i, k := range copiedKeys {
		if v, ok := row.Get(k); ok || i < 3 {
			result.Set(k, v)
		}
	}
	return result
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
