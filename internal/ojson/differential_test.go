package ojson

import (
	"errors"
	"strings"
	"testing"
)

// The compaction moved from ojson's own parser onto jsontext (compact.go). Every fuzzer that
// reaches compaction also runs the oracle and requires the same bytes and the same verdict.

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
	case strings.Contains(se.Msg, "nesting too deep"), strings.Contains(se.Msg, "outside the 64-bit range"),
		strings.Contains(se.Msg, "overflows float64"):
		return se.Msg
	}
	return "syntax"
}

// requireSameCompaction compacts src with the oracle and with every exported entry point, and
// fails unless output, compactness, validity and error category agree.
func requireSameCompaction(t *testing.T, src []byte, maxDepth int) {
	t.Helper()
	want, wantSpaced, wantErr := oracleCompact([]byte("x"), src, maxDepth, false)
	got, err := CompactDepth([]byte("x"), src, maxDepth)
	if errorCategory(err) != errorCategory(wantErr) || string(got) != string(want) {
		t.Fatalf("%q depth %d: CompactDepth %q %v, oracle %q %v", src, maxDepth, got, err, want, wantErr)
	}
	got, err = CompactString([]byte("x"), string(src), maxDepth)
	if errorCategory(err) != errorCategory(wantErr) || string(got) != string(want) {
		t.Fatalf("%q depth %d: CompactString %q %v, oracle %q %v", src, maxDepth, got, err, want, wantErr)
	}
	compact, err := CheckCompactString(string(src), maxDepth)
	if errorCategory(err) != errorCategory(wantErr) || compact != (wantErr == nil && !wantSpaced) {
		t.Fatalf("%q depth %d: CheckCompactString %v %v, oracle spaced=%v %v", src, maxDepth, compact, err, wantSpaced, wantErr)
	}
	if maxDepth == MaxDepth && Valid(src) != (wantErr == nil) {
		t.Fatalf("%q: Valid %v, oracle error %v", src, Valid(src), wantErr)
	}
}
