package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/pyrepr"
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
		assert.ErrorIs(t, err, ErrInvalidRolloutID)
	case strings.HasPrefix(msg, explicitIDMessage):
		assert.True(t, strings.HasPrefix(err.Error(), msg), "%q does not start with %q", err.Error(), msg)
		assert.ErrorIs(t, err, ErrInvalidRolloutID)
	default:
		assert.Contains(t, err.Error(), msg)
		assert.NotErrorIs(t, err, ErrInvalidRolloutID)
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

func TestMaybeRolloutIDFromRunBodyVectors(t *testing.T) {
	cases := testvectors.Load(t, "rollout_ids.json")
	require.Equal(t, 53, len(cases), "rollout_ids.json case count")
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			want := decodeExpectation(t, c.Expected)
			t.Run("decoded", func(t *testing.T) {
				id, ok, err := MaybeRolloutIDFromRunBody(testvectors.Decode(t, c.Input))
				assertRolloutID(t, want, id, ok, err)
			})
			t.Run("raw JSON", func(t *testing.T) {
				id, ok, err := RolloutIDFromRunJSON(c.Input)
				assertRolloutID(t, want, id, ok, err)
			})
			t.Run("raw message body", func(t *testing.T) {
				id, ok, err := MaybeRolloutIDFromRunBody(c.Input)
				assertRolloutID(t, want, id, ok, err)
			})
		})
	}
}

func TestRolloutIDD10TrailingNewline(t *testing.T) {
	// D10: the reference's `$` accepts "a\n"; we refuse it with the normative text and Python's repr.
	for _, id := range []string{"a\n", "a\r\n", "abc\n", "\na"} {
		t.Run(id, func(t *testing.T) {
			_, ok, err := MaybeRolloutIDFromRunBody(map[string]any{RolloutIDKey: id})
			require.Error(t, err)
			assert.False(t, ok)
			assert.Equal(t, explicitIDMessage+"; got "+pyrepr.Str(id), err.Error())
		})
	}
}

// mappingProxy stands for Python's MappingProxyType: a mapping that is not map[string]any.
type mappingProxy map[string]int

// runRequest stands for a pydantic run-request model with extras (SPEC §8 #27).
type runRequest struct {
	extras map[string]any
	reads  []string
}

func (r *runRequest) RunField(key string) any {
	r.reads = append(r.reads, key)
	return r.extras[key]
}

func TestMaybeRolloutIDFromRunBodySpec27(t *testing.T) {
	tests := []struct {
		name   string
		body   any
		want   string
		wantOK bool
	}{
		{name: "mapping proxy task 3 rollout 1", body: mappingProxy{TaskIndexKey: 3, RolloutIndexKey: 1}, want: "3-1", wantOK: true},
		{name: "task only", body: mappingProxy{TaskIndexKey: 3}},
		{name: "empty mapping", body: mappingProxy{}},
		{name: "nil mapping", body: mappingProxy(nil)},
		{name: "null body", body: nil},
		{name: "model with extras 5 2", body: &runRequest{extras: map[string]any{TaskIndexKey: json.Number("5"), RolloutIndexKey: json.Number("2")}}, want: "5-2", wantOK: true},
		{name: "model without indices", body: &runRequest{extras: map[string]any{"other": 1}}},
		{name: "Go ints", body: map[string]any{TaskIndexKey: 7, RolloutIndexKey: int64(0), AttemptIndexKey: uint8(3)}, want: "7-0-a3", wantOK: true},
		{name: "Go float is a Python float", body: map[string]any{TaskIndexKey: 3.0, RolloutIndexKey: 1}, want: "3.0-1", wantOK: true},
		{name: "raw messages map", body: map[string]json.RawMessage{TaskIndexKey: json.RawMessage(`4`), RolloutIndexKey: json.RawMessage(`2`)}, want: "4-2", wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ok, err := MaybeRolloutIDFromRunBody(tt.body)
			require.NoError(t, err)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.want, id)
		})
	}
}

func TestMaybeRolloutIDNeverSerializesBody(t *testing.T) {
	// SPEC §8 #112: a body holding values no JSON encoder accepts still yields its id.
	body := map[string]any{
		TaskIndexKey:    json.Number("4"),
		RolloutIndexKey: json.Number("2"),
		"callback":      func() {},
		"events":        make(chan int),
	}
	_, marshalErr := json.Marshal(body)
	require.Error(t, marshalErr, "the body must be unserializable for this test to mean anything")
	id, ok, err := MaybeRolloutIDFromRunBody(body)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "4-2", id)

	model := &runRequest{extras: map[string]any{TaskIndexKey: json.Number("4"), RolloutIndexKey: json.Number("2")}}
	id, ok, err = MaybeRolloutIDFromRunBody(model)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "4-2", id)
	assert.Equal(t, []string{RolloutIDKey, TaskIndexKey, RolloutIndexKey, AttemptIndexKey}, model.reads)
}

