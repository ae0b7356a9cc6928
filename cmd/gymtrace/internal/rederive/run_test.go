package rederive

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/testkit/capturegen"
	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
)

// currentCalls covers what the capture writes today: every dialect streamed and not, and every
// category that follows from the response bytes, plus status and transport categories.
func currentCalls() []capturegen.Call {
	var calls []capturegen.Call
	for _, d := range []fakemodel.Dialect{fakemodel.DialectResponses, fakemodel.DialectChat, fakemodel.DialectMessages} {
		id := "cur-" + string(d)
		calls = append(calls,
			capturegen.Call{RolloutID: id, Dialect: d},
			capturegen.Call{RolloutID: id, Dialect: d, Stream: true},
			capturegen.Call{RolloutID: id, Dialect: d, Stream: true, Tools: true},
			capturegen.Call{RolloutID: id, Dialect: d, Stream: true, Fault: fakemodel.Fault{Cut: fakemodel.CutEnd, CutAfter: 3}},
			capturegen.Call{RolloutID: id, Dialect: d, Stream: true, Fault: fakemodel.Fault{Cut: fakemodel.CutErrorEvent, CutAfter: 2}},
			capturegen.Call{RolloutID: id, Dialect: d, Stream: true, Fault: fakemodel.Fault{Cut: fakemodel.CutAbort, CutAfter: 2}},
			capturegen.Call{RolloutID: id, Dialect: d, Fault: fakemodel.Fault{Status: 429}},
			capturegen.Call{RolloutID: id, Dialect: d, Fault: fakemodel.Fault{Status: 200, Body: []byte("upstream said: not json"), ContentType: "text/plain"}},
			capturegen.Call{RolloutID: id, Dialect: d, Fault: fakemodel.Fault{Status: 200, Body: []byte(": only a comment\n\n"), ContentType: "text/event-stream"}},
		)
	}
	calls = append(calls,
		capturegen.Call{RolloutID: "cur-limits", Dialect: fakemodel.DialectResponses, Stream: true, Extra: map[string]any{"max_output_tokens": 3}},
		capturegen.Call{RolloutID: "cur-limits", Dialect: fakemodel.DialectChat, Stream: true, Extra: map[string]any{"max_tokens": 3}},
	)
	return calls
}

// generate makes captures with the real capture handler.
func generate(t *testing.T, calls []capturegen.Call) *capture.Store {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "src")
	_, err := capturegen.Generate(t.Context(), dir, calls)
	require.NoError(t, err)
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	return store
}

func newOut(t *testing.T) *capture.Store {
	t.Helper()
	out, err := capture.NewStore(filepath.Join(t.TempDir(), "out"))
	require.NoError(t, err)
	return out
}

func readFile(t *testing.T, s *capture.Store, id string) []byte {
	t.Helper()
	p, err := s.CapturePath(id)
	require.NoError(t, err)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}

func TestRunReproducesCurrentCaptures(t *testing.T) {
	src := generate(t, currentCalls())
	out := newOut(t)
	sum, err := Run(t.Context(), src, out, Options{})
	require.NoError(t, err)
	require.Len(t, sum.Rollouts, 4)
	assert.Equal(t, len(currentCalls()), sum.Records)
	assert.Zero(t, sum.Changed, "records written by the current code must not change: %+v", sum.Rollouts)
	assert.Zero(t, sum.Dropped)

	// Every category the fixture aims at is really in it, so the identity covers them.
	cats := map[string]bool{}
	sse := 0
	for _, rs := range sum.Rollouts {
		recs, err := src.ReadModelCallRecords(rs.RolloutID)
		require.NoError(t, err)
		for _, r := range recs {
			if r.ErrorCategory != nil {
				cats[*r.ErrorCategory] = true
			}
			if r.ResponseRaw != nil && r.Response != nil {
				sse++
			}
		}
		assert.Equal(t, readFile(t, src, rs.RolloutID), readFile(t, out, rs.RolloutID), "rollout %s", rs.RolloutID)
		assert.False(t, rs.Incomplete)
	}
	for _, c := range []string{"stream_truncated", "upstream_error", "incomplete", "exception", "rate_limit", "capture_parse_error"} {
		assert.True(t, cats[c], "fixture has no %s record: %v", c, cats)
	}
	assert.Greater(t, sse, 6)
}

// lineOf returns the idx-th line of a rollout's capture file (without "\n").
func lineOf(t *testing.T, s *capture.Store, id string, idx int) []byte {
	t.Helper()
	lines := bytes.Split(bytes.TrimSuffix(readFile(t, s, id), []byte("\n")), []byte("\n"))
	require.Greater(t, len(lines), idx)
	return lines[idx]
}

