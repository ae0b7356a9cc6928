package python

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/ojson"
)

// Expected values are CPython's bool(json.loads(in)).
func TestTruthy(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{`null`, false}, {`false`, false}, {`true`, true}, {`0`, false}, {`0.0`, false}, {`-0`, false},
		{`0e10`, false}, {`1`, true}, {`1e-400`, false}, {`""`, false}, {`"0"`, true}, {`"false"`, true},
		{`[]`, false}, {`[0]`, true}, {`{}`, false}, {`{"a":null}`, true}, {`123456789012345678901234567890`, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			v, err := Loads([]byte(tc.in))
			require.NoError(t, err)
			assert.Equal(t, tc.want, Truthy(v))
		})
	}
	assert.True(t, Truthy(ojson.Number("1e400")), "a number beyond float64 is not zero")
}