func TestMaybeRolloutIDSpec55to57(t *testing.T) {
	base := func(extra map[string]any) map[string]any {
		m := map[string]any{TaskIndexKey: json.Number("3"), RolloutIndexKey: json.Number("2")}
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
		{name: "56 explicit wins", body: base(map[string]any{RolloutIDKey: "s7-3-2"}), want: "s7-3-2"},
		{name: "56 explicit with attempt", body: map[string]any{RolloutIDKey: "s7-3-2", AttemptIndexKey: json.Number("1")}, want: "s7-3-2-a1"},
		{name: "56 explicit alone", body: map[string]any{RolloutIDKey: "abc"}, want: "abc"},
		// #57 unusable explicit ids.
		{name: "57 .hidden", body: base(map[string]any{RolloutIDKey: ".hidden"}), wantErr: explicitIDMessage + "; got '.hidden'"},
		{name: "57 has/slash", body: base(map[string]any{RolloutIDKey: "has/slash"}), wantErr: explicitIDMessage + "; got 'has/slash'"},
		{name: "57 has space", body: base(map[string]any{RolloutIDKey: "has space"}), wantErr: explicitIDMessage + "; got 'has space'"},
		{name: "57 empty", body: base(map[string]any{RolloutIDKey: ""}), wantErr: explicitIDMessage + "; got ''"},
		{name: "57 int 7", body: base(map[string]any{RolloutIDKey: json.Number("7")}), wantErr: explicitIDMessage + "; got 7"},
		{name: "57 null is derived", body: base(map[string]any{RolloutIDKey: nil}), want: "3-2"},
		// Reprs of other explicit values.
		{name: "explicit true", body: map[string]any{RolloutIDKey: true}, wantErr: explicitIDMessage + "; got True"},
		{name: "explicit float", body: map[string]any{RolloutIDKey: json.Number("1e16")}, wantErr: explicitIDMessage + "; got 1e+16"},
		{name: "explicit list", body: map[string]any{RolloutIDKey: []any{"a", json.Number("1"), nil, false}}, wantErr: explicitIDMessage + "; got ['a', 1, None, False]"},
		{name: "explicit dict sorted", body: map[string]any{RolloutIDKey: map[string]any{"b": "x", "a": json.Number("2.50")}}, wantErr: explicitIDMessage + "; got {'a': 2.5, 'b': 'x'}"},
		{name: "explicit quote", body: map[string]any{RolloutIDKey: "it's"}, wantErr: explicitIDMessage + `; got "it's"`},
		{name: "explicit too long is fine here", body: map[string]any{RolloutIDKey: strings.Repeat("a", 300)}, want: strings.Repeat("a", 300)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ok, err := MaybeRolloutIDFromRunBody(tt.body)
			if tt.wantErr != "" {
				require.Error(t, err)
				if strings.HasPrefix(tt.wantErr, explicitIDMessage) {
					assert.Equal(t, tt.wantErr, err.Error())
					assert.ErrorIs(t, err, ErrInvalidRolloutID)
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

func TestRolloutIDFromRunJSONKeepsSenderOrder(t *testing.T) {
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
			_, ok, err := RolloutIDFromRunJSON([]byte(tt.line))
			require.Error(t, err)
			assert.False(t, ok)
			assert.Equal(t, explicitIDMessage+"; got "+tt.want, err.Error())
		})
	}
}

func TestRolloutIDFromRunJSON(t *testing.T) {
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
			id, ok, err := RolloutIDFromRunJSON([]byte(tt.line))
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

func TestMaybeRolloutIDUnsupportedValues(t *testing.T) {
	type opaque struct{ X int }
	tests := []struct {
		name string
		body map[string]any
	}{
		{name: "struct task index", body: map[string]any{TaskIndexKey: opaque{1}, RolloutIndexKey: 1}},
		{name: "struct attempt", body: map[string]any{RolloutIDKey: "r", AttemptIndexKey: opaque{1}}},
		{name: "bad number text", body: map[string]any{TaskIndexKey: json.Number("1x"), RolloutIndexKey: 1}},
		{name: "bad raw message", body: map[string]any{TaskIndexKey: json.RawMessage("{"), RolloutIndexKey: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ok, err := MaybeRolloutIDFromRunBody(tt.body)
			require.Error(t, err)
			assert.False(t, ok)
			assert.True(t, strings.HasPrefix(err.Error(), "rollout id: "), err.Error())
		})
	}
	// An explicit id of an unsupported type still gets the normative message.
	_, _, err := MaybeRolloutIDFromRunBody(map[string]any{RolloutIDKey: opaque{1}})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrInvalidRolloutID))
	assert.True(t, strings.HasPrefix(err.Error(), explicitIDMessage+"; got "))
}

// FuzzRolloutIDFromRunJSON checks that id derivation never panics and that the raw-JSON path and
// the decoded-map path agree.
func FuzzRolloutIDFromRunJSON(f *testing.F) {
	for _, c := range testvectors.Load(f, "rollout_ids.json") {
		f.Add([]byte(c.Input))
	}
	f.Add([]byte(`{"_ng_task_index":"٣","_ng_rollout_index":1e-7,"_ng_attempt_index":" +1_0 "}`))
	f.Add([]byte(`{"_ng_rollout_id":{"a":[{"b":"\u2028"}]}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		id, ok, err := RolloutIDFromRunJSON(line)
		if err == nil && !ok && id != "" {
			t.Fatalf("id %q without ok", id)
		}
		if !json.Valid(line) {
			if err == nil {
				t.Fatalf("invalid JSON %q accepted", line)
			}
			return
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		id2, ok2, err2 := MaybeRolloutIDFromRunBody(v)
		if (err == nil) != (err2 == nil) || ok != ok2 || id != id2 {
			t.Fatalf("paths disagree on %q: json (%q,%v,%v) decoded (%q,%v,%v)", line, id, ok, err, id2, ok2, err2)
		}
	})
}

func BenchmarkMaybeRolloutIDFromRunBody(b *testing.B) {
	body := map[string]any{TaskIndexKey: json.Number("12"), RolloutIndexKey: json.Number("3"), AttemptIndexKey: json.Number("1"), "input": "hello"}
	b.ReportAllocs()
	for b.Loop() {
		if id, ok, err := MaybeRolloutIDFromRunBody(body); err != nil || !ok || id != "12-3-a1" {
			b.Fatal(id, ok, err)
		}
	}
}
