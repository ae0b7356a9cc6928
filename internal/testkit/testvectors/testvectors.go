// Package testvectors loads the SPEC test vectors and conformance cases copied under the repository's
// testdata/ folder (from ../shared/vectors and ../shared/conformance), and offers the few helpers
// several packages need to read them: strict ordered parsing ([Value]), byte-comparable re-encoding
// ([Canonical]) and laying out a vector's capture store on disk ([WriteStore]). It is for tests only.
//
// Missing data is a test failure, never a skip: a checkout without testdata/ must not pass silently.
package testvectors

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/gymtrace/gymtrace/internal/python"
)

// Case is one vector: a named input with its expected value (SPEC.md §8,
// testdata/vectors/README.md). Deviation names the SPEC §0 rule (one of D1–D15) when Expected is
// gymtrace's behaviour and ReferenceExpected the reference's.
type Case struct {
	Name              string          `json:"name"`
	Input             json.RawMessage `json:"input"`
	Expected          json.RawMessage `json:"expected"`
	Deviation         string          `json:"deviation,omitempty"`
	ReferenceExpected json.RawMessage `json:"reference_expected,omitempty"`
	Note              string          `json:"note,omitempty"`
}

// File is one vectors/*.json file.
type File struct {
	Spec     string `json:"spec"`
	Verified string `json:"verified"`
	Note     string `json:"note"`
	Cases    []Case `json:"cases"`
}

// Dir returns the repository's testdata/<name> (found from this source file's location) and fails
// the test when it does not exist.
func Dir(t testing.TB, name string) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("testvectors: cannot locate source file")
	}
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", name)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("testvectors: %s missing: %v (copy ../shared/vectors and ../shared/conformance)", dir, err)
	}
	return dir
}

// Load reads testdata/vectors/<name> and returns its cases; it fails the test when the file is
// missing, unreadable or has no cases.
func Load(t testing.TB, name string) []Case {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(t, "vectors"), name))
	if err != nil {
		t.Fatalf("testvectors: %v", err)
	}
	var f File
	if err := json.Unmarshal(quoteNonFinite(b), &f); err != nil {
		t.Fatalf("testvectors: decode %s: %v", name, err)
	}
	if len(f.Cases) == 0 {
		t.Fatalf("testvectors: %s has no cases", name)
	}
	return f.Cases
}

// quoteNonFinite returns b with Python's non-JSON float literals outside strings (NaN, Infinity,
// -Infinity: json.dumps writes them, e.g. token_capture.json TE-12's -inf log prob) turned into the
// JSON strings "NaN", "Infinity", "-Infinity", so the file decodes; a reader with Python's lax float
// parsing (pydantic, tokens.EntryFromValue) reads those strings as the same floats. A float literal
// beyond the float64 range keeps its text.
func quoteNonFinite(b []byte) []byte {
	var out []byte
	at := 0
	for _, l := range python.NonFiniteLiterals(b) {
		if string(b[l.At:l.End]) != l.Value {
			continue // 1e400: a number, kept
		}
		out = append(out, b[at:l.At]...)
		out = append(out, '"')
		out = append(out, l.Value...)
		out = append(out, '"')
		at = l.End
	}
	if out == nil {
		return b
	}
	return append(out, b[at:]...)
}

// Decode decodes raw JSON with UseNumber, so integers and floats keep their text (vectors/README.md).
func Decode(t testing.TB, raw json.RawMessage) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("testvectors: decode %s: %v", raw, err)
	}
	return v
}

// ConformanceCases lists the folders under testdata/conformance (sorted), failing when there are none.
func ConformanceCases(t testing.TB) []string {
	t.Helper()
	root := Dir(t, "conformance")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatalf("testvectors: %v", err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(root, e.Name()))
		}
	}
	if len(dirs) == 0 {
		t.Fatal("testvectors: no conformance cases")
	}
	return dirs
}
