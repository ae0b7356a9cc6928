package tokens

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/ojson"
)

// The vectors pin the reference's snapshot ids to a counter and its clock to one instant
// (TOKENS.md §5, §8); vectorStore gives a store the same.
const pinnedSeconds = 1786032154.25

var pinnedTime = time.Unix(1786032154, 250_000_000)

func vectorStore(t *testing.T) *Store {
	t.Helper()
	s, err := OpenStore(t.TempDir())
	require.NoError(t, err)
	n := 0
	s.snapshotID = func() string {
		n++
		return fmt.Sprintf("00000000000000000000005a%08x", n)
	}
	s.now = func() time.Time { return pinnedTime }
	return s
}

// norm turns a value decoded with UseNumber into one whose numbers compare by kind and value:
// integers as "int:<digits>", floats as "float:<shortest text>" (Python's -3.2e-05 and orjson's
// -0.000032 are one float).
func norm(v any) any {
	switch v := v.(type) {
	case json.Number:
		s := v.String()
		if !strings.ContainsAny(s, ".eE") {
			n, ok := new(big.Int).SetString(s, 10)
			if ok {
				return "int:" + n.String()
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return "bad number " + s
		}
		return "float:" + strconv.FormatFloat(f, 'g', -1, 64)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = norm(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = norm(e)
		}
		return out
	}
	return v
}

// decodeNorm decodes raw JSON with UseNumber and normalizes it.
func decodeNorm(t *testing.T, raw []byte) any {
	t.Helper()
	return norm(testvectors.Decode(t, raw))
}

// toNorm marshals a Go value built by the test and normalizes it.
func toNorm(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return decodeNorm(t, b)
}

// entryDump is the entry as the reference's model_dump(mode="json") gives it: its canonical JSON.
func entryDump(t *testing.T, e TokenEntry) any {
	t.Helper()
	b, err := e.CanonicalJSON()
	require.NoError(t, err)
	return decodeNorm(t, b)
}

// snapshotDump is the vectors' freeze result: {rollout_id, entries, entry_ids, incomplete,
// snapshot_id, version}.
func snapshotDump(t *testing.T, s Snapshot) any {
	t.Helper()
	entries := []any{}
	ids := []any{}
	for _, e := range s.Entries {
		entries = append(entries, entryDump(t, e))
		ids = append(ids, e.ModelCallID)
	}
	return map[string]any{"rollout_id": s.RolloutID, "entries": entries, "entry_ids": ids,
		"incomplete": s.Incomplete, "snapshot_id": s.SnapshotID, "version": "int:" + strconv.FormatInt(s.Version, 10)}
}

// assertVectorError checks err against an expected {"error": Type, "message"|"errors": ...}: the
// Python type always; a pydantic error's loc/type/msg list exactly; a message exactly, except that
// the id error is compared as a prefix (gymtrace adds the rule) and orjson's decode text is its own.
func assertVectorError(t *testing.T, want map[string]any, err error) {
	t.Helper()
	require.Error(t, err, "want %v", want)
	typ, _ := want["error"].(string)
	if typ == "ValidationError" {
		var ve *ValidationError
		require.ErrorAs(t, err, &ve)
		var got []any
		for _, fe := range ve.Errors {
			loc := []any{}
			for _, l := range fe.Loc {
				if i, ok := l.(int); ok {
					loc = append(loc, float64(i))
				} else {
					loc = append(loc, l)
				}
			}
			got = append(got, map[string]any{"loc": loc, "type": fe.Type, "msg": fe.Msg})
		}
		assert.Equal(t, want["errors"], got)
		return
	}
	var pe *Error
	require.ErrorAs(t, err, &pe, "%v", err)
	assert.Equal(t, typ, pe.Type, "%v", err)
	msg, _ := want["message"].(string)
	switch {
	case typ == "JSONDecodeError":
	case strings.HasPrefix(msg, "Invalid rollout id: "):
		// The reference's text, and the rule for a person in Error() alone.
		assert.Equal(t, msg, pe.Msg)
		assert.Equal(t, typ+": "+msg, ExceptionText(err))
		assert.Equal(t, msg+" ("+rolloutIDRuleText+")", pe.Error())
	default:
		assert.Equal(t, msg, pe.Msg)
	}
}

// files returns every file of dir with its content.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string]string{}
	for _, de := range des {
		b, err := os.ReadFile(filepath.Join(dir, de.Name()))
		require.NoError(t, err)
		out[de.Name()] = string(b)
	}
	return out
}

// assertFiles compares dir with a vector's files_after (file name → exact content).
func assertFiles(t *testing.T, dir string, want any) {
	t.Helper()
	wantFiles := map[string]string{}
	for k, v := range want.(map[string]any) {
		wantFiles[k] = v.(string)
	}
	assert.Equal(t, wantFiles, files(t, dir))
}

// baseEntry is the store vectors' entry: rollout r0 (or rid), prompt [1,2,3], gen [4,5], lp
// [-0.1,-0.2], created_at 0.
func baseEntry(rid, cid string) TokenEntry {
	return TokenEntry{SchemaVersion: SchemaVersion, RolloutID: rid, ModelCallID: cid,
		PromptTokenIDs: []int64{1, 2, 3}, GenerationTokenIDs: []int64{4, 5}, GenerationLogProbs: []float64{-0.1, -0.2}}
}

// baseLine is baseEntry's line with LF.
func baseLine(t *testing.T, rid, cid string) []byte {
	t.Helper()
	l, err := baseEntry(rid, cid).Line()
	require.NoError(t, err)
	return l
}

// referenceAppend appends line (LF included) the way the reference's append does without any of
// gymtrace's refusals (T7): the line, then the index (digest, indexed_size, version+1) in a
// non-durable state write. The vectors whose reference writer produced a line gymtrace refuses to
// write (a -inf log prob, a length mismatch) lay their files out with it, as Gym's own process
// sharing the directory would.
func referenceAppend(t *testing.T, s *Store, id string, line []byte) {
	t.Helper()
	require.NoError(t, s.locked(id, false, func() error {
		st, err := s.readState(id)
		require.NoError(t, err)
		_, err = s.syncIndex(id, st)
		require.NoError(t, err)
		size, _, err := appendDurably(s.path(id, EntriesFileSuffix), line, s.fileMode)
		require.NoError(t, err)
		v, err := ojson.Parse(line)
		require.NoError(t, err)
		cid, _ := v.Get(keyModelCallID)
		digests, _ := st.get(stateEntryDigests)
		digests = digests.Clone()
		digests.Set(python.Str(cid), ojson.String(EntryDigest(bytes.TrimSuffix(line, []byte("\n")))))
		st.set(stateEntryDigests, digests)
		st.set(stateIndexedSize, ojson.Int(size))
		require.NoError(t, st.bumpVersion(1))
		return s.writeState(id, st, false)
	}))
}
