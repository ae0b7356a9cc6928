package rolloutline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/gymtrace/gymtrace/ojson"
)

// member is one top-level "key":value pair: rawKey is the key's JSON string text as sent (quotes and
// escapes included), key its decoded form, value the value's JSON text as sent.
type member struct {
	rawKey []byte
	key    string
	value  []byte
}

// Line is a parsed rollout line: the members of one JSON object in their original order and text.
// The zero Line is an empty object. Use Parse to build one from a line.
type Line struct {
	members []member
}

var errNotObject = errors.New("not a JSON object")

// ErrByteOrderMark is the error (matched with errors.Is) of [Parse] for a line that starts with a
// UTF-8 byte order mark: RFC 8259 §8.1 forbids one in JSON text, and a JSON reader would report only
// an invalid character 'ï'.
var ErrByteOrderMark = errors.New("the line starts with a UTF-8 byte order mark (U+FEFF, bytes EF BB BF); JSON lines must not (RFC 8259 §8.1): save the file as UTF-8 without a BOM")

// byteOrderMark is U+FEFF in UTF-8.
var byteOrderMark = []byte{0xEF, 0xBB, 0xBF}

// Parse parses one JSONL line holding a JSON object. Surrounding JSON whitespace, including the
// line's terminating "\n" or "\r\n", is ignored. The line must be valid JSON (RFC 8259 as
// encoding/json checks it) and an object; otherwise the error says why ([ErrByteOrderMark] for a
// line that starts with a UTF-8 byte order mark, as an editor may save a file's first line). Parse
// copies line, so the caller may reuse its buffer. Repeated keys are kept as they are (see Get and
// Set).
func Parse(line []byte) (Line, error) {
	if bytes.HasPrefix(line, byteOrderMark) {
		return Line{}, fmt.Errorf("rolloutline: parse: %w", ErrByteOrderMark)
	}
	if !json.Valid(line) {
		var probe any
		err := json.Unmarshal(line, &probe) // for the precise syntax error
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return Line{}, fmt.Errorf("rolloutline: parse: %w", err)
	}
	dec := jsontext.NewDecoder(bytes.NewReader(line), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if dec.PeekKind() != '{' {
		return Line{}, fmt.Errorf("rolloutline: parse: %w", errNotObject)
	}
	if _, err := dec.ReadToken(); err != nil {
		return Line{}, fmt.Errorf("rolloutline: parse: %w", err)
	}
	var l Line
	for dec.PeekKind() != '}' {
		rawKey, err := dec.ReadValue()
		if err != nil {
			return Line{}, fmt.Errorf("rolloutline: parse: %w", err)
		}
		rawKey = bytes.Clone(rawKey)
		var key string
		if err := json.Unmarshal(rawKey, &key); err != nil {
			return Line{}, fmt.Errorf("rolloutline: parse: key %s: %w", rawKey, err)
		}
		value, err := dec.ReadValue()
		if err != nil {
			return Line{}, fmt.Errorf("rolloutline: parse: %w", err)
		}
		l.members = append(l.members, member{rawKey: rawKey, key: key, value: bytes.Clone(value)})
	}
	return l, nil
}

// Keys returns the decoded top-level keys in line order (a repeated key appears each time).
func (l *Line) Keys() []string {
	keys := make([]string, len(l.members))
	for i, m := range l.members {
		keys[i] = m.key
	}
	return keys
}

// Get returns the JSON text of the value stored under key (the decoded key: "\u0061" matches "a"),
// exactly as it appeared in the line or as Set stored it, and whether the key is present. For a
// repeated key it returns the last occurrence, the one JSON readers (Python's json, encoding/json)
// keep. The returned slice must not be modified.
func (l *Line) Get(key string) (json.RawMessage, bool) {
	for i := len(l.members) - 1; i >= 0; i-- {
		if l.members[i].key == key {
			return json.RawMessage(l.members[i].value), true
		}
	}
	return nil, false
}

// Set stores rawJSON as the value of key: in place of the first occurrence of key (later
// occurrences of a repeated key are removed, so every reader sees the new value), or as a new last
// member. rawJSON must be one valid JSON value; insignificant whitespace is removed from it
// (json.Compact: everything else, such as number text and escapes, is kept), so the line stays one
// line. A new key is written as a JSON string without HTML escaping (ojson.AppendString). Set
// copies rawJSON. An invalid value is an error and leaves the line unchanged.
func (l *Line) Set(key string, rawJSON []byte) error {
	var buf bytes.Buffer
	if json.Compact(&buf, rawJSON) != nil {
		return fmt.Errorf("rolloutline: set %q: invalid JSON value", key)
	}
	value := buf.Bytes()
	first := -1
	kept := l.members[:0:0]
	for i, m := range l.members {
		if m.key != key {
			kept = append(kept, m)
			continue
		}
		if first < 0 {
			first = i
			m.value = value
			kept = append(kept, m)
		}
	}
	if first < 0 {
		kept = append(kept, member{rawKey: ojson.AppendString(nil, key), key: key, value: value})
	}
	l.members = kept
	return nil
}

// Delete removes every occurrence of key; the other members keep their order and text. It reports
// whether key was present.
func (l *Line) Delete(key string) bool {
	kept := l.members[:0:0]
	for _, m := range l.members {
		if m.key != key {
			kept = append(kept, m)
		}
	}
	found := len(kept) < len(l.members)
	l.members = kept
	return found
}

// Bytes returns the line as one compact JSON object, {"k":v,...}, without a trailing newline:
// each member's key and value text as parsed or set, joined by "," in order. A zero Line gives {}.
func (l *Line) Bytes() []byte {
	n := 2
	for _, m := range l.members {
		n += len(m.rawKey) + len(m.value) + 2
	}
	out := append(make([]byte, 0, n), '{')
	for i, m := range l.members {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, m.rawKey...)
		out = append(out, ':')
		out = append(out, m.value...)
	}
	return append(out, '}')
}
