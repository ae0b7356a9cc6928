package tokens

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInspect: a read shows what each step of a capture's life leaves, never freezes and writes
// nothing but the lock file; Peek agrees with the Freeze that follows it.
func TestInspect(t *testing.T) {
	s := vectorStore(t)
	has, err := s.HasCapture("r0")
	require.NoError(t, err)
	assert.False(t, has)
	_, err = os.Stat(s.path("r0", LockFileSuffix))
	assert.ErrorIs(t, err, os.ErrNotExist, "HasCapture creates nothing")

	require.NoError(t, s.BeginCall("r0", "c0"))
	require.NoError(t, s.BeginCall("r0", "c1"))
	require.NoError(t, s.Append(baseEntry("r0", "c0")))
	require.NoError(t, s.MarkIncomplete("r0", ""))
	before := files(t, s.Dir())

	in, err := s.Inspect("r0")
	require.NoError(t, err)
	assert.Equal(t, files(t, s.Dir()), before, "Inspect writes nothing")
	assert.True(t, in.HasFiles)
	assert.False(t, in.Frozen)
	assert.True(t, in.Incomplete)
	assert.Equal(t, int64(2), in.Version)
	assert.Equal(t, []string{"c0", "c1"}, in.Intents)
	assert.Equal(t, []string{""}, in.Marks)
	assert.Equal(t, []string{"c1"}, in.Dangling)
	require.Len(t, in.Entries, 1)
	peek, err := in.Peek()
	require.NoError(t, err)
	assert.True(t, peek.Incomplete)
	assert.Empty(t, peek.SnapshotID)

	snap, err := s.Freeze("r0")
	require.NoError(t, err)
	in, err = s.Inspect("r0")
	require.NoError(t, err)
	peek, err = in.Peek()
	require.NoError(t, err)
	assert.Equal(t, snap, peek, "Peek of a frozen capture is its snapshot")

	dropped, err := s.Drop("r0", snap.SnapshotID, snap.Version)
	require.NoError(t, err)
	require.True(t, dropped)
	in, err = s.Inspect("r0")
	require.NoError(t, err)
	assert.True(t, in.Retired)
	assert.True(t, in.HasFiles, "the tombstone is a capture file")
	_, err = in.Peek()
	assert.ErrorIs(t, err, ErrRetired)
	assert.EqualError(t, err, "Token capture for rollout r0 is retired")

	require.NoError(t, os.WriteFile(s.path("r1", EntriesFileSuffix), []byte("{}\n"), 0o600))
	in, err = s.Inspect("r1")
	require.NoError(t, err, "an unreadable entry is the inspection's, not the read's error")
	require.Error(t, in.EntriesErr)
	_, err = in.Peek()
	assert.Equal(t, in.EntriesErr, err)

	_, err = s.HasCapture("a/b")
	assert.ErrorIs(t, err, ErrInvalidRolloutID)
}

