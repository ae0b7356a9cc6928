package capture

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/ojson"
)

// vecRolloutID is a test-only stand-in for SPEC §1.2 (the real function lives in package rollout):
// _ng_rollout_id, else "<task>-<rollout>", plus "-a<attempt>" for a positive integer attempt.
func vecRolloutID(t *testing.T, record ojson.Value) (string, bool) {
	t.Helper()
	num := func(key string) (string, bool) {
		v, ok := record.Get(key)
		if !ok || v.IsNull() {
			return "", false
		}
		n, ok := v.Int64()
		require.True(t, ok, "%s is not an integer: %s", key, v)
		return strconv.FormatInt(n, 10), true
	}
	var id string
	if v, ok := record.Get("_ng_rollout_id"); ok && !v.IsNull() {
		s, ok := v.AsString()
		require.True(t, ok)
		id = s
	} else {
		task, ok1 := num("_ng_task_index")
		rollout, ok2 := num("_ng_rollout_index")
		if !ok1 || !ok2 {
			return "", false
		}
		id = task + "-" + rollout
	}
	if attempt, ok := num("_ng_attempt_index"); ok {
		if n, _ := strconv.Atoi(attempt); n > 0 {
			id += "-a" + attempt
		}
	}
	return id, true
}

func TestBuildAttachmentVectors(t *testing.T) {
	for _, c := range testvectors.Load(t, "attachment.json") {
		t.Run(c.Name, func(t *testing.T) {
			record := vecField(t, c.Input, "record")
			store := vecField(t, c.Input, "store")
			include, _ := vecField(t, c.Input, "include_payloads").AsBool()
			id, ok := vecRolloutID(t, record)
			if !ok {
				assert.Equal(t, "null", string(c.Expected), "no rollout id: the merge is a no-op")
				return
			}
			want := testvectors.Canonical(t, c.Expected)

			// The capture in the only store.
			s := newTestStore(t)
			testvectors.WriteStore(t, s, id, store)
			a, err := BuildAttachment([]*Store{s}, id, include)
			require.NoError(t, err)
			assert.Equal(t, want, string(a.AppendJSON(nil)))

			// The same capture in the second of three stores: the first store holding it is used.
			empty, other := newTestStore(t), newTestStore(t)
			mustAppend(t, other, id, `{"model_call_id":"decoy"}`+"\n")
			s2 := newTestStore(t)
			testvectors.WriteStore(t, s2, id, store)
			a, err = BuildAttachment([]*Store{empty, s2, other}, id, include)
			require.NoError(t, err)
			has, err := s2.HasCapture(id)
			require.NoError(t, err)
			if has {
				assert.Equal(t, want, string(a.AppendJSON(nil)))
			} else {
				assert.Contains(t, string(a.AppendJSON(nil)), `"model_call_id":"decoy"`, "falls through to the next store")
			}
		})
	}
}

func TestBuildAttachmentEdges(t *testing.T) {
	const emptyMetrics = `{"tokens_in":null,"tokens_out":null,"tokens_reasoning":null,"tokens_total":null,` +
		`"cached_tokens":null,"latency_total_ms":null,"num_calls":0}`
	t.Run("read failure gives unreadable", func(t *testing.T) {
		s := newTestStore(t)
		path, _ := s.CapturePath("0-0")
		require.NoError(t, os.Mkdir(path, 0o700)) // exists, but reading it fails (EISDIR)
		a, err := BuildAttachment([]*Store{s}, "0-0", false)
		require.NoError(t, err)
		assert.Equal(t, `{"rollout_id":"0-0","metrics":`+emptyMetrics+`,"calls":[],"gaps":[{"code":"model_call_capture_unreadable"}]}`,
			string(a.AppendJSON(nil)))
	})
	t.Run("marker lookup failure keeps earlier gaps and drops calls", func(t *testing.T) {
		s := newTestStore(t)
		path, _ := s.CapturePath("0-0")
		require.NoError(t, os.WriteFile(path, []byte(`{"model_call_id":"a"}`+"\n{bad\n"), 0o600))
		marker, _ := s.MarkerPath("0-0")
		failLstat(t, marker, unix.EIO)
		a, err := BuildAttachment([]*Store{s}, "0-0", false)
		require.NoError(t, err)
		assert.Empty(t, a.Calls)
		assert.Equal(t, []Gap{{Code: GapRecordsUnreadable, Detail: "count=1"}, {Code: GapUnreadable}}, a.Gaps)
	})
	t.Run("no stores", func(t *testing.T) {
		a, err := BuildAttachment(nil, "0-0", false)
		require.NoError(t, err)
		assert.Equal(t, `{"rollout_id":"0-0","metrics":`+emptyMetrics+`,"calls":[],"gaps":[{"code":"model_call_capture_no_records"}]}`,
			string(a.AppendJSON(nil)))
	})
	t.Run("invalid id is an error", func(t *testing.T) {
		_, err := BuildAttachment([]*Store{newTestStore(t)}, "a/b-0", false)
		require.ErrorIs(t, err, ErrInvalidRolloutID)
		assert.Contains(t, err.Error(), "Invalid rollout id: 'a/b-0'")
	})
	t.Run("later gaps are encoded after the capture gaps", func(t *testing.T) {
		a, err := BuildAttachment([]*Store{newTestStore(t)}, "0-0", false)
		require.NoError(t, err)
		a.Gaps = append(a.Gaps, Gap{Code: "trajectory_projection_failed", Detail: "ValueError"})
		assert.Contains(t, string(a.AppendJSON(nil)),
			`"gaps":[{"code":"model_call_capture_no_records"},{"code":"trajectory_projection_failed","detail":"ValueError"}]}`)
	})
}

