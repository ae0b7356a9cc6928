package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gymtrace/gymtrace/ojson"
)

// IndexedLine is one readable record line of a capture file with its capture index (SPEC §2.5): the
// 0-based position among the file's non-blank lines, so damaged lines leave gaps in the sequence.
type IndexedLine struct {
	Index int             // capture index, also the record's call_index
	Line  json.RawMessage // the line without surrounding ASCII whitespace; a JSON object
}

// Read is the strict reader (SPEC §2.4). It returns the JSON value of every non-blank line of id's
// capture file in file order: lines are split on "\n", surrounding ASCII whitespace (space, \t, \n,
// \r, \v, \f) is stripped and blank lines are skipped; each remaining line must be strict JSON
// (RFC 8259, UTF-8, no NaN/Infinity, integers within 64 bits: SPEC §0 D6) or Read fails with an error
// naming the line. Values that are not objects are returned as they are. A missing file gives an
// empty result and no error. The file is read under flock(LOCK_SH), so Read waits while an Append
// (ours or Gym's) holds LOCK_EX and never sees half a line. Returned lines share one buffer.
// Safe for concurrent use.
func (s *Store) Read(id string) ([]json.RawMessage, error) {
	data, err := s.readLocked(id)
	if err != nil {
		return nil, err
	}
	out, err := parseStrict(data)
	if err != nil {
		return nil, fmt.Errorf("capture read %s: %w", id, err)
	}
	return out, nil
}

// ReadAvailable is the tolerant reader (SPEC §2.5). It reads id's capture file like [Store.Read] but
// never fails on content: every non-blank line consumes one capture index; a line that is not strict
// JSON, or is JSON but not an object, is counted in invalid and skipped; blank lines consume no
// index. A missing file gives (nil, 0, nil). err reports only I/O failures (open, lock, read).
// Safe for concurrent use.
func (s *Store) ReadAvailable(id string) (lines []IndexedLine, invalid int, err error) {
	data, err := s.readLocked(id)
	if err != nil {
		return nil, 0, err
	}
	lines, invalid = parseAvailable(data)
	return lines, invalid, nil
}

// parseStrict is the content rule of [Store.Read].
func parseStrict(data []byte) ([]json.RawMessage, error) {
	var out []json.RawMessage
	var parseErr error
	eachLine(data, func(lineNo, _ int, line []byte) bool {
		if _, err := ojson.ParseLazy(line); err != nil { // validates, builds no tree
			parseErr = fmt.Errorf("line %d: %w", lineNo, err)
			return false
		}
		out = append(out, json.RawMessage(line))
		return true
	})
	if parseErr != nil {
		return nil, parseErr
	}
	return out, nil
}

// parseAvailable is the content rule of [Store.ReadAvailable].
func parseAvailable(data []byte) (lines []IndexedLine, invalid int) {
	eachLine(data, func(_, index int, line []byte) bool {
		if line[0] != '{' {
			invalid++
			return true
		}
		if !ojson.Valid(line) {
			invalid++
			return true
		}
		lines = append(lines, IndexedLine{Index: index, Line: json.RawMessage(line)})
		return true
	})
	return lines, invalid
}

// readLocked returns the whole content of id's capture file ([readPathLocked]); a missing file
// gives (nil, nil).
func (s *Store) readLocked(id string) ([]byte, error) {
	if err := ValidateRolloutID(id); err != nil {
		return nil, fmt.Errorf("capture read: %w", err)
	}
	data, _, err := readPathLocked(s.capturePath(id))
	if err != nil {
		return nil, fmt.Errorf("capture read %s: %w", id, err)
	}
	return data, nil
}

// eachLine splits data on "\n" (SPEC §2.4: never on "\r" or Unicode separators), strips ASCII
// whitespace from each line and calls fn for every non-blank one with its 1-based physical line number,
// its 0-based index among non-blank lines, and the stripped bytes. fn returns false to stop.
func eachLine(data []byte, fn func(lineNo, index int, line []byte) bool) {
	index := 0
	for lineNo := 1; len(data) > 0; lineNo++ {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		line = trimASCIISpace(line)
		if len(line) == 0 {
			continue
		}
		if !fn(lineNo, index, line) {
			return
		}
		index++
	}
}

// trimASCIISpace strips what Python's bytes.strip() strips: space, \t, \n, \r, \v and \f.
func trimASCIISpace(b []byte) []byte {
	for len(b) > 0 && isASCIISpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isASCIISpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// ReadModelCallRecords is the strict record reader (SPEC §2.5 read_model_call_records): it reads id's
// capture file like [Store.Read] and builds one [ModelCallRecord] per non-blank line with call_index =
// its position among non-blank lines. Any unreadable line — not strict JSON, not an object, or not
// buildable ([BuildModelCallRecord]) — fails the whole read with an error naming the line. A missing
// file gives no records and no error. The records' strings and payloads share one buffer holding
// the file (never modify them). Safe for concurrent use.
func (s *Store) ReadModelCallRecords(id string) ([]ModelCallRecord, error) {
	data, err := s.readLocked(id)
	if err != nil {
		return nil, err
	}
	var out []ModelCallRecord
	var lineErr error
	eachLine(data, func(lineNo, index int, line []byte) bool {
		rec, err := buildLine(line, index)
		if err != nil {
			lineErr = fmt.Errorf("capture read %s: line %d: %w", id, lineNo, err)
			return false
		}
		out = append(out, rec)
		return true
	})
	if lineErr != nil {
		return nil, lineErr
	}
	return out, nil
}

// ReadAvailableModelCallRecords is the tolerant record reader (SPEC §2.5
// read_available_model_call_records): every non-blank line of id's capture file consumes one capture
// index; a line that is not strict JSON, not an object, or cannot be built into a record
// ([BuildModelCallRecord]) is counted in invalid; the others become records whose call_index is
// their capture index (so damaged lines leave gaps: valid, {not-json}, valid → call indices 0 and 2).
// A missing file gives (nil, 0, nil); err reports only I/O failures. The records' strings and
// payloads share one buffer holding the file (never modify them). Safe for concurrent use.
func (s *Store) ReadAvailableModelCallRecords(id string) (records []ModelCallRecord, invalid int, err error) {
	data, err := s.readLocked(id)
	if err != nil {
		return nil, 0, err
	}
	eachLine(data, func(_, index int, line []byte) bool {
		rec, err := buildLine(line, index)
		if err != nil {
			invalid++
			return true
		}
		records = append(records, rec)
		return true
	})
	return records, invalid, nil
}

// buildLine parses one stripped non-blank line of a file read whole once and builds its record,
// sharing the file's memory ([buildSharedRecord]).
func buildLine(line []byte, index int) (ModelCallRecord, error) {
	if line[0] != '{' {
		return ModelCallRecord{}, errors.New("line is not a JSON object")
	}
	return buildSharedRecord(line, index)
}
