package testvectors

import (
	"os"
	"strings"
	"testing"

	"github.com/gymtrace/gymtrace/ojson"
)

// CaptureStore is the part of a capture store (capture.Store) that [WriteStore] needs. It is an
// interface so that package capture's own tests can use WriteStore without an import cycle.
type CaptureStore interface {
	CapturePath(id string) (string, error)
	MarkIncomplete(id string) error
}

// WriteStore lays out a vector's store description (vectors/attachment.json input.store:
// {"file_exists": bool, "lines": [string...] or null, "marker": bool}) in s for rollout id: when
// file_exists is true, the capture file holding the lines joined as given (mode 0600); when marker
// is true, the .capture.incomplete marker. A missing or null flag counts as false; a flag that is
// another JSON value, or a line that is not a string, fails the test.
func WriteStore(t testing.TB, s CaptureStore, id string, spec ojson.Value) {
	t.Helper()
	if flag(t, spec, "file_exists") {
		var content strings.Builder
		lines, _ := spec.Get("lines")
		for _, piece := range lines.Elems() {
			str, ok := piece.AsString()
			if !ok {
				t.Fatalf("testvectors: store line %s is not a string", piece)
			}
			content.WriteString(str)
		}
		path, err := s.CapturePath(id)
		if err != nil {
			t.Fatalf("testvectors: %v", err)
		}
		if err := os.WriteFile(path, []byte(content.String()), 0o600); err != nil {
			t.Fatalf("testvectors: %v", err)
		}
	}
	if flag(t, spec, "marker") {
		if err := s.MarkIncomplete(id); err != nil {
			t.Fatalf("testvectors: %v", err)
		}
	}
}

// flag reads spec[key] as a boolean: missing or null is false.
func flag(t testing.TB, spec ojson.Value, key string) bool {
	t.Helper()
	v, ok := spec.Get(key)
	if !ok || v.IsNull() {
		return false
	}
	b, ok := v.AsBool()
	if !ok {
		t.Fatalf("testvectors: store %s is %s, not a boolean", key, v)
	}
	return b
}