func TestGapAppendJSON(t *testing.T) {
	tests := []struct {
		name string
		gap  Gap
		want string
	}{
		{"code only", Gap{Code: GapIncomplete}, `{"code":"model_call_capture_incomplete"}`},
		{"detail", Gap{Code: GapRecordsUnreadable, Detail: "count=3"}, `{"code":"model_call_capture_records_unreadable","detail":"count=3"}`},
		{"all fields", Gap{Code: "c", InvocationID: "root", Detail: "é\u2028\"<"}, `{"code":"c","invocation_id":"root","detail":"é` + "\u2028" + `\"<"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.gap.AppendJSON(nil)
			assert.Equal(t, tt.want, string(got))
			assert.True(t, json.Valid(got))
		})
	}
}

// SPEC §8 #4 end to end: the records read back have call indices 0 and 1 and the Unicode text intact.
func TestReadModelCallRecords(t *testing.T) {
	s := newTestStore(t)
	path, _ := s.CapturePath("r")
	require.NoError(t, os.WriteFile(path, []byte("\n"), 0o600))
	first := `{"request":{"text":"Unicode payload: café 東京","path":"/tmp/p"},"response":{}}`
	mustAppend(t, s, "r", first+"\n")
	mustAppend(t, s, "r", `{"request":{},"response":{}}`+"\n")

	recs, err := s.ReadModelCallRecords("r")
	require.NoError(t, err)
	require.Len(t, recs, 2)
	assert.Equal(t, 0, recs[0].CallIndex)
	assert.Equal(t, 1, recs[1].CallIndex)
	assert.JSONEq(t, `{"text":"Unicode payload: café 東京","path":"/tmp/p"}`, string(recs[0].Request))
	assert.Equal(t, `{}`, string(recs[1].Response), "an empty object stays {} (SPEC §8 #8)")

	avail, invalid, err := s.ReadAvailableModelCallRecords("r")
	require.NoError(t, err)
	assert.Zero(t, invalid)
	assert.Equal(t, recs, avail)

	t.Run("strict fails on an unbuildable line, tolerant counts it", func(t *testing.T) {
		mustAppend(t, s, "r", `{"model_ref":{"type":"x","name":"y"}}`+"\n")
		require.NoError(t, os.WriteFile(path, []byte(readFile(t, path)+"[1]\n{bad\n"), 0o600))
		_, err := s.ReadModelCallRecords("r")
		require.ErrorContains(t, err, "capture read r: line 4")
		recs, invalid, err := s.ReadAvailableModelCallRecords("r")
		require.NoError(t, err)
		assert.Equal(t, 3, invalid)
		assert.Len(t, recs, 2)
	})
	t.Run("missing file", func(t *testing.T) {
		recs, err := s.ReadModelCallRecords("none")
		require.NoError(t, err)
		assert.Empty(t, recs)
		recs, invalid, err := s.ReadAvailableModelCallRecords("none")
		require.NoError(t, err)
		assert.Empty(t, recs)
		assert.Zero(t, invalid)
	})
}

// failLstat makes the store's existence test of path fail with errno until the test ends.
func failLstat(t *testing.T, path string, errno unix.Errno) {
	t.Helper()
	orig := lstat
	lstat = func(p string, st *unix.Stat_t) error {
		if p == path {
			return errno
		}
		return orig(p, st)
	}
	t.Cleanup(func() { lstat = orig })
}

// TestSymbolicLinkCaptureIsRefused: a capture file or marker that is a symbolic link, dangling or a
// loop, exists for the store (lstat) and is refused by name, never read as absent.
func TestSymbolicLinkCaptureIsRefused(t *testing.T) {
	for name, target := range map[string]string{"dangling": "/nonexistent/x", "loop": ""} {
		t.Run(name, func(t *testing.T) {
			s := newTestStore(t)
			path, _ := s.CapturePath("0-0")
			if target == "" {
				target = path
			}
			require.NoError(t, os.Symlink(target, path))
			has, err := s.HasCapture("0-0")
			require.NoError(t, err)
			assert.True(t, has)
			_, _, err = s.ReadAvailableModelCallRecords("0-0")
			require.ErrorIs(t, err, ErrNotRegularFile)
			assert.Contains(t, err.Error(), "a symbolic link")
			a, err := BuildAttachment([]*Store{s}, "0-0", false)
			require.NoError(t, err)
			assert.Equal(t, []Gap{{Code: GapUnreadable}}, a.Gaps)

			marker, _ := s.MarkerPath("1-0")
			require.NoError(t, os.Symlink("/nonexistent/y", marker))
			incomplete, err := s.IsIncomplete("1-0")
			require.NoError(t, err)
			assert.True(t, incomplete, "a marker is a name: a link to nothing still marks")
		})
	}
}
