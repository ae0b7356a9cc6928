package rolloutline

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseKeepsOriginalText(t *testing.T) {
	line := `{"responses_create_params": {"input": "h\u00e9llo", "temperature": 1.0E0},` +
		` "reward":1.50, "_ng_task_index" :3,"big":123456789012345678901234567890,` +
		`"esc\u0061ped":"<a>&\u2028","list":[ 1 , {"x" : null} ],"t":true}` + "\n"
	l, err := Parse([]byte(line))
	require.NoError(t, err)
	assert.Equal(t, []string{"responses_create_params", "reward", "_ng_task_index", "big", "escaped", "list", "t"}, l.Keys())

	tests := []struct {
		key  string
		want string
	}{
		{key: "responses_create_params", want: `{"input": "h\u00e9llo", "temperature": 1.0E0}`},
		{key: "reward", want: `1.50`},
		{key: "_ng_task_index", want: `3`},
		{key: "big", want: `123456789012345678901234567890`},
		{key: "escaped", want: `"<a>&\u2028"`},
		{key: "list", want: `[ 1 , {"x" : null} ]`},
		{key: "t", want: `true`},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			got, ok := l.Get(tt.key)
			require.True(t, ok)
			assert.Equal(t, tt.want, string(got))
		})
	}
	_, ok := l.Get("missing")
	assert.False(t, ok)

	assert.Equal(t,
		`{"responses_create_params":{"input": "h\u00e9llo", "temperature": 1.0E0},"reward":1.50,"_ng_task_index":3,`+
			`"big":123456789012345678901234567890,"esc\u0061ped":"<a>&\u2028","list":[ 1 , {"x" : null} ],"t":true}`,
		string(l.Bytes()))
}

func TestSet(t *testing.T) {
	const line = `{"a":1,"ng_model_call_capture":{"old":true},"b":"x"}`
	tests := []struct {
		name  string
		line  string
		key   string
		value string
		want  string
	}{
		{name: "replace in place", line: line, key: "ng_model_call_capture", value: `{"rollout_id":"0-0","calls":[]}`,
			want: `{"a":1,"ng_model_call_capture":{"rollout_id":"0-0","calls":[]},"b":"x"}`},
		{name: "append at the end", line: `{"a":1,"b":"x"}`, key: "ng_model_call_capture", value: `null`,
			want: `{"a":1,"b":"x","ng_model_call_capture":null}`},
		{name: "value compacted, text kept", line: `{}`, key: "k", value: " {\n  \"n\": 1.0e+2,\n  \"s\": \"\\u00e9 <\"\n}\n",
			want: `{"k":{"n":1.0e+2,"s":"\u00e9 <"}}`},
		{name: "new key not HTML-escaped", line: `{}`, key: "<k>&\"", value: `1`, want: `{"<k>&\"":1}`},
		{name: "escaped key matches decoded key", line: `{"ng\u005fmodel_call_capture":1,"z":2}`, key: "ng_model_call_capture", value: `2`,
			want: `{"ng\u005fmodel_call_capture":2,"z":2}`},
		{name: "repeated key collapses onto first", line: `{"k":1,"a":0,"k":2,"k":3}`, key: "k", value: `9`,
			want: `{"k":9,"a":0}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Parse([]byte(tt.line))
			require.NoError(t, err)
			require.NoError(t, l.Set(tt.key, []byte(tt.value)))
			assert.Equal(t, tt.want, string(l.Bytes()))
			got, ok := l.Get(tt.key)
			require.True(t, ok)
			assert.True(t, json.Valid(got))
		})
	}
}

func TestDelete(t *testing.T) {
	tests := []struct {
		name, line, key, want string
		found                 bool
	}{
		{"middle key", `{"a":1,"ng_trajectory":{"x":[1.0]},"b":"x"}`, "ng_trajectory", `{"a":1,"b":"x"}`, true},
		{"repeated key, every occurrence", `{"k":1,"a":0,"k":2}`, "k", `{"a":0}`, true},
		{"escaped key matches decoded key", `{"ng\u005ftrajectory":1,"z":2}`, "ng_trajectory", `{"z":2}`, true},
		{"absent key", `{"a":1}`, "b", `{"a":1}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Parse([]byte(tt.line))
			require.NoError(t, err)
			assert.Equal(t, tt.found, l.Delete(tt.key))
			assert.Equal(t, tt.want, string(l.Bytes()))
			_, ok := l.Get(tt.key)
			assert.False(t, ok)
		})
	}
}

func TestSetInvalidValueLeavesLineUnchanged(t *testing.T) {
	l, err := Parse([]byte(`{"a":1}`))
	require.NoError(t, err)
	for _, bad := range []string{``, `{`, `1 2`, `nul`, `{"a":}`} {
		t.Run(bad, func(t *testing.T) {
			err := l.Set("a", []byte(bad))
			require.Error(t, err)
			assert.Contains(t, err.Error(), `"a"`)
			assert.Equal(t, `{"a":1}`, string(l.Bytes()))
		})
	}
}

