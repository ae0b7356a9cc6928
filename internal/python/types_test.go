package python

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/ojson"
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

// The non-finite floats LoadsNonFinite reads are floats to every function here, as json.loads's
// are: str(json.loads("1e400")) is "inf", never the literal's text (from a new-user trial: an
// attached row's ng_trajectory said "None" where the rollout id said "inf").
func TestLoadsNonFiniteAreFloats(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"1e400", "inf"},
		{"-1e400", "-inf"},
		{"Infinity", "inf"},
		{"-Infinity", "-inf"},
		{"NaN", "nan"},
	} {
		v, err := LoadsNonFinite([]byte(tt.in))
		require.NoError(t, err, tt.in)
		assert.Equal(t, "float", TypeName(v), tt.in)
		assert.Equal(t, tt.want, Str(v), tt.in)
		assert.Equal(t, "["+tt.want+"]", Repr(ojson.Array(v)), tt.in)
	}
}
