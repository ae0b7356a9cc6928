package tokens

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// malformedEntry is CO-07's stored line (the vector gives only the failure): two generated
// tokens, one log prob, which the store's reader refuses.
var malformedEntry = TokenEntry{SchemaVersion: 1, RolloutID: "t0-r0", ModelCallID: "c1", PromptTokenIDs: []int64{1}, GenerationTokenIDs: []int64{2, 3}, GenerationLogProbs: []float64{-0.1}}

// TestTrajectoriesVectors runs the CO group (TOKENS.md §3.6): trajectories_for_rollout over a
// store holding the case's entries and incomplete marks ("dirs": 0 is no store), and
// trajectories_from_source over a source returning the case's snapshot.
func TestTrajectoriesVectors(t *testing.T) {
	cases := tokenCases(t, "CO")
	require.Len(t, cases, 15)
	// CO-12..15 name their snapshot's entries by call id: CO-01's three calls.
	byID := map[string]TokenEntry{}
	for _, e := range vectorEntries(t, get(t, cases[0].Input, "entries")) {
		byID[e.ModelCallID] = e
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			in, want := c.Input, c.Expected
			rid, _ := get(t, in, "rollout_id").AsString()
			model, _ := get(t, in, "model").AsString()
			builder := BuilderPrefixMerging
			var src Source
			if snap, ok := in.Get("snapshot"); ok {
				s := snapshotSource{err: freezeError(t, get(t, in, "freeze_raises"))}
				if !snap.IsNull() {
					s.snap = Snapshot{RolloutID: rid, SnapshotID: python.Str(get(t, snap, "snapshot_id"))}
					s.snap.Incomplete, _ = get(t, snap, "incomplete").AsBool()
					s.snap.Version, _ = get(t, snap, "version").Int64()
					for _, id := range get(t, snap, "entries").Elems() {
						e, ok := byID[python.Str(id)]
						require.True(t, ok, "entry %s", id)
						s.snap.Entries = append(s.snap.Entries, e)
					}
				}
				src = s
			} else {
				builder, _ = get(t, in, "builder").AsString()
				if dirs, _ := get(t, in, "dirs").Int64(); dirs > 0 {
					src = storeWith(t, rid, get(t, in, "entries"), get(t, in, "incomplete_marks"))
				}
				if c.Name == "CO-07" { // written as another writer could, past the store's checks
					appendLine(t, src.(*Store), malformedEntry)
				}
			}

			got := TrajectoriesFromSource(rid, src, builder, model)
			assertJSON(t, want, got)
		})
	}
}

// freezeError is a vector's "freeze_raises" ("RuntimeError('transport unavailable')", or null).
func freezeError(t *testing.T, v ojson.Value) error {
	t.Helper()
	if v.IsNull() {
		return nil
	}
	s, _ := v.AsString()
	m := regexp.MustCompile(`^(\w+)\('(.*)'\)$`).FindStringSubmatch(s)
	require.NotNil(t, m, "freeze_raises %q", s)
	return pyErr(m[1], m[2], nil)
}

// storeWith returns a file store (the vectors' pinned snapshot ids and clock, [vectorStore]) into
// which entries were appended and rid's incomplete marks made, in that order.
func storeWith(t *testing.T, rid string, entries, marks ojson.Value) *Store {
	t.Helper()
	s := vectorStore(t)
	for _, e := range vectorEntries(t, entries) {
		require.NoError(t, s.Append(e))
	}
	for _, m := range marks.Elems() {
		require.NoError(t, s.MarkIncomplete(rid, python.Str(m)))
	}
	return s
}

