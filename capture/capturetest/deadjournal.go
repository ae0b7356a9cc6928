package capturetest

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/gymtrace/gymtrace/capture"
)

// WriteDeadJournal leaves in the store directory dir what a journaled writer that crashed leaves
// (SPEC §0 D17): an owner directory without a live lock holding one segment with one record per
// line, each bound for file (a name in dir such as "r1.capture.jsonl"; each line ends in "\n"). It
// returns the owner directory, which a recovery removes.
func WriteDeadJournal(t testing.TB, dir, file string, lines ...string) string {
	t.Helper()
	owner := filepath.Join(dir, capture.JournalDirName, "crashed-1-0000000000000000") // an owner name: host, pid, 16 hex digits
	if err := os.MkdirAll(owner, 0o700); err != nil {
		t.Fatalf("capturetest: %v", err)
	}
	tab := crc32.MakeTable(crc32.Castagnoli)
	seg := []byte("gymtrace-journal 1\n")
	for _, line := range lines {
		payload := file + "\x00" + line
		seg = binary.LittleEndian.AppendUint32(seg, uint32(len(payload)))
		sum := crc32.Update(0, tab, seg[len(seg)-4:])
		seg = binary.LittleEndian.AppendUint32(seg, crc32.Update(sum, tab, []byte(payload)))
		seg = append(seg, payload...)
	}
	if err := os.WriteFile(filepath.Join(owner, "00000000000000000001.seg"), seg, 0o600); err != nil {
		t.Fatalf("capturetest: %v", err)
	}
	return owner
}
