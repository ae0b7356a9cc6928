package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/gymtrace/gymtrace/ojson"
)

// A journal segment (SPEC §0 D17) is the header journalMagic followed by frames, one per record:
//
//	uint32 little-endian n | uint32 little-endian CRC-32C of (the 4 length bytes, then the payload) | payload (n bytes)
//
// The payload is the rollout file's name in the store directory, one NUL byte, then the record line
// exactly as it is appended to that file (ending in "\n"). Binary length + checksum framing, not a
// JSON line with a checksum, because the line is kept byte for byte (no escaping, no second
// encoding to undo on replay) and because a damaged frame is then detectable at any byte: it ends
// before its declared length, its length is beyond maxJournalFrame, or its checksum does not match
// (a partly written sector, zeros after a power loss). The checksum covers the length too, so a torn
// length field cannot make a later frame look aligned. A damaged frame at the end is a torn tail;
// one with intact frames after it is damage, which the reader skips ([parseJournalSegment]).
// CRC-32C (Castagnoli) is the polynomial storage systems use for this (iSCSI, ext4, Btrfs),
// computed in hardware on amd64 and arm64.
const journalMagic = journalMagicName + "1\n"

// journalMagicName starts every segment header, whatever its format version.
const journalMagicName = "gymtrace-journal "

// otherJournalVersion returns the header line of a segment written in another format version
// ("gymtrace-journal <v>\n", v of digits and dots, v ≠ "1"); ok is false for this version's header,
// for no header and for a header cut short (a segment whose writer crashed while creating it).
func otherJournalVersion(b []byte) (header string, ok bool) {
	rest, found := bytes.CutPrefix(b, []byte(journalMagicName))
	if !found || bytes.HasPrefix(b, []byte(journalMagic)) {
		return "", false
	}
	v, _, complete := bytes.Cut(rest[:min(len(rest), 32)], []byte("\n"))
	if !complete || len(v) == 0 || strings.Trim(string(v), "0123456789.") != "" {
		return "", false
	}
	return journalMagicName + string(v), true
}

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

// maxJournalName bounds a frame's file name (NAME_MAX).
const maxJournalName = 255

// maxJournalRefusals bounds the reasons a segmentScan keeps.
const maxJournalRefusals = 8

// journalTornMax bounds a torn tail: a crash can tear only the batch being written, whose bytes
// start right after the last intact frame. Unreadable bytes reaching further (past a run of zeros
// or beyond this bound) are damage, not a torn write. Batches are far smaller: a journaled line is
// below the store's 128 KiB in-file threshold and a batch holds one per concurrent call.
const journalTornMax = 8 << 20

// segmentScan is what [parseJournalSegment] read from one segment's bytes.
type segmentScan struct {
	// recs are the intact frames in order.
	recs []journalRecord
	// torn counts the bytes after the last intact frame up to the last non-zero byte, when no
	// intact frame follows them, they start like a frame and they end within journalTornMax of
	// it: a torn tail (a crash during a journal write), cut.
	torn int
	// damaged counts the bytes of damaged frames that an intact frame follows (not a tail: the
	// segment was changed after it was written, e.g. a media error) and of refused frames; the
	// records they held are lost from the journal. Unreadable bytes after the last intact frame
	// that cannot be a torn tail (see journalTornMax; also when the search for intact frames
	// spent its budget) count here too.
	damaged int
	// headerless is set when the segment lacks its header but holds intact frames (damage at its
	// start, the frames read from the first intact one).
	headerless bool
	// refused gives why each refused frame (checksum intact, but see refuseJournalFrame) was
	// refused, the first maxJournalRefusals.
	refused []string
}

