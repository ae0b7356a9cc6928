package claudecode

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/ojson"
	"github.com/gymtrace/gymtrace/internal/python"
)

// Expected values are what the reference's text(json.loads(in)) gives under CPython.
func TestTextOf(t *testing.T) {
	tests := []struct {
		in   string
		text string
	}{
		{`null`, ``},
		{`true`, `true`},
		{`-0`, `0`},
		{`1E2`, `100.0`},
		{`1e16`, `1e+16`},
		{`0.00001`, `1e-05`},
		{`123456789012345678901234567890`, `123456789012345678901234567890`},
		{`"a\"b\\c\n\u0001\u007f\u2028é"`, "a\"b\\c\n\u0001\u007f\u2028é"},
		{`[]`, ``},
		{`{}`, `{}`},
		{`{"b":1,"a":[true,null,"x'"],"é":{"z":1,"y":2}}`, `{"a": [true, null, "x'"], "b": 1, "é": {"y": 2, "z": 1}}`},
		{`[{"type":"text","text":"a"},{"type":"text","text":2.50},{"type":"text","text":0},{"type":"text","text":""},{"type":"text"}]`, `a2.5`},
		{`[{"type":"text","text":{"b":1,"a":"x"}}]`, `{'b': 1, 'a': 'x'}`},
		{`[{"type":"text","text":"a"},"x"]`, `[{"text": "a", "type": "text"}, "x"]`},
		{`{"a":1,"a":2}`, `{"a": 2}`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			v, err := python.Loads([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.text, textOf(v, true))
		})
	}
	assert.Equal(t, "", textOf(ojson.Value{}, false), "missing key")
}
