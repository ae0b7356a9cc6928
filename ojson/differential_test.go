package ojson

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Compaction, validation and the Walker run on jsontext (compact.go); [Parse] runs on ojson's own
// parser (parse.go). Every fuzzer that reaches compaction holds the two readers to the same verdict
// and the compacted bytes to encoding/json's Compact (which strips whitespace and keeps every
// token's text), three implementations that must agree.

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

// requireSameCompaction compacts src with every exported entry point and the Walker, and fails
// unless their output equals encoding/json's Compact of src and their verdict and error category
// equal those of ParseDepth.
func requireSameCompaction(t *testing.T, src []byte, maxDepth int) {
	t.Helper()
	_, wantErr := ParseDepth(src, maxDepth)
	var want []byte
	if wantErr == nil {
		var buf bytes.Buffer
		if err := json.Compact(&buf, src); err != nil {
			t.Fatalf("%q: ParseDepth accepts what encoding/json rejects: %v", src, err)
		}
		want = append([]byte("x"), buf.Bytes()...)
	} else {
		want = []byte("x")
	}
	wantSpaced := !bytes.Equal(want[1:], src)
	w := Walker{MaxDepth: maxDepth}
	got, err := w.Compact([]byte("x"), src)
	if errorCategory(err) != errorCategory(wantErr) || string(got) != string(want) {
		t.Fatalf("%q depth %d: Walker.Compact %q %v, want %q %v", src, maxDepth, got, err, want, wantErr)
	}
	got, err = CompactDepth([]byte("x"), src, maxDepth)
	if errorCategory(err) != errorCategory(wantErr) || string(got) != string(want) {
		t.Fatalf("%q depth %d: CompactDepth %q %v, want %q %v", src, maxDepth, got, err, want, wantErr)
	}
	got, err = CompactString([]byte("x"), string(src), maxDepth)
	if errorCategory(err) != errorCategory(wantErr) || string(got) != string(want) {
		t.Fatalf("%q depth %d: CompactString %q %v, want %q %v", src, maxDepth, got, err, want, wantErr)
	}
	compact, err := CheckCompactString(string(src), maxDepth)
	if errorCategory(err) != errorCategory(wantErr) || compact != (wantErr == nil && !wantSpaced) {
		t.Fatalf("%q depth %d: CheckCompactString %v %v, want spaced=%v %v", src, maxDepth, compact, err, wantSpaced, wantErr)
	}
	if walkCompact, err := w.Check(src); errorCategory(err) != errorCategory(wantErr) || walkCompact != compact {
		t.Fatalf("%q depth %d: Walker.Check %v %v, CheckCompactString %v", src, maxDepth, walkCompact, err, compact)
	}
	requireSameWalk(t, src, maxDepth)
	if v, ok := parseScalar(src); ok {
		if want, err := ParseDepth(src, maxDepth); err != nil || !v.Equal(want) || v.Kind() != want.Kind() {
			t.Fatalf("%q: parseScalar %v, ParseDepth %v %v", src, v, want, err)
		}
	}
	if compactWhole(src, maxDepth) && (wantErr != nil || wantSpaced) {
		t.Fatalf("%q depth %d: compactWhole takes it whole, ParseDepth error %v, spaced %v", src, maxDepth, wantErr, wantSpaced)
	}
	if maxDepth == MaxDepth && Valid(src) != (wantErr == nil) {
		t.Fatalf("%q: Valid %v, ParseDepth error %v", src, Valid(src), wantErr)
	}
}
