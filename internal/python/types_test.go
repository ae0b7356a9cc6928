package python

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Expected values are CPython's type(json.loads(in)).__name__.
func TestTypeName(t *testing.T) {
	for in, want := range map[string]string{
		`null`: "NoneType", `true`: "bool", `1`: "int", `-0`: "int", `1.0`: "float", `1e2`: "float",
		`"s"`: "str", `[]`: "list", `{}`: "dict",
	} {
		v, err := Loads([]byte(in))
		require.NoError(t, err)
		assert.Equal(t, want, TypeName(v), in)
	}
}

// Python's float('inf') and float('-inf'), as a reader holds a float beyond float64.
func TestInf(t *testing.T) {
	for _, neg := range []bool{false, true} {
		v, want := Inf(neg), "inf"
		if neg {
			want = "-inf"
		}
		assert.Equal(t, "float", TypeName(v))
		assert.Equal(t, want, Str(v))
		assert.Equal(t, want, Repr(v))
		_, err := Int(v)
		assert.EqualError(t, err, "cannot convert float infinity to integer")
	}
}
