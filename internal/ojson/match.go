package ojson

import (
	"bytes"
	"sync"
)

// matchWindow is how much of a string [Value.MatchEncoding] escapes at once.
const matchWindow = 32 << 10

// MatchEncoding reports whether object v encodes ([Value.AppendJSON]) as exactly raw, without
// building the encoding: strings are escaped and compared a window of 32 KiB at a time. When it
// does, members holds each member's value as a sub-slice of raw, in member order, so a reader can
// keep a member's JSON text without encoding it again. A v that is not an object gives false.
func (v Value) MatchEncoding(raw []byte) (members [][]byte, ok bool) {
	if v.kind != KindObject {
		return nil, false
	}
	bp := matchBufs.Get().(*[]byte)
	m := encodingMatcher{raw: raw, buf: *bp}
	defer func() { *bp = m.buf[:0]; matchBufs.Put(bp) }()
	members = make([][]byte, len(v.obj))
	if !m.lit("{") {
		return nil, false
	}
	for i, mem := range v.obj {
		if i > 0 && !m.lit(",") {
			return nil, false
		}
		if !m.str(mem.Key) || !m.lit(":") {
			return nil, false
		}
		start := m.pos
		if !m.value(mem.Value) {
			return nil, false
		}
		members[i] = raw[start:m.pos:m.pos]
	}
	if !m.lit("}") || m.pos != len(raw) {
		return nil, false
	}
	return members, true
}

// matchBufs holds the matchers' window buffers (a window's escaping makes it at most 6 times as
// long), so that matching one line after another allocates none.
var matchBufs = sync.Pool{New: func() any { b := make([]byte, 0, 2*matchWindow); return &b }}

// encodingMatcher compares what AppendJSON writes with raw from pos on.
type encodingMatcher struct {
	raw []byte
	pos int
	buf []byte
}

func (m *encodingMatcher) lit(s string) bool {
	return m.bytes([]byte(s))
}

func (m *encodingMatcher) bytes(b []byte) bool {
	if !bytes.HasPrefix(m.raw[m.pos:], b) {
		return false
	}
	m.pos += len(b)
	return true
}

func (m *encodingMatcher) str(s string) bool {
	if !m.lit(`"`) {
		return false
	}
	for len(s) > 0 {
		n := CutUTF8(s, matchWindow)
		m.buf = AppendStringBody(m.buf[:0], s[:n])
		if !m.bytes(m.buf) {
			return false
		}
		s = s[n:]
	}
	return m.lit(`"`)
}

func (m *encodingMatcher) value(v Value) bool {
	switch v.kind {
	case KindString:
		return m.str(v.s)
	case KindArray:
		if !m.lit("[") {
			return false
		}
		for i, e := range v.arr {
			if i > 0 && !m.lit(",") {
				return false
			}
			if !m.value(e) {
				return false
			}
		}
		return m.lit("]")
	case KindObject:
		if !m.lit("{") {
			return false
		}
		for i, mem := range v.obj {
			if i > 0 && !m.lit(",") {
				return false
			}
			if !m.str(mem.Key) || !m.lit(":") || !m.value(mem.Value) {
				return false
			}
		}
		return m.lit("}")
	}
	// null, booleans and numbers encode in one piece.
	m.buf = v.AppendJSON(m.buf[:0])
	return m.bytes(m.buf)
}
