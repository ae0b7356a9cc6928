package tokens

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/ojson"
)

// tokenCase is one case of token_capture.json.
type tokenCase struct {
	Name            string
	Input, Expected ojson.Value
}

// tokenCases returns the cases of token_capture.json in group (the name's prefix before "-"). The
// file holds -Infinity (TE-12), so it is read as Python's json.loads reads it.
func tokenCases(t *testing.T, group string) []tokenCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testvectors.Dir(t, "vectors"), "token_capture.json"))
	require.NoError(t, err)
	file, err := python.Loads(raw)
	require.NoError(t, err)
	var out []tokenCase
	for _, c := range get(t, file, "cases").Elems() {
		name, _ := get(t, c, "name").AsString()
		if g, _, _ := strings.Cut(name, "-"); g == group {
			out = append(out, tokenCase{Name: name, Input: get(t, c, "input"), Expected: get(t, c, "expected")})
		}
	}
	require.NotEmpty(t, out, "group %s", group)
	return out
}

// vectorEntry reads a vector's TokenEntry object (well-formed in every case these tests read;
// lax parsing is the entry reader's, tested with the TE vectors).
func vectorEntry(t *testing.T, v ojson.Value) TokenEntry {
	t.Helper()
	ints := func(key string) []int64 {
		arr, _ := v.Get(key)
		out := make([]int64, 0, arr.Len())
		for _, x := range arr.Elems() {
			n, ok := x.Int64()
			require.True(t, ok, "%s: %s", key, x)
			out = append(out, n)
		}
		return out
	}
	str := func(key string) string {
		s, _ := v.Get(key)
		return python.Str(s)
	}
	e := TokenEntry{SchemaVersion: 1, RolloutID: str("rollout_id"), ModelCallID: str("model_call_id"), Model: str("model"),
		PromptTokenIDs: ints(keyPromptTokenIDs), GenerationTokenIDs: ints(keyGenerationTokenIDs)}
	lps, _ := v.Get(keyGenerationLogProbs)
	for _, x := range lps.Elems() {
		f, ok := x.Float64()
		require.True(t, ok)
		e.GenerationLogProbs = append(e.GenerationLogProbs, f)
	}
	if re, ok := v.Get(keyRoutedExperts); ok && !re.IsNull() {
		e.RoutedExperts = jsontext.Value(re.String())
	}
	items, _ := v.Get("output_items")
	for _, it := range items.Elems() {
		e.OutputItems = append(e.OutputItems, jsontext.Value(it.String()))
	}
	if idx, ok := v.Get("token_item_index"); ok && !idx.IsNull() {
		n, ok := idx.Int64()
		require.True(t, ok)
		e.TokenItemIndex = &n
	}
	if ca, ok := v.Get("created_at"); ok {
		e.CreatedAt, _ = ca.Float64()
	}
	return e
}

func vectorEntries(t *testing.T, v ojson.Value) []TokenEntry {
	t.Helper()
	var out []TokenEntry
	for _, e := range v.Elems() {
		out = append(out, vectorEntry(t, e))
	}
	return out
}

// get returns v[key], failing the test when it is missing.
func get(t *testing.T, v ojson.Value, key string) ojson.Value {
	t.Helper()
	x, ok := v.Get(key)
	require.True(t, ok, "missing %q in %s", key, v)
	return x
}

// assertException compares err with a vector's {"error": <class>, "message": <text>}.
func assertException(t *testing.T, want ojson.Value, err error) {
	t.Helper()
	require.Error(t, err)
	class, msg := get(t, want, "error"), get(t, want, "message")
	assert.Equal(t, python.Str(class)+": "+python.Str(msg), ExceptionText(err))
}

// assertJSON compares got with want byte for byte as gymtrace writes them: values, key order and
// number text.
func assertJSON(t *testing.T, want, got ojson.Value, msgAndArgs ...any) {
	t.Helper()
	assert.Equal(t, want.String(), got.String(), msgAndArgs...)
}
