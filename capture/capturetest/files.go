package capturetest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gymtrace/gymtrace/capture"
)

// DirContents returns every regular file directly in dir, by name, with its content as a string
// (markers are ""). It fails the test when dir cannot be read or holds anything but regular files
// and the journal directory of a journaled store (capture.JournalDirName, SPEC §0 D17), which it
// skips: the journal holds no capture file. Two writers fed the same spans must leave equal
// DirContents.
func DirContents(t testing.TB, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("capturetest: read dir: %v", err)
	}
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		if e.Name() == capture.JournalDirName && e.IsDir() {
			continue
		}
		if !e.Type().IsRegular() {
			t.Fatalf("capturetest: %s in %s is not a regular file (%s)", e.Name(), dir, e.Type())
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatalf("capturetest: %v", err)
		}
		out[e.Name()] = string(b)
	}
	return out
}
