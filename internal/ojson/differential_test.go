package ojson

import (
	"errors"
	"strings"
	"testing"
)

// The exported compaction runs on jsontext (compact.go); the parser's own compact mode, the code
// it replaced, lives on as the [Walker]'s engine (walk.go). Every fuzzer that reaches compaction
// runs both and requires the same bytes and the same verdict, which holds the two engines equal.

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

// requireSameCompaction compacts src with the Walker (the parser's compact mode) and with every
// exported entry point, and fails unless output, compactness, validity and error category agree.
func requireSameCompaction(t *testing.T, src []byte, maxDepth int) {
	t.Helper()
	w := Walker{MaxDepth: maxDepth}
	want, wantErr := w.Compact([]byte("x"), src)
	walkCompact, _ := w.Check(src)
	wantSpaced := !walkCompact
	got, err := CompactDepth([]byte("x"), src, maxDepth)
	if errorCategory(err) != errorCategory(wantErr) || string(got) != string(want) {
		t.Fatalf("%q depth %d: CompactDepth %q %v, walker %q %v", src, maxDepth, got, err, want, wantErr)
	}
	got, err = CompactString([]byte("x"), string(src), maxDepth)
	if errorCategory(err) != errorCategory(wantErr) || string(got) != string(want) {
		t.Fatalf("%q depth %d: CompactString %q %v, walker %q %v", src, maxDepth, got, err, want, wantErr)
	}
	compact, err := CheckCompactString(string(src), maxDepth)
	if errorCategory(err) != errorCategory(wantErr) || compact != (wantErr == nil && !wantSpaced) {
		t.Fatalf("%q depth %d: CheckCompactString %v %v, walker spaced=%v %v", src, maxDepth, compact, err, wantSpaced, wantErr)
	}
	if maxDepth == MaxDepth && Valid(src) != (wantErr == nil) {
		t.Fatalf("%q: Valid %v, walker error %v", src, Valid(src), wantErr)
	}
}