// appendLine appends e's canonical line to its rollout's entries file directly, without the
// store's checks (as a writer that does not validate would).
func appendLine(t *testing.T, s *Store, e TokenEntry) {
	t.Helper()
	line, err := e.Line()
	require.NoError(t, err)
	f, err := os.OpenFile(s.path(e.RolloutID, EntriesFileSuffix), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	require.NoError(t, err)
	_, err = f.Write(line)
	require.NoError(t, errors.Join(err, f.Close()))
}

var fsPathError = fs.PathError{Op: "open", Path: "/x/r.tokens.lock", Err: fs.ErrPermission}

func TestTrajectoriesFreezeErrorClasses(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{pyErr("ValidationError", "1 validation error", nil), "ValidationError: 1 validation error"},
		{errors.Join(errors.New("freeze r"), pyErr("ValueError", "bad", nil)), "ValueError: freeze r\nbad"},
		{&fsPathError, "OSError: open /x/r.tokens.lock: permission denied"},
		{errors.New("boom"), "RuntimeError: boom"},
	} {
		got := TrajectoriesFromSource("r", snapshotSource{err: tc.err}, BuilderPrefixMerging, "")
		assert.Equal(t, `{"rollout_id":"r","builder":"prefix_merging","rebuilt_response":null,"mask_sample":true,"error":`+ojson.String(tc.want).String()+`,"metrics":{"n_calls":0}}`, got.String())
	}
}

func TestTrajectoriesIncompleteFailedBuild(t *testing.T) {
	// A token-less upstream (TOKENS.md §7): no entries, marked incomplete.
	s := vectorStore(t)
	require.NoError(t, s.MarkIncomplete("r", "c1"))
	got := TrajectoriesFromSource("r", s, BuilderPrefixMerging, "")
	assert.Equal(t, `{"rollout_id":"r","builder":"prefix_merging","rebuilt_response":null,"mask_sample":true,"error":"capture contains no token records","metrics":{"n_calls":0,"capture_incomplete":true},"_capture_snapshot":{"snapshot_id":"00000000000000000000005a00000001","version":2}}`, got.String())
}

func TestTrajectoriesUnknownBuilder(t *testing.T) {
	s := vectorStore(t)
	require.NoError(t, s.Append(baseEntry("r", "c1")))
	got := TrajectoriesFromSource("r", s, "best", "")
	e, _ := get(t, got, buildError).AsString()
	assert.Equal(t, "ValueError: unknown builder 'best'; known: ['per_request', 'prefix_merging']", e)
	n, _ := get(t, get(t, got, buildMetrics), metricNCalls).Int64()
	assert.Equal(t, int64(1), n)
}

// TestClearVectors runs the CL group (TOKENS.md §3.6): a store holding 0-0 and 0-0-a1 (entries
// and marks), the rows' captures deleted.
func TestClearVectors(t *testing.T) {
	cases := tokenCases(t, "CL")
	require.Len(t, cases, 6)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			in, want := c.Input, c.Expected
			rows := get(t, in, "rows").Elems()
			if want.Kind() == ojson.KindString { // "ok (no-op)": no capture directory
				assert.NoError(t, ClearTokenCaptures(rows))
				return
			}
			s := vectorStore(t)
			for _, id := range []string{"0-0", "0-0-a1"} {
				require.NoError(t, s.Append(baseEntry(id, "c1")))
				require.NoError(t, s.MarkIncomplete(id, "c2"))
			}
			err := ClearTokenCaptures(rows, s)
			if result := get(t, want, "result"); result.Kind() == ojson.KindString {
				assert.NoError(t, err)
			} else {
				assertException(t, result, err)
			}
			var wantFiles []string
			for _, f := range get(t, want, "files_after").Elems() {
				wantFiles = append(wantFiles, python.Str(f))
			}
			assert.Equal(t, wantFiles, slices.Sorted(maps.Keys(files(t, s.Dir()))))
		})
	}
}

// snapshotSource returns one fixed snapshot, or fails every freeze with err (the reference's
// test sources, CO-12..15 and DL-09).
type snapshotSource struct {
	snap Snapshot
	err  error
}

func (s snapshotSource) Freeze(string) (Snapshot, error) { return s.snap, s.err }

func (s snapshotSource) Drop(string, string, int64) (bool, error) { return false, nil }