// parseJournalSegment reads a segment's bytes (SPEC §0 D17). Frames are read in order; at a frame
// that is damaged (short, longer than maxJournalFrame, or failing its checksum) the reader looks for
// the next offset where an intact frame starts (a length, a checksum that matches, a payload of a
// name, a NUL, and a line from "{" to "\n"). When there is one, the bytes skipped count as damaged
// and reading goes on from there; when there is none, they are a torn tail when they start like a
// frame and end within journalTornMax of it, else damage (endUnreadable; the zeros of the segment's
// unused end are neither). A segment whose header is damaged is read the same way from its first
// byte (headerless). An intact frame whose name is no line file of the store directory
// (validJournalName: a rollout id and a line-file suffix) or whose line is not one valid JSON
// object ending in "}\n" is refused: skipped, its bytes counted as damaged, the reason kept. It
// never fails.
func parseJournalSegment(b []byte) segmentScan {
	var sc segmentScan
	budget := journalScanBudget(len(b))
	off := 0
	if bytes.HasPrefix(b, []byte(journalMagic)) {
		off = len(journalMagic)
	} else if next, spent := nextJournalFrame(b, 0, &budget); next >= 0 {
		sc.damaged += next
		sc.headerless = true
		off = next
	} else if rest := bytes.TrimRight(b, "\x00"); !strings.HasPrefix(journalMagic, string(rest)) {
		sc.endUnreadable(b, 0, spent)
		return sc
	} else { // a header cut short: the segment was being created, no record came from it
		sc.torn = len(rest)
		return sc
	}
	for off < len(b) {
		n, ok := journalFrameAt(b, off)
		if !ok {
			next, spent := nextJournalFrame(b, off+1, &budget)
			if next < 0 {
				sc.endUnreadable(b, off, spent)
				break
			}
			sc.damaged += next - off
			off = next
			continue
		}
		payload := b[off+journalFrameHeader : off+journalFrameHeader+n]
		off += journalFrameHeader + n
		name, line, _ := bytes.Cut(payload, []byte{0})
		if reason := refuseJournalFrame(string(name), line); reason != "" {
			sc.damaged += journalFrameHeader + n
			if len(sc.refused) < maxJournalRefusals {
				sc.refused = append(sc.refused, reason)
			}
			continue
		}
		sc.recs = append(sc.recs, journalRecord{name: string(name), line: line})
	}
	return sc
}

// endUnreadable accounts for the bytes from off, after which no intact frame was found (spent: the
// search gave up): a torn tail when they start like a frame (a torn write of the last batch) and
// end within journalTornMax of off, else damage (random bytes, junk past a run of zeros).
func (sc *segmentScan) endUnreadable(b []byte, off int, spent bool) {
	n := len(bytes.TrimRight(b[off:], "\x00"))
	if n == 0 {
		return
	}
	if !spent && n <= journalTornMax && startsLikeFrame(b[off:]) {
		sc.torn = n
		return
	}
	sc.damaged += n
}

// startsLikeFrame reports whether rest can be the start of a frame whose end is missing: a length
// from 4 to maxJournalFrame, and as much of a payload as is there with a record's start
// (recordPrefix).
func startsLikeFrame(rest []byte) bool {
	if len(rest) < 4 {
		return true
	}
	n := int(binary.LittleEndian.Uint32(rest))
	if n < 4 || n > maxJournalFrame {
		return false
	}
	if len(rest) <= journalFrameHeader {
		return true
	}
	_, ok := recordPrefix(rest[journalFrameHeader:min(len(rest), journalFrameHeader+n)], n)
	return ok
}

// recordPrefix reports whether p, the bytes present of a frame's payload of n bytes, begin as a
// record's payload does, as far as they go: a name of 1 to maxJournalName bytes, a NUL, "{". It
// also returns the NUL's index in p (-1 when p holds none).
func recordPrefix(p []byte, n int) (nul int, ok bool) {
	nul = bytes.IndexByte(p[:min(len(p), maxJournalName+1)], 0)
	switch {
	case nul < 0:
		return nul, len(p) < n && len(p) <= maxJournalName
	case nul == 0:
		return nul, false
	case nul+1 < len(p):
		return nul, p[nul+1] == '{'
	}
	return nul, true
}

