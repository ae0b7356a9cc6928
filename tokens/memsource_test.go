package tokens

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/ojson"
	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
)

// memSource is an in-memory token capture for the CO, DL, RT and CL vectors: append, marks,
// freeze, drop and delete with TOKENS.md §2.6's version and snapshot rules (version +1 per new
// entry, per mark and at the first freeze; snapshot ids from a counter as in the vectors; drop
// only at the frozen (snapshot_id, version); delete starts the id afresh, its lock file staying).
// It models the files only as far as the vectors list them. The file store is built on another
// branch; the integrator swaps memSource for it after both branches merge.
type memSource struct {
	rollouts  map[string]*memRollout
	snapshots int
}

type memRollout struct {
	entries    []TokenEntry
	marks      []string
	state      bool // the state file exists
	frozen     bool
	incomplete bool
	retired    bool
	snapshotID string
	version    int64
}

func newMemSource() *memSource { return &memSource{rollouts: map[string]*memRollout{}} }

// rollout returns id's capture, creating it (and its lock file) as every store operation does.
func (s *memSource) rollout(id string) *memRollout {
	r, ok := s.rollouts[id]
	if !ok {
		r = &memRollout{}
		s.rollouts[id] = r
	}
	return r
}

func (s *memSource) append(e TokenEntry) error {
	r := s.rollout(e.RolloutID)
	if err := r.writable(e.RolloutID, true); err != nil {
		return err
	}
	if slices.ContainsFunc(r.entries, func(o TokenEntry) bool { return o.ModelCallID == e.ModelCallID }) {
		return nil // the vectors re-append only identical entries
	}
	r.entries = append(r.entries, e)
	r.version++
	r.state = true
	return nil
}

func (s *memSource) markIncomplete(id, callID string) error {
	r := s.rollout(id)
	if err := r.writable(id, false); err != nil {
		return err
	}
	r.marks = append(r.marks, callID)
	r.incomplete = true
	r.version++
	r.state = true
	return nil
}

func (r *memRollout) writable(id string, refuseFrozen bool) error {
	if r.retired {
		return pyErr("RuntimeError", "Token capture for rollout "+id+" is retired", nil)
	}
	if refuseFrozen && r.frozen {
		return pyErr("RuntimeError", "Token capture for rollout "+id+" is already frozen", nil)
	}
	return nil
}

func (s *memSource) Freeze(id string) (Snapshot, error) {
	r := s.rollout(id)
	if err := r.writable(id, false); err != nil {
		return Snapshot{}, err
	}
	if !r.frozen {
		s.snapshots++
		r.frozen, r.state = true, true
		r.snapshotID = fmt.Sprintf("%022x5a%08x", 0, s.snapshots)
		r.version++
	}
	// The entries are read after the freeze is recorded (TOKENS.md §6 item 7).
	for _, e := range r.entries {
		if len(e.GenerationTokenIDs) != len(e.GenerationLogProbs) {
			return Snapshot{}, pyErr("ValidationError", fmt.Sprintf("1 validation error for TokenEntry\n  Value error, generation_token_ids and generation_log_probs must have the same length (got %d and %d)", len(e.GenerationTokenIDs), len(e.GenerationLogProbs)), nil)
		}
	}
	return Snapshot{RolloutID: id, Entries: slices.Clone(r.entries), Incomplete: r.incomplete, SnapshotID: r.snapshotID, Version: r.version}, nil
}

func (s *memSource) Drop(id, snapshotID string, version int64) (bool, error) {
	r := s.rollout(id)
	if !r.frozen || r.snapshotID != snapshotID || r.version != version {
		return false, nil
	}
	r.entries, r.marks, r.retired = nil, nil, true
	return true, nil
}

