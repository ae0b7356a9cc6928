package capture

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/ojson"
)

// vecField returns input[key] (null when missing).
func vecField(t *testing.T, raw json.RawMessage, key string) ojson.Value {
	t.Helper()
	v, _ := testvectors.Value(t, raw).Get(key)
	return v
}

// vecWantsError reports whether expected is the vectors' {"error": "..."} form.
func vecWantsError(t *testing.T, expected json.RawMessage) bool {
	t.Helper()
	v := testvectors.Value(t, expected)
	if v.Kind() != ojson.KindObject || v.Len() != 1 {
		return false
	}
	e, ok := v.Get("error")
	return ok && e.Kind() == ojson.KindString
}

func vecInt64(t *testing.T, v ojson.Value) *int64 {
	t.Helper()
	if v.IsNull() {
		return nil
	}
	n, ok := v.Int64()
	require.True(t, ok, "not an int64: %s", v)
	return &n
}

func vecFloat(t *testing.T, v ojson.Value) *float64 {
	t.Helper()
	if v.IsNull() {
		return nil
	}
	f, ok := v.Float64()
	require.True(t, ok, "not a number: %s", v)
	return &f
}