// setKeys returns line with the given top-level members replaced (key order kept) or removed (nil).
func setKeys(t *testing.T, line []byte, set map[string]any) []byte {
	t.Helper()
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(line))
	_, err := dec.Token()
	require.NoError(t, err)
	vals := map[string]json.RawMessage{}
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		var v json.RawMessage
		require.NoError(t, dec.Decode(&v))
		keys = append(keys, k.(string))
		vals[k.(string)] = v
	}
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for _, k := range keys {
		v := vals[k]
		if nv, ok := set[k]; ok {
			if nv == nil {
				continue
			}
			enc, err := json.Marshal(nv)
			require.NoError(t, err)
			if raw, ok := nv.(json.RawMessage); ok {
				enc = raw
			}
			v = enc
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func TestRunFixesBrokenRecords(t *testing.T) {
	src := generate(t, []capturegen.Call{
		{RolloutID: "a", Dialect: fakemodel.DialectChat, Stream: true, Tools: true},
		{RolloutID: "a", Dialect: fakemodel.DialectResponses},
		{RolloutID: "a", Dialect: fakemodel.DialectMessages, Stream: true},
		{RolloutID: "a", Dialect: fakemodel.DialectResponses, Stream: true, Fault: fakemodel.Fault{Cut: fakemodel.CutEnd, CutAfter: 2}},
	})
	good := [][]byte{lineOf(t, src, "a", 0), lineOf(t, src, "a", 1), lineOf(t, src, "a", 2), lineOf(t, src, "a", 3)}

	// An "older version" wrote: a chat stream it could not reassemble (response null, wrong
	// category), a JSON response kept only as text (capture_parse_error), a complete Anthropic
	// stream classified stream_truncated with an empty response, and a truncated stream without its
	// category.
	var nonStreamRaw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(good[1], &nonStreamRaw))
	respText := string(nonStreamRaw["response"])
	broken := [][]byte{
		setKeys(t, good[0], map[string]any{"response": json.RawMessage("null"), "error_category": "capture_parse_error"}),
		setKeys(t, good[1], map[string]any{"response": json.RawMessage("null"), "error_category": "capture_parse_error", "trace_id": nil, "span_id": nil}),
		setKeys(t, good[2], map[string]any{"response": json.RawMessage(`{}`), "error_category": "stream_truncated"}),
		setKeys(t, good[3], map[string]any{"error_category": json.RawMessage("null")}),
	}
	// The non-stream record kept its body only as response_raw (after the other keys, as §3.1 orders it).
	broken[1] = append(broken[1][:len(broken[1])-1], []byte(`,"response_raw":`+string(mustJSON(t, respText))+`}`)...)
	var wantNonStream = setKeys(t, good[1], map[string]any{"trace_id": nil, "span_id": nil})

	oldDir := filepath.Join(t.TempDir(), "old")
	old, err := capture.NewStore(oldDir)
	require.NoError(t, err)
	for _, l := range broken {
		require.NoError(t, old.Append(context.Background(), "a", append(append([]byte{}, l...), '\n')))
	}
	before := readFile(t, old, "a")

	out := newOut(t)
	sum, err := Run(t.Context(), old, out, Options{RolloutID: "a"})
	require.NoError(t, err)
	assert.Equal(t, before, readFile(t, old, "a"), "the original must not change")
	require.Len(t, sum.Rollouts, 1)
	assert.Equal(t, 4, sum.Changed)

	got := bytes.Split(bytes.TrimSuffix(readFile(t, out, "a"), []byte("\n")), []byte("\n"))
	require.Len(t, got, 4)
	assert.Equal(t, string(good[0]), string(got[0]), "chat stream reassembled again, category cleared")
	assert.Equal(t, string(wantNonStream), string(got[1]), "JSON body becomes the response, response_raw dropped")
	assert.Equal(t, string(good[2]), string(got[2]), "messages stream reassembled, stream_truncated cleared")
	assert.Equal(t, string(good[3]), string(got[3]), "truncated stream gets stream_truncated back")

	ch := sum.Rollouts[0].Changes
	assert.Equal(t, "capture_parse_error", ch[0].OldCategory)
	assert.Equal(t, "", ch[0].NewCategory)
	assert.True(t, ch[1].ResponseRawDropped)
	assert.Equal(t, "stream_truncated", ch[3].NewCategory)
	assert.Len(t, ch[0].ModelCallID, 32)

	// Running again over the fixed output changes nothing (idempotent).
	out2 := newOut(t)
	sum2, err := Run(t.Context(), out, out2, Options{})
	require.NoError(t, err)
	assert.Zero(t, sum2.Changed)
	assert.Equal(t, readFile(t, out, "a"), readFile(t, out2, "a"))
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestRunDamagedLinesAndMarkers(t *testing.T) {
	src := generate(t, []capturegen.Call{{RolloutID: "d", Dialect: fakemodel.DialectChat}, {RolloutID: "d", Dialect: fakemodel.DialectChat}})
	p, err := src.CapturePath("d")
	require.NoError(t, err)
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	damaged := append(append(append([]byte{}, first...), "\n{torn\n\n"...), rest...)
	require.NoError(t, os.WriteFile(p, damaged, 0o600))
	require.NoError(t, src.MarkIncomplete("m"))

	out := newOut(t)
	sum, err := Run(t.Context(), src, out, Options{})
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Dropped)
	require.Len(t, sum.Rollouts, 2)
	d, m := sum.Rollouts[0], sum.Rollouts[1]
	assert.Equal(t, "d", d.RolloutID)
	assert.Equal(t, 2, d.Records)
	assert.True(t, d.Incomplete, "dropped lines mark the output incomplete")
	inc, err := out.IsIncomplete("d")
	require.NoError(t, err)
	assert.True(t, inc)
	assert.Equal(t, "m", m.RolloutID)
	assert.Zero(t, m.Records)
	inc, err = out.IsIncomplete("m")
	require.NoError(t, err)
	assert.True(t, inc, "the source's marker is carried over")
}

func TestRunRefuses(t *testing.T) {
	src := generate(t, []capturegen.Call{{RolloutID: "x", Dialect: fakemodel.DialectChat}})
	t.Run("same directory", func(t *testing.T) {
		same, err := capture.NewStore(src.Dir() + "/.")
		require.NoError(t, err)
		_, err = Run(t.Context(), src, same, Options{})
		require.ErrorIs(t, err, ErrSameDir)
	})
	t.Run("output exists", func(t *testing.T) {
		out := newOut(t)
		require.NoError(t, out.MarkIncomplete("x"))
		_, err := Run(t.Context(), src, out, Options{})
		require.ErrorIs(t, err, ErrOutputExists)
		has, _, err := out.ReadAvailable("x")
		require.NoError(t, err)
		assert.Empty(t, has, "nothing written")
	})
	t.Run("unknown rollout", func(t *testing.T) {
		_, err := Run(t.Context(), src, newOut(t), Options{RolloutID: "nope"})
		require.ErrorIs(t, err, ErrNoCapture)
	})
	t.Run("invalid rollout id", func(t *testing.T) {
		_, err := Run(t.Context(), src, newOut(t), Options{RolloutID: "a/b"})
		require.ErrorIs(t, err, capture.ErrInvalidRolloutID)
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := Run(ctx, src, newOut(t), Options{})
		require.ErrorIs(t, err, context.Canceled)
	})
}

// A rollout whose output cannot be written (a full disk) leaves none of its files in the output
// directory, so a rerun into it is not refused; the rollouts written before it are kept.
func TestRunFailureRemovesThePartialOutput(t *testing.T) {
	calls := []capturegen.Call{
		{RolloutID: "r-1", Dialect: fakemodel.DialectChat},
		{RolloutID: "r-2", Dialect: fakemodel.DialectChat},
		{RolloutID: "r-2", Dialect: fakemodel.DialectResponses},
	}
	tests := []struct {
		name     string
		failAt   int // the commit (counted over the run, from 1) that fails with ENOSPC
		partial  int // bytes of the failing commit written before the error
		kept     []string
		wantText []string
	}{
		{name: "first record of the first rollout", failAt: 1,
			wantText: []string{"rollout r-1", "no space left on device", "removed from", "(1 file)"}},
		{name: "second record, half written, after a complete rollout", failAt: 3, partial: 10, kept: []string{"r-1"},
			wantText: []string{"rollout r-2", "(1 file)", "kept the 1 rollout written before it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := generate(t, calls)
			dir := filepath.Join(t.TempDir(), "out")
			commits := 0
			full, err := capture.NewStore(dir, capture.WithWriteHook(func(string, int) (int, error) {
				if commits++; commits >= tt.failAt {
					return tt.partial, unix.ENOSPC
				}
				return 0, nil
			}))
			require.NoError(t, err)
			sum, err := Run(t.Context(), src, full, Options{})
			require.ErrorIs(t, err, unix.ENOSPC)
			for _, w := range tt.wantText {
				assert.Contains(t, err.Error(), w)
			}
			var written []string
			for _, rs := range sum.Rollouts {
				written = append(written, rs.RolloutID)
			}
			assert.Equal(t, tt.kept, written, "the summary counts the rollouts kept")
			names, err := os.ReadDir(dir)
			require.NoError(t, err)
			var files []string
			for _, n := range names {
				files = append(files, n.Name())
			}
			var want []string
			for _, id := range tt.kept {
				want = append(want, id+capture.CaptureFileSuffix)
			}
			assert.Equal(t, want, files, "only the rollouts written completely are left")

			// The disk has room again: a rerun of the failed rollouts into the same directory works.
			out, err := capture.NewStore(dir)
			require.NoError(t, err)
			for _, id := range []string{"r-1", "r-2"} {
				if slices.Contains(tt.kept, id) {
					continue
				}
				_, err := Run(t.Context(), src, out, Options{RolloutID: id})
				require.NoError(t, err, id)
				assert.Equal(t, readFile(t, src, id), readFile(t, out, id))
			}
		})
	}
}
