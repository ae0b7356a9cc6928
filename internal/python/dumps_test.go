package python

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Expected values are what CPython prints for json.loads(in) passed through each built-in.
func TestDumpsReprStr(t *testing.T) {
	tests := []struct {
		in    string
		dumps string // json.dumps(v, ensure_ascii=False, sort_keys=True)
		repr  string // repr(v)
		str   string // str(v)
	}{
		{`null`, `null`, `None`, `None`},
		{`true`, `true`, `True`, `True`},
		{`false`, `false`, `False`, `False`},
		{`-0`, `0`, `0`, `0`},
		{`1E2`, `100.0`, `100.0`, `100.0`},
		{`1e16`, `1e+16`, `1e+16`, `1e+16`},
		{`0.00001`, `1e-05`, `1e-05`, `1e-05`},
		{`123456789012345678901234567890`, `123456789012345678901234567890`, `123456789012345678901234567890`, `123456789012345678901234567890`},
		{`"a\"b\\c\n\u0001\u007f\u2028é"`, `"a\"b\\c\n\u0001` + "\u007f\u2028é" + `"`, `'a"b\\c\n\x01\x7f\u2028é'`, "a\"b\\c\n\u0001\u007f\u2028é"},
		{`[]`, `[]`, `[]`, `[]`},
		{`{}`, `{}`, `{}`, `{}`},
		{`{"b":1,"a":[true,null,"x'"],"é":{"z":1,"y":2}}`, `{"a": [true, null, "x'"], "b": 1, "é": {"y": 2, "z": 1}}`,
			`{'b': 1, 'a': [True, None, "x'"], 'é': {'z': 1, 'y': 2}}`, `{'b': 1, 'a': [True, None, "x'"], 'é': {'z': 1, 'y': 2}}`},
		{`[{"type":"text","text":2.50},"x"]`, `[{"text": 2.5, "type": "text"}, "x"]`,
			`[{'type': 'text', 'text': 2.5}, 'x']`, `[{'type': 'text', 'text': 2.5}, 'x']`},
		{`{"a":1,"a":2}`, `{"a": 2}`, `{'a': 2}`, `{'a': 2}`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			v, err := Loads([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.dumps, Dumps(v), "json.dumps")
			assert.Equal(t, tt.repr, Repr(v), "repr")
			assert.Equal(t, tt.str, Str(v), "str")
		})
	}
}
