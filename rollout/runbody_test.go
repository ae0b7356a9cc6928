package rollout

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
)

// expectation is a decoded vector "expected": a string, null, or {"error": "<Type>: <message>"}.
type expectation struct {
	isNull bool
	value  string
	err    string // "<Type>: <message>" when the reference raises
}

func decodeExpectation(t *testing.T, raw json.RawMessage) expectation {
	t.Helper()
	switch v := testvectors.Decode(t, raw).(type) {
	case nil:
		return expectation{isNull: true}
	case string:
		return expectation{value: v}
	case map[string]any:
		msg, ok := v["error"].(string)
		require.True(t, ok, "expected object without error: %s", raw)
		return expectation{err: msg}
	default:
		t.Fatalf("unexpected expected value %s", raw)
		return expectation{}
	}
}

// assertVectorError checks err against a reference error "<Type>: <message>": normative
// _ng_rollout_id texts must be equal (or, when the vector gives only the rule, a prefix); for the
// other Python errors our text must contain Python's message.
func assertVectorError(t *testing.T, want string, err error) {
	t.Helper()
	require.Error(t, err)
	_, msg, ok := strings.Cut(want, ": ")
	require.True(t, ok, "malformed expected error %q", want)
	switch {
	case strings.HasPrefix(msg, explicitIDMessage+"; got "):
		assert.Equal(t, msg, err.Error())
		assert.ErrorIs(t, err, ErrInvalidID)
	case strings.HasPrefix(msg, explicitIDMessage):
		assert.True(t, strings.HasPrefix(err.Error(), msg), "%q does not start with %q", err.Error(), msg)
		assert.ErrorIs(t, err, ErrInvalidID)
	default:
		assert.Contains(t, err.Error(), msg)
		assert.NotErrorIs(t, err, ErrInvalidID)
	}
}

func assertRolloutID(t *testing.T, want expectation, id string, ok bool, err error) {
	t.Helper()
	switch {
	case want.err != "":
		assertVectorError(t, want.err, err)
		assert.False(t, ok)
		assert.Empty(t, id)
	case want.isNull:
		require.NoError(t, err)
		assert.False(t, ok)
		assert.Empty(t, id)
	default:
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, want.value, id)
	}
}

func TestIDFromRunBodyVectors(t *testing.T) {
	cases := testvectors.Load(t, "rollout_ids.json")
	require.Equal(t, 53, len(cases), "rollout_ids.json case count")
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			want := decodeExpectation(t, c.Expected)
			id, ok, err := IDFromRunBody(c.Input)
			assertRolloutID(t, want, id, ok, err)
		})
	}
}

func TestRolloutIDD10TrailingNewline(t *testing.T) {
	// D10: the reference's `$` accepts "a\n"; we refuse it with the normative text and Python's repr.
	for _, id := range []string{"a\n", "a\r\n", "abc\n", "\na"} {
		t.Run(id, func(t *testing.T) {
			_, ok, err := IDFromRunBody(js(t, map[string]any{IDKey: id}))
			require.Error(t, err)
			assert.False(t, ok)
			assert.Equal(t, explicitIDMessage+"; got "+python.ReprStr(id), err.Error())
		})
	}
}

func TestIDFromRunBodySpec55to57(t *testing.T) {
	base := func(extra map[string]any) map[string]any {
		m := map[string]any{TaskIndexKey: json.Number("3"), IndexKey: json.Number("2")}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name    string
		body    map[string]any
		want    string
		wantErr string
	}{
		// #55 attempt suffix.
		{name: "55 attempt absent", body: base(nil), want: "3-2"},
		{name: "55 attempt 0", body: base(map[string]any{AttemptIndexKey: json.Number("0")}), want: "3-2"},
		{name: "55 attempt 1", body: base(map[string]any{AttemptIndexKey: json.Number("1")}), want: "3-2-a1"},
		{name: "55 attempt string 2", body: base(map[string]any{AttemptIndexKey: "2"}), want: "3-2-a2"},
		{name: "55 attempt invalid", body: base(map[string]any{AttemptIndexKey: "invalid"}), wantErr: "invalid literal for int() with base 10: 'invalid'"},
		// #56 explicit ids.
		{name: "56 explicit wins", body: base(map[string]any{IDKey: "s7-3-2"}), want: "s7-3-2"},
		{name: "56 explicit with attempt", body: map[string]any{IDKey: "s7-3-2", AttemptIndexKey: json.Number("1")}, want: "s7-3-2-a1"},
		{name: "56 explicit alone", body: map[string]any{IDKey: "abc"}, want: "abc"},
		// #57 unusable explicit ids.
		{name: "57 .hidden", body: base(map[string]any{IDKey: ".hidden"}), wantErr: explicitIDMessage + "; got '.hidden'"},
		{name: "57 has/slash", body: base(map[string]any{IDKey: "has/slash"}), wantErr: explicitIDMessage + "; got 'has/slash'"},
		{name: "57 has space", body: base(map[string]any{IDKey: "has space"}), wantErr: explicitIDMessage + "; got 'has space'"},
		{name: "57 empty", body: base(map[string]any{IDKey: ""}), wantErr: explicitIDMessage + "; got ''"},
		{name: "57 int 7", body: base(map[string]any{IDKey: json.Number("7")}), wantErr: explicitIDMessage + "; got 7"},
		{name: "57 null is derived", body: base(map[string]any{IDKey: nil}), want: "3-2"},
		// Reprs of other explicit values.
		{name: "explicit true", body: map[string]any{IDKey: true}, wantErr: explicitIDMessage + "; got True"},
		{name: "explicit float", body: map[string]any{IDKey: json.Number("1e16")}, wantErr: explicitIDMessage + "; got 1e+16"},
		{name: "explicit list", body: map[string]any{IDKey: []any{"a", json.Number("1"), nil, false}}, wantErr: explicitIDMessage + "; got ['a', 1, None, False]"},
		{name: "explicit dict", body: map[string]any{IDKey: map[string]any{"b": "x", "a": json.Number("2.50")}}, wantErr: explicitIDMessage + "; got {'a': 2.5, 'b': 'x'}"},
		{name: "explicit quote", body: map[string]any{IDKey: "it's"}, wantErr: explicitIDMessage + `; got "it's"`},
		{name: "explicit too long is fine here", body: map[string]any{IDKey: strings.Repeat("a", 300)}, want: strings.Repeat("a", 300)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ok, err := IDFromRunBody(js(t, tt.body))
			if tt.wantErr != "" {
				require.Error(t, err)
				if strings.HasPrefix(tt.wantErr, explicitIDMessage) {
					assert.Equal(t, tt.wantErr, err.Error())
					assert.ErrorIs(t, err, ErrInvalidID)
				} else {
					assert.Contains(t, err.Error(), tt.wantErr)
					assert.Contains(t, err.Error(), AttemptIndexKey)
				}
				assert.False(t, ok)
				return
			}
			require.NoError(t, err)
			assert.True(t, ok)
			assert.Equal(t, tt.want, id)
		})
	}
}