func TestGetRepeatedKeyReturnsLast(t *testing.T) {
	l, err := Parse([]byte(`{"k":1,"k":2}`))
	require.NoError(t, err)
	got, ok := l.Get("k")
	require.True(t, ok)
	assert.Equal(t, `2`, string(got))
	assert.Equal(t, `{"k":1,"k":2}`, string(l.Bytes()), "untouched repeated keys are kept")
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		line string
		want string
		is   error
	}{
		{name: "empty", line: ``, want: "rolloutline: parse"},
		{name: "U+FEFF inside a string is no BOM", line: "{\"a\":\"\ufeff\"", want: "rolloutline: parse"},
		{name: "array", line: `[1]`, want: "not a JSON object"},
		{name: "string", line: `"{}"`, want: "not a JSON object"},
		{name: "truncated", line: `{"a":1`, want: "rolloutline: parse"},
		{name: "two objects", line: `{}{}`, want: "rolloutline: parse"},
		{name: "two lines", line: "{}\n{}\n", want: "rolloutline: parse"},
		{name: "BOM", line: "\ufeff{}", want: "starts with a UTF-8 byte order mark (U+FEFF", is: ErrByteOrderMark},
		{name: "BOM before a CRLF line", line: "\ufeff{\"a\":1}\r\n", want: "JSON lines must not", is: ErrByteOrderMark},
		{name: "NaN", line: `{"a":NaN}`, want: "rolloutline: parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.line))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			} else {
				assert.NotErrorIs(t, err, ErrByteOrderMark)
			}
		})
	}
}

func TestParseCopiesInput(t *testing.T) {
	buf := []byte(`{"a":"x"}`)
	l, err := Parse(buf)
	require.NoError(t, err)
	copy(buf, strings.Repeat("#", len(buf)))
	assert.Equal(t, `{"a":"x"}`, string(l.Bytes()))
}

func TestZeroLineAndCopies(t *testing.T) {
	var l Line
	assert.Equal(t, `{}`, string(l.Bytes()))
	assert.Empty(t, l.Keys())
	require.NoError(t, l.Set("a", []byte(`1`)))
	c := l
	require.NoError(t, c.Set("a", []byte(`2`)))
	assert.Equal(t, `{"a":1}`, string(l.Bytes()), "Set on a copy leaves the original alone")
	assert.Equal(t, `{"a":2}`, string(c.Bytes()))
}

func TestEmptyObjectVariants(t *testing.T) {
	for _, line := range []string{`{}`, " { } \r\n", "{\n}"} {
		l, err := Parse([]byte(line))
		require.NoError(t, err)
		assert.Equal(t, `{}`, string(l.Bytes()))
	}
}

func decodeAny(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return v
}

func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"a":1}`, `{"a":{"b":[1,"x\"}",{"c":null}]},"d":-0.0e+1}`, `{"k":1,"k":2}`,
		"{\"a\" : [ ] ,\n\"b\":\"\\\\\"}\r\n", `[1]`, `{"a":"\ud800"}`, `{"\u0000":"\u00e9"}`,
	} {
		f.Add([]byte(seed), []byte(`{"calls":[]}`))
	}
	f.Fuzz(func(t *testing.T, line, value []byte) {
		l, err := Parse(line)
		if err != nil {
			if json.Valid(line) && bytes.HasPrefix(bytes.TrimLeft(line, " \t\r\n"), []byte("{")) {
				t.Fatalf("valid object %q refused: %v", line, err)
			}
			return
		}
		out := l.Bytes()
		if !json.Valid(out) {
			t.Fatalf("Bytes of %q is invalid: %q", line, out)
		}
		if !reflect.DeepEqual(decodeAny(t, line), decodeAny(t, out)) {
			t.Fatalf("values changed: %q -> %q", line, out)
		}
		again, err := Parse(out)
		if err != nil || string(again.Bytes()) != string(out) {
			t.Fatalf("not idempotent: %q -> %q (%v)", out, again.Bytes(), err)
		}
		before := decodeAny(t, out).(map[string]any)
		if err := l.Set("ng_model_call_capture", value); err != nil {
			if json.Valid(value) {
				t.Fatalf("valid value %q refused: %v", value, err)
			}
			return
		}
		after := decodeAny(t, l.Bytes()).(map[string]any)
		before["ng_model_call_capture"] = decodeAny(t, value)
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("Set changed other members: %q -> %q", out, l.Bytes())
		}
	})
}

func BenchmarkParseSetBytes(b *testing.B) {
	line := []byte(`{"responses_create_params":{"input":"` + strings.Repeat("x", 4096) + `"},"response":{"output":[]},"reward":1.0,"_ng_task_index":3,"_ng_rollout_index":1}` + "\n")
	value := []byte(`{"rollout_id":"3-1","metrics":{"num_calls":1},"calls":[]}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		l, err := Parse(line)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Set("ng_model_call_capture", value); err != nil {
			b.Fatal(err)
		}
		_ = l.Bytes()
	}
}
