package claudecode

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
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

func TestTimestampOf(t *testing.T) {
	tests := []struct {
		name string
		json string
		want *float64
	}{
		{"UTC Z", `"2026-07-22T10:00:01Z"`, ptr(1784714401.0)},
		{"every Z is replaced", `"2026-07-22T10:00:01ZZ"`, nil},
		{"milliseconds", `"2026-07-22T10:00:02.100Z"`, ptr(1784714402.1)},
		{"offset", `"2026-07-22T12:00:00+02:00"`, ptr(1784714400.0)},
		{"naive is local (UTC here)", `"2026-07-22T10:00:00"`, ptr(1784714400.0)},
		{"integer", `1784714400`, ptr(1784714400.0)},
		{"float", `1.5`, ptr(1.5)},
		{"bool is not a number", `true`, nil},
		{"null", `null`, nil},
		{"bad string", `"bad-timestamp"`, nil},
		{"object", `{}`, nil},
		{"integer beyond float64", `1` + string(make([]byte, 0)) + `00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := python.Loads([]byte(tt.json))
			require.NoError(t, err)
			assert.Equal(t, tt.want, timestampOf(v, true, time.UTC))
		})
	}
	assert.Nil(t, timestampOf(ojson.Null(), false, time.UTC), "absent key")

	t.Run("naive times use the given zone", func(t *testing.T) {
		loc := time.FixedZone("X", 3600)
		got := timestampOf(ojson.String("2026-07-22T11:00:00.25"), true, loc)
		require.NotNil(t, got)
		assert.Equal(t, 1784714400.25, *got)
	})
}