// journalFrameAt returns the payload length of the frame at off when it is intact: its length
// within the bytes and maxJournalFrame, its checksum matching.
func journalFrameAt(b []byte, off int) (int, bool) {
	rest := b[off:]
	if len(rest) < journalFrameHeader {
		return 0, false
	}
	n := binary.LittleEndian.Uint32(rest)
	if n > maxJournalFrame || int64(n) > int64(len(rest)-journalFrameHeader) {
		return 0, false
	}
	sum := crc32.Update(0, castagnoli, rest[:4])
	if crc32.Update(sum, castagnoli, rest[journalFrameHeader:journalFrameHeader+int(n)]) != binary.LittleEndian.Uint32(rest[4:]) {
		return 0, false
	}
	return int(n), true
}

// journalScanBudget bounds the bytes the search for intact frames checksums in a segment of n bytes:
// a few passes over it, so that crafted bytes (a frame shape at every offset) cannot make a
// recovery quadratic. Past it the rest of the segment counts as damage.
func journalScanBudget(n int) int { return 4*n + 1<<20 }

// nextJournalFrame returns the first offset at or after from where an intact frame starts whose
// payload has the shape of a record (a name of at most maxJournalName bytes, a NUL, a line from "{"
// to "\n"), or -1 — with spent set when it gave up because budget, the bytes it may still
// checksum, ran out. The shape is checked before the checksum, so that the search over damaged
// bytes computes a checksum only where a frame can plausibly start.
func nextJournalFrame(b []byte, from int, budget *int) (at int, spent bool) {
	for off := from; off+journalFrameHeader < len(b); off++ {
		rest := b[off:]
		n := int(binary.LittleEndian.Uint32(rest))
		if n == 0 { // zeros (a segment's unused end): on to the first offset whose length is not 0
			nz := bytes.IndexFunc(rest, func(r rune) bool { return r != 0 })
			if nz < 0 {
				return -1, false
			}
			off += max(nz-4, 0) // the loop's increment lands on nz-3
			continue
		}
		if n < 4 || n > maxJournalFrame || n > len(rest)-journalFrameHeader {
			continue
		}
		payload := rest[journalFrameHeader : journalFrameHeader+n]
		if nul, ok := recordPrefix(payload, n); !ok || nul < 0 || nul+2 >= n || payload[n-1] != '\n' {
			continue
		}
		if *budget -= n; *budget < 0 {
			return -1, true
		}
		if _, ok := journalFrameAt(b, off); ok {
			return off, false
		}
	}
	return -1, false
}

// refuseJournalFrame says why an intact frame cannot be a record a store wrote ("" when it can):
// a name that is no line file of the store (validJournalName), a line that breaks [Store.Append]'s
// contract or is not valid JSON.
func refuseJournalFrame(name string, line []byte) string {
	if !validJournalName(name) {
		return fmt.Sprintf("frame names %q, no line file of the store directory", name)
	}
	if err := checkLine(line); err != nil {
		return fmt.Sprintf("frame for %s: %v", name, err)
	}
	if !ojson.Valid(line) {
		return fmt.Sprintf("frame for %s: line is not valid JSON (strict: UTF-8, no trailing commas)", name)
	}
	return ""
}

// validJournalName reports whether name is a file a store appends lines to: a rollout id (or
// [UnattributedRolloutID]) followed by [CaptureFileSuffix] or [ObservationsFileSuffix], at most
// maxJournalName bytes.
func validJournalName(name string) bool {
	if len(name) > maxJournalName {
		return false
	}
	for _, suffix := range []string{CaptureFileSuffix, ObservationsFileSuffix} {
		if id, ok := strings.CutSuffix(name, suffix); ok {
			return id == UnattributedRolloutID || ValidateRolloutID(id) == nil
		}
	}
	return false
}

// isDamaged reports whether the segment changed after it was written: damaged or refused bytes
// between intact frames, or intact frames without the header.
func (sc segmentScan) isDamaged() bool { return sc.damaged > 0 || sc.headerless }