func TestIDFromRunBodyKeepsSenderOrder(t *testing.T) {
	tests := []struct {
		name string
		line string
		want string
	}{
		{name: "object in sender order", line: `{"_ng_rollout_id":{"b":1,"a":[true,null,"x\ny"]}}`, want: `{'b': 1, 'a': [True, None, 'x\ny']}`},
		{name: "repeated nested key keeps first position, last value", line: `{"_ng_rollout_id":{"k":1,"z":2,"k":3}}`, want: `{'k': 3, 'z': 2}`},
		{name: "number text", line: `{"_ng_rollout_id":-0.0}`, want: `-0.0`},
		{name: "big int", line: `{"_ng_rollout_id":123456789012345678901234567890}`, want: `123456789012345678901234567890`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ok, err := IDFromRunBody([]byte(tt.line))
			require.Error(t, err)
			assert.False(t, ok)
			assert.Equal(t, explicitIDMessage+"; got "+tt.want, err.Error())
		})
	}
}

func TestIDFromRunBody(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    string
		wantOK  bool
		wantErr bool
	}{
		{name: "line with other keys", line: `{"responses_create_params":{"input":"hi"},"_ng_task_index":4,"_ng_rollout_index":2,"reward":1.0}` + "\n", want: "4-2", wantOK: true},
		{name: "repeated key takes the last value", line: `{"_ng_task_index":1,"_ng_rollout_index":2,"_ng_task_index":9}`, want: "9-2", wantOK: true},
		{name: "leading whitespace", line: " \t{\"_ng_rollout_id\":\"x\"}", want: "x", wantOK: true},
		{name: "array", line: `[1,2]`},
		{name: "null", line: `null`},
		{name: "empty", line: ``, wantErr: true},
		{name: "truncated", line: `{"_ng_task_index":1,`, wantErr: true},
		{name: "two values", line: `{} {}`, wantErr: true},
		{name: "float index", line: `{"_ng_task_index":1E2,"_ng_rollout_index":-0}`, want: "100.0-0", wantOK: true},
		{name: "huge float attempt", line: `{"_ng_rollout_id":"r","_ng_attempt_index":1e400}`, wantErr: true},
		{name: "negative huge float attempt", line: `{"_ng_rollout_id":"r","_ng_attempt_index":-1e400}`, wantErr: true},
		{name: "list task index", line: `{"_ng_task_index":[1,"a"],"_ng_rollout_index":{"k":null}}`, want: "[1, 'a']-{'k': None}", wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ok, err := IDFromRunBody([]byte(tt.line))
			if tt.wantErr {
				require.Error(t, err)
				assert.False(t, ok)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.want, id)
		})
	}
}

// FuzzIDFromRunBody checks that id derivation never panics, refuses what is not JSON, and does
// not depend on insignificant whitespace (the compacted body gives the same answer).
func FuzzIDFromRunBody(f *testing.F) {
	for _, c := range testvectors.Load(f, "rollout_ids.json") {
		f.Add([]byte(c.Input))
	}
	f.Add([]byte(`{"_ng_task_index":"٣","_ng_rollout_index":1e-7,"_ng_attempt_index":" +1_0 "}`))
	f.Add([]byte(`{"_ng_rollout_id":{"a":[{"b":"\u2028"}]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		id, ok, err := IDFromRunBody(body)
		if !ok && id != "" {
			t.Fatalf("id %q without ok", id)
		}
		if !json.Valid(body) {
			if err == nil {
				t.Fatalf("invalid JSON %q accepted", body)
			}
			return
		}
		var compact bytes.Buffer
		if json.Compact(&compact, body) != nil {
			return
		}
		id2, ok2, err2 := IDFromRunBody(compact.Bytes())
		if (err == nil) != (err2 == nil) || ok != ok2 || id != id2 {
			t.Fatalf("%q and its compact form disagree: (%q,%v,%v) vs (%q,%v,%v)", body, id, ok, err, id2, ok2, err2)
		}
	})
}

func BenchmarkIDFromRunBody(b *testing.B) {
	body := []byte(`{"_ng_task_index":12,"_ng_rollout_index":3,"_ng_attempt_index":1,"input":"hello"}`)
	b.ReportAllocs()
	for b.Loop() {
		if id, ok, err := IDFromRunBody(body); err != nil || !ok || id != "12-3-a1" {
			b.Fatal(id, ok, err)
		}
	}
}
