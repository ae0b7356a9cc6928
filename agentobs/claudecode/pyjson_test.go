package claudecode

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/ojson"
	"github.com/gymtrace/gymtrace/internal/pyrepr"
)

// Expected values are what CPython prints for json.loads(input) passed through the function.
func TestPythonBuiltins(t *testing.T) {
	tests := []struct {
		in    string
		dumps string // json.dumps(v, ensure_ascii=False, sort_keys=True)
		str   string // str(v)
		text  string // the reference's text(v)
	}{
		{`null`, `null`, `None`, ``},
		{`true`, `true`, `True`, `true`},
		{`-0`, `0`, `0`, `0`},
		{`1E2`, `100.0`, `100.0`, `100.0`},
		{`1e16`, `1e+16`, `1e+16`, `1e+16`},
		{`0.00001`, `1e-05`, `1e-05`, `1e-05`},
		{`123456789012345678901234567890`, `123456789012345678901234567890`, `123456789012345678901234567890`, `123456789012345678901234567890`},
		{`"a\"b\\c\n\u0001\u007f\u2028é"`, `"a\"b\\c\n\u0001` + "\u007f\u2028é" + `"`, "a\"b\\c\n\u0001\u007f\u2028é", "a\"b\\c\n\u0001\u007f\u2028é"},
		{`[]`, `[]`, `[]`, ``},
		{`{}`, `{}`, `{}`, `{}`},
		{`{"b":1,"a":[true,null,"x'"],"é":{"z":1,"y":2}}`, `{"a": [true, null, "x'"], "b": 1, "é": {"y": 2, "z": 1}}`,
			`{'b': 1, 'a': [True, None, "x'"], 'é': {'z': 1, 'y': 2}}`, `{"a": [true, null, "x'"], "b": 1, "é": {"y": 2, "z": 1}}`},
		{`[{"type":"text","text":"a"},{"type":"text","text":2.50},{"type":"text","text":0},{"type":"text","text":""},{"type":"text"}]`,
			`[{"text": "a", "type": "text"}, {"text": 2.5, "type": "text"}, {"text": 0, "type": "text"}, {"text": "", "type": "text"}, {"type": "text"}]`,
			`[{'type': 'text', 'text': 'a'}, {'type': 'text', 'text': 2.5}, {'type': 'text', 'text': 0}, {'type': 'text', 'text': ''}, {'type': 'text'}]`,
			`a2.5`},
		{`[{"type":"text","text":"a"},"x"]`, `[{"text": "a", "type": "text"}, "x"]`, `[{'type': 'text', 'text': 'a'}, 'x']`, `[{"text": "a", "type": "text"}, "x"]`},
		{`{"a":1,"a":2}`, `{"a": 2}`, `{'a': 2}`, `{"a": 2}`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			v, err := ojson.ParsePython([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.dumps, pyDumps(v), "json.dumps")
			assert.Equal(t, tt.str, pyStr(v), "str")
			assert.Equal(t, tt.text, textOf(v, true), "text")
		})
	}
	assert.Equal(t, "", textOf(ojson.Value{}, false), "missing key")
}

func TestPyStripLowerTypeName(t *testing.T) {
	assert.Equal(t, "", pyStrip(" \t\x1c\x1f\u00a0\u2028\u3000\u0085"))
	assert.Equal(t, "\u200bx", pyStrip("\u200bx\x0b"), "U+200B is not whitespace in Python")
	assert.Equal(t, "failed", pyLower("FAILED"))
	assert.NotEqual(t, "failed", pyLower("FA\u0130LED"), "İ lowers to i + U+0307 in Python")
	assert.Equal(t, "k", pyLower("\u212a"), "the Kelvin sign lowers to k in both")
	for in, want := range map[string]string{`null`: "NoneType", `true`: "bool", `1`: "int", `1.0`: "float", `"s"`: "str", `[]`: "list", `{}`: "dict"} {
		v, err := ojson.ParsePython([]byte(in))
		require.NoError(t, err)
		assert.Equal(t, want, pyrepr.TypeName(v), in)
	}
}
