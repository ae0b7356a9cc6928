package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
)

// A journal segment (SPEC §0 D17) is the header journalMagic followed by frames, one per record:
//
//	uint32 little-endian n | uint32 little-endian CRC-32C of (the 4 length bytes, then the payload) | payload (n bytes)
//
// The payload is the rollout file's name in the store directory, one NUL byte, then the record line
// exactly as it is appended to that file (ending in "\n"). Binary length + checksum framing, not a
// JSON line with a checksum, because the line is kept byte for byte (no escaping, no second
// encoding to undo on replay) and because a torn tail is then detectable at any byte: a frame that
// ends before its declared length, whose length is beyond maxJournalFrame, or whose checksum does
// not match (a partly written sector, zeros after a power loss) ends the segment's readable part.
// The checksum covers the length too, so a torn length field cannot make a later frame look
// aligned. CRC-32C (Castagnoli) is the polynomial storage systems use for this (iSCSI, ext4, Btrfs),
// computed in hardware on amd64 and arm64.
const journalMagic = "gymtrace-journal 1\n"

// maxJournalFrame bounds a frame's payload. Lines given whole to the store are bounded by what the
// proxy captures (SPEC §0 D15), but a length past this bound can only be a damaged frame.
const maxJournalFrame = 1 << 30

// journalFrameHeader is the length and checksum before each payload.
const journalFrameHeader = 8

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendJournalFrame appends the frame of line (one record line ending in "\n") for the rollout file
// name to dst.
func appendJournalFrame(dst []byte, name string, line []byte) []byte {
	n := len(name) + 1 + len(line)
	start := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	dst = append(dst, 0, 0, 0, 0)
	dst = append(dst, name...)
	dst = append(dst, 0)
	dst = append(dst, line...)
	sum := crc32.Update(0, castagnoli, dst[start:start+4])
	sum = crc32.Update(sum, castagnoli, dst[start+journalFrameHeader:])
	binary.LittleEndian.PutUint32(dst[start+4:], sum)
	return dst
}

// journalRecord is one intact frame of a segment.
type journalRecord struct {
	name string // the rollout file's name in the store directory
	line []byte // the record line, ending in "\n"
}

// errJournalName is the error of an intact frame whose file name cannot be a store file.
var errJournalName = errors.New("journal frame names no file of the store directory")

// parseJournalSegment returns the intact frames of a segment's bytes in order and the number of
// torn bytes after the last of them, up to the last non-zero byte (a torn tail, cut: nothing after
// a damaged frame is trusted, since frames are only ever appended; the zeros of the segment's
// preallocated end are not torn). A segment without the header is all tail. An intact frame whose
// name is not a plain file name of the store directory (empty, ".", "..", holding "/" or a NUL,
// or the journal directory) is an error wrapping errJournalName, one whose line breaks
// [Store.Append]'s contract an error naming the file: neither was written by a store.
func parseJournalSegment(b []byte) ([]journalRecord, int, error) {
	rest, ok := bytes.CutPrefix(b, []byte(journalMagic))
	if !ok {
		return nil, len(bytes.TrimRight(b, "\x00")), nil
	}
	var recs []journalRecord
	for len(rest) >= journalFrameHeader {
		n := binary.LittleEndian.Uint32(rest)
		if n > maxJournalFrame || int64(n) > int64(len(rest)-journalFrameHeader) {
			break
		}
		payload := rest[journalFrameHeader : journalFrameHeader+int(n)]
		sum := crc32.Update(0, castagnoli, rest[:4])
		if crc32.Update(sum, castagnoli, payload) != binary.LittleEndian.Uint32(rest[4:]) {
			break
		}
		name, line, ok := bytes.Cut(payload, []byte{0})
		if !ok || !validJournalName(string(name)) {
			return recs, 0, errJournalName
		}
		if err := checkLine(line); err != nil {
			return recs, 0, fmt.Errorf("journal frame for %s: %w", name, err)
		}
		recs = append(recs, journalRecord{name: string(name), line: line})
		rest = rest[journalFrameHeader+int(n):]
	}
	return recs, len(bytes.TrimRight(rest, "\x00")), nil
}

// validJournalName reports whether name is a plain file name in the store directory other than the
// journal directory.
func validJournalName(name string) bool {
	return name != "" && name != "." && name != ".." && name != JournalDirName &&
		!strings.ContainsAny(name, "/\x00")
}
