package ojson

import (
	"errors"
	"strings"
	"testing"
)

// The compaction moves from ojson's own parser onto jsontext (compact.go). Until the old parser
// is gone, every fuzzer that reaches compaction also runs both and requires the same bytes and
// the same verdict.

// errorCategory names the rule a *SyntaxError reports: the checks ojson adds to jsontext's keep
// their own messages; everything else is a syntax error (jsontext words it differently, and no
// record, CLI message or test reads the wording).
func errorCategory(err error) string {
	var se *SyntaxError
	switch {
	case err == nil:
		return "ok"
	case !errors.As(err, &se):
		return "not a *SyntaxError: " + err.Error()
	case strings.Contains(se.Msg, "nesting too deep"):
		return se.Msg
	case strings.Contains(se.Msg, "outside the 64-bit range"), strings.Contains(se.Msg, "overflows float64"):
		return se.Msg
	}
	return "syntax"
}

// requireSameCompaction compacts src with the old parser and with jsontext, once writing and
// once only checking, and fails unless output, compactness and error category agree.
func requireSameCompaction(t *testing.T, src []byte, maxDepth int) {
	t.Helper()
	want, werr := CompactDepth([]byte("x"), src, maxDepth)
	got, spaced, gerr := compactText([]byte("x"), src, maxDepth, false)
	if errorCategory(werr) != errorCategory(gerr) || string(want) != string(got) {
		t.Fatalf("%q depth %d: old %q %v, jsontext %q %v", src, maxDepth, want, werr, got, gerr)
	}
	wantCompact, _ := CheckCompactString(string(src), maxDepth)
	_, cspaced, cerr := compactText(nil, src, maxDepth, true)
	if errorCategory(cerr) != errorCategory(werr) || (gerr == nil && (wantCompact == spaced || spaced != cspaced)) {
		t.Fatalf("%q depth %d: old compact=%v, jsontext spaced=%v (check only: %v, %v)", src, maxDepth, wantCompact, spaced, cspaced, cerr)
	}
	if maxDepth == MaxDepth && Valid(src) != (gerr == nil) {
		t.Fatalf("%q: old Valid %v, jsontext error %v", src, Valid(src), gerr)
	}
}
