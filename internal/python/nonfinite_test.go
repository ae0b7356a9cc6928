package python

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestNonFiniteLiterals: the values json.loads reads as non-finite floats, outside strings only.
func TestNonFiniteLiterals(t *testing.T) {
	cases := []struct {
		in   string
		want []NonFinite
	}{
		{`{"a":1.5,"b":[1,2]}`, nil},
		{`{"a":NaN}`, []NonFinite{{5, 8, "NaN"}}},
		{`[Infinity,-Infinity]`, []NonFinite{{1, 9, "Infinity"}, {10, 19, "-Infinity"}}},
		{`{"NaN":"-Infinity \" NaN","x":-1e400,"y":1E999,"z":1.5e308}`, []NonFinite{{30, 36, "-Infinity"}, {41, 46, "Infinity"}}},
		{`{"big":1180591620717411303424,"tiny":1e-400}`, nil},
		{`{"s":"\\","n":NaN}`, []NonFinite{{14, 17, "NaN"}}},
		{`{"bad":1.e400}`, nil},
		{`[-NaN]`, nil},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			assert.Equal(t, c.want, NonFiniteLiterals([]byte(c.in)))
		})
	}
}