// TestInspectAgreesWithFreeze: for each case of the index recovery (TOKENS.md §2.7) — a torn final
// line, an indexed_size past the file's end or below 0, a call id with two different payloads, a
// corrupt line before more content, a line that does not validate, a legacy state — Inspect's Peek
// returns what the Freeze that follows returns (the same snapshot entries and incompleteness, or an
// error of the same text), and Inspect itself changes no file: it reports the torn tail without
// cutting it.
func TestInspectAgreesWithFreeze(t *testing.T) {
	entry := func(cid string, gen int64) string {
		e := baseEntry("r0", cid)
		e.GenerationTokenIDs, e.GenerationLogProbs = []int64{gen}, []float64{-0.5}
		b, err := e.CanonicalJSON()
		require.NoError(t, err)
		return string(b) + "\n"
	}
	const state = `{"entry_digests":{},"frozen":false,"incomplete":false,"indexed_size":%d,"retired":false,"snapshot_id":"","version":1}` + "\n"
	for _, tt := range []struct {
		name    string
		jsonl   string
		state   string // "": none (legacy defaults)
		torn    int64
		wantErr string // the freeze's error text; "": it passes
	}{
		{name: "torn final line", jsonl: entry("c0", 4) + "{garbage\n", torn: 9},
		{name: "torn final line without LF", jsonl: entry("c0", 4) + `{"created_at":0.0,"gen`, torn: int64(len(`{"created_at":0.0,"gen`))},
		{name: "torn final line after an indexed entry", jsonl: entry("c0", 4) + "{garbage\n  \n", state: fmt.Sprintf(state, len(entry("c0", 4))), torn: 12},
		{name: "indexed_size past the end", jsonl: entry("c0", 4), state: fmt.Sprintf(state, 999999),
			wantErr: "ValueError: Invalid token-capture index offset for rollout r0"},
		{name: "indexed_size below 0", jsonl: entry("c0", 4), state: fmt.Sprintf(state, -1),
			wantErr: "ValueError: Invalid token-capture index offset for rollout r0"},
		{name: "indexed_size with no file", state: fmt.Sprintf(state, 10),
			wantErr: "ValueError: Invalid token-capture index offset for rollout r0"},
		{name: "conflicting durable payloads", jsonl: entry("c0", 4) + entry("c0", 5),
			wantErr: "ValueError: Model call id 'c0' has conflicting durable payloads for rollout 'r0'"},
		{name: "corrupt line before more content", jsonl: entry("c0", 4) + "{garbage\n" + entry("c1", 6),
			wantErr: "JSONDecodeError: "},
		{name: "line that does not validate", jsonl: `{"rollout_id":"r0"}` + "\n", wantErr: "ValidationError: "},
		{name: "identical duplicate lines", jsonl: entry("c0", 4) + entry("c0", 4)},
		{name: "legacy state", jsonl: entry("c0", 4), state: `{"frozen":false,"version":7}` + "\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := vectorStore(t)
			if tt.jsonl != "" {
				require.NoError(t, os.WriteFile(s.path("r0", EntriesFileSuffix), []byte(tt.jsonl), 0o600))
			}
			if tt.state != "" {
				require.NoError(t, os.WriteFile(s.path("r0", StateFileSuffix), []byte(tt.state), 0o600))
			}
			require.NoError(t, os.WriteFile(s.path("r0", LockFileSuffix), nil, 0o600))
			before := files(t, s.Dir())

			in, err := s.Inspect("r0")
			require.NoError(t, err)
			assert.Equal(t, before, files(t, s.Dir()), "Inspect changes no file: the torn tail is reported, not cut")
			assert.Equal(t, tt.torn, in.TornTail)
			peek, peekErr := in.Peek()

			snap, freezeErr := s.Freeze("r0")
			if tt.wantErr != "" {
				require.Error(t, freezeErr)
				assert.True(t, strings.HasPrefix(ExceptionText(freezeErr), tt.wantErr), ExceptionText(freezeErr))
				require.Error(t, peekErr, "Peek fails as the freeze does")
				assert.Equal(t, ExceptionText(freezeErr), ExceptionText(peekErr))
				assert.Equal(t, ExceptionText(freezeErr), ExceptionText(in.IndexErr), "the index recovery's refusal")
				return
			}
			require.NoError(t, freezeErr)
			require.NoError(t, peekErr, "Peek passes as the freeze does")
			assert.NoError(t, in.IndexErr)
			assert.Equal(t, snap.Entries, peek.Entries)
			assert.Equal(t, snap.Incomplete, peek.Incomplete)
			if tt.torn > 0 {
				b, err := os.ReadFile(s.path("r0", EntriesFileSuffix))
				require.NoError(t, err)
				assert.Equal(t, tt.jsonl[:len(tt.jsonl)-int(tt.torn)], string(b), "the freeze cuts what Inspect reported")
			}
		})
	}
}
