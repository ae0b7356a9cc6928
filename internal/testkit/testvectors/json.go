package testvectors

import (
	"testing"

	"github.com/gymtrace/gymtrace/ojson"
)

// Value parses raw strictly with [ojson.Parse] (SPEC §0 D6), keeping key order, duplicate keys and
// number text, and fails the test when raw is not such JSON.
func Value(t testing.TB, raw []byte) ojson.Value {
	t.Helper()
	v, err := ojson.Parse(raw)
	if err != nil {
		t.Fatalf("testvectors: parse %s: %v", raw, err)
	}
	return v
}

// Canonical returns raw re-encoded the way gymtrace writes JSON (compact, key order and number text
// kept, strings in orjson form), so an expected value can be compared byte for byte with what the
// code under test encodes. It fails the test when raw is not strict JSON (see [Value]).
func Canonical(t testing.TB, raw []byte) string {
	t.Helper()
	return Value(t, raw).String()
}
