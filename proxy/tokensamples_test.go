package proxy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/ojson"
)

// TestOneSample: Python's `n not in (None, 1)` over the value json.loads reads
// (docs/TOKENS.md §1.5 step 6): == decides, so 1.0 and True pass, "1" does not.
func TestOneSample(t *testing.T) {
	cases := []struct {
		n    string // JSON text; "" is absent
		pass bool
	}{
		{"", true}, {"null", true}, {"1", true}, {"1.0", true}, {"1e0", true}, {"1E+0", true}, {"100e-2", true},
		{"1.00000000000000001", true}, {"true", true},
		{"false", false}, {"0", false}, {"2", false}, {"-1", false}, {"1.5", false}, {"0.99999999", false},
		{`"1"`, false}, {"[1]", false}, {`{}`, false}, {"1e400", false}, {"NaN", false}, {"-Infinity", false},
		{"100000000000000000000000001", false},
	}
	for _, c := range cases {
		t.Run(c.n, func(t *testing.T) {
			if c.n == "" {
				assert.True(t, oneSample(readAnswerMust(t, "null"), false))
				return
			}
			assert.Equal(t, c.pass, oneSample(readAnswerMust(t, c.n), true))
		})
	}
}

func readAnswerMust(t *testing.T, s string) ojson.Value {
	t.Helper()
	v, err := readAnswer([]byte(s))
	require.NoError(t, err)
	return v
}
