package rollout

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// js returns v as JSON (json.Number values keep their text), for tables written as Go maps.
func js(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