func (s *memSource) Delete(id string) error {
	if id == "" || strings.ContainsFunc(id, func(c rune) bool {
		return !(c == '.' || c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z')
	}) {
		return pyErr("ValueError", "Invalid rollout id: "+python.ReprStr(id), nil)
	}
	s.rollouts[id] = &memRollout{}
	return nil
}

// files lists the file names the store would hold (TOKENS.md §2.1), sorted.
func (s *memSource) files() []string {
	var names []string
	for id, r := range s.rollouts {
		names = append(names, id+".tokens.lock")
		if len(r.entries) > 0 {
			names = append(names, id+".tokens.jsonl")
		}
		if len(r.marks) > 0 {
			names = append(names, id+".tokens.incomplete")
		}
		if r.state {
			names = append(names, id+".tokens.state.json")
		}
	}
	slices.Sort(names)
	return names
}

// checkFiles compares s with a vector's files_after_retire (file name → content): the same file
// names, the state file's frozen/incomplete/retired/snapshot_id/version, the marker's lines and
// the entries' model_call_ids (entry_digests and indexed_size are the file store's business).
func (s *memSource) checkFiles(t *testing.T, want ojson.Value) {
	t.Helper()
	var names []string
	for _, m := range want.Members() {
		names = append(names, m.Key)
		content, _ := m.Value.AsString()
		id, kind, _ := strings.Cut(m.Key, ".tokens.")
		r := s.rollout(id)
		switch kind {
		case "state.json":
			state := testvectors.Value(t, []byte(content))
			for key, got := range map[string]ojson.Value{
				"frozen": ojson.Bool(r.frozen), "incomplete": ojson.Bool(r.incomplete), "retired": ojson.Bool(r.retired),
				"snapshot_id": ojson.String(r.snapshotID), "version": ojson.Int(r.version),
			} {
				v, _ := state.Get(key)
				assert.Equal(t, v.String(), got.String(), "state %s", key)
			}
		case "incomplete":
			assert.Equal(t, content, strings.Join(r.marks, "\n")+"\n", "marker")
		case "jsonl":
			var ids []string
			for line := range strings.SplitSeq(strings.TrimSuffix(content, "\n"), "\n") {
				cid, _ := testvectors.Value(t, []byte(line)).Get("model_call_id")
				ids = append(ids, python.Str(cid))
			}
			assert.Equal(t, ids, callIDs(r.entries), "entries")
		}
	}
	slices.Sort(names)
	assert.Equal(t, names, s.files(), "files")
}

func callIDs(entries []TokenEntry) []string {
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.ModelCallID
	}
	return ids
}

// snapshotSource returns one fixed snapshot, or fails every freeze with err (the reference's
// test sources, CO-12..15 and DL-09).
type snapshotSource struct {
	snap Snapshot
	err  error
}

func (s snapshotSource) Freeze(string) (Snapshot, error) { return s.snap, s.err }

func (s snapshotSource) Drop(string, string, int64) (bool, error) { return false, nil }

// stored returns e as the file store gives it back: written as a canonical line, so the keys of
// its output items are sorted (TOKENS.md §2.2.3).
func stored(e TokenEntry) TokenEntry {
	items := make([]jsontext.Value, len(e.OutputItems))
	for i, it := range e.OutputItems {
		v, _ := ojson.Parse(it)
		items[i] = jsontext.Value(sortKeys(v).String())
	}
	e.OutputItems = items
	return e
}

func sortKeys(v ojson.Value) ojson.Value {
	switch v.Kind() {
	case ojson.KindArray:
		out := make([]ojson.Value, v.Len())
		for i, x := range v.Elems() {
			out[i] = sortKeys(x)
		}
		return ojson.Array(out...)
	case ojson.KindObject:
		ms := slices.Clone(v.Members())
		for i := range ms {
			ms[i].Value = sortKeys(ms[i].Value)
		}
		slices.SortStableFunc(ms, func(a, b ojson.Member) int { return strings.Compare(a.Key, b.Key) })
		return ojson.Object(ms...)
	}
	return v
}

func TestMemSourceVersions(t *testing.T) {
	s := newMemSource()
	require.NoError(t, s.append(TokenEntry{RolloutID: "r", ModelCallID: "c1"}))
	require.NoError(t, s.markIncomplete("r", "c2"))
	snap, err := s.Freeze("r")
	require.NoError(t, err)
	assert.Equal(t, int64(3), snap.Version)
	assert.True(t, snap.Incomplete)
	again, err := s.Freeze("r")
	require.NoError(t, err)
	assert.Equal(t, snap.SnapshotID, again.SnapshotID)
	assert.Equal(t, snap.Version, again.Version)
	assert.Error(t, s.append(TokenEntry{RolloutID: "r", ModelCallID: "c3"}), "frozen")
	ok, err := s.Drop("r", snap.SnapshotID, snap.Version-1)
	require.NoError(t, err)
	assert.False(t, ok, "stale version")
	ok, err = s.Drop("r", snap.SnapshotID, snap.Version)
	require.NoError(t, err)
	assert.True(t, ok)
	_, err = s.Freeze("r")
	assert.ErrorContains(t, err, "is retired")
	require.NoError(t, s.Delete("r"))
	assert.Equal(t, []string{"r.tokens.lock"}, s.files())
	assert.ErrorContains(t, s.Delete("a/b"), "Invalid rollout id: 'a/b'")
}
