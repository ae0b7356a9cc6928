package ojson

import (
	"bytes"
	"errors"
	"io"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
)

// Compact validates src like [Parse] and appends it to dst with insignificant whitespace removed:
// key order, duplicate keys, number text and string escapes stay exactly as sent (SPEC §0 D6). On
// error dst is returned unchanged (its length) together with a *SyntaxError. The reading is
// jsontext's (RFC 8259, UTF-8) plus ojson's nesting limit and 64-bit number ranges.
func Compact(dst, src []byte) ([]byte, error) {
	return CompactDepth(dst, src, MaxDepth)
}

// CompactDepth is [Compact] with a nesting limit of maxDepth instead of [MaxDepth] (jsontext's own
// limit, 10000, caps it).
func CompactDepth(dst, src []byte, maxDepth int) ([]byte, error) {
	out, _, err := compactText(nil, dst, src, maxDepth, false)
	return out, err
}

// Valid reports whether data is one strict JSON value, exactly as [Parse] would accept it (nesting at
// most [MaxDepth]), without building or copying anything.
func Valid(data []byte) bool {
	_, _, err := compactText(nil, nil, data, MaxDepth, true)
	return err == nil
}

// CompactString is [CompactDepth] for text held in a string (a span attribute, say): src is read in
// place, never copied. The appended output is dst's own memory, never src's.
func CompactString(dst []byte, src string, maxDepth int) ([]byte, error) {
	return CompactDepth(dst, stringBytes(src), maxDepth)
}

// CheckCompactString validates src like [CompactString] without writing anything, and reports
// whether src is already compact (no whitespace between tokens), that is whether CompactString
// would return src's own bytes. Errors are *SyntaxError. It lets a writer copy a large, already
// compact payload in pieces instead of compacting it into one buffer first.
func CheckCompactString(src string, maxDepth int) (compact bool, err error) {
	_, spaced, err := compactText(nil, nil, stringBytes(src), maxDepth, true)
	return err == nil && !spaced, err
}

// stringBytes returns a read-only view of s's bytes. The readers only read their input and keep
// no reference to it once they return (errors carry an offset, messages a copy), so the view is
// safe to hand them.
func stringBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// tokenReader is a jsontext.Decoder with the buffer it reads, kept together so that both are
// reused from one document to the next (see readers). Safe for one goroutine at a time.
type tokenReader struct {
	buf bytes.Buffer // aliases the document: jsontext reads a bytes.Buffer in place, never copying it
	dec jsontext.Decoder
}

// readers holds idle tokenReaders (a jsontext.Decoder is a few hundred bytes of state, and
// allocates its stacks on first use). It is a bounded free list rather than a sync.Pool, which
// the garbage collector empties (each collection while large bodies stream through would rebuild
// the decoders) and the race detector empties at random; 16 covers the compactions a process runs
// at once.
var readers = make(chan *tokenReader, 16)

// getReader returns an idle tokenReader, or a new one, set to read src (in place).
func getReader(src []byte) *tokenReader {
	var r *tokenReader
	select {
	case r = <-readers:
	default:
		r = new(tokenReader)
	}
	r.buf = *bytes.NewBuffer(src)
	r.dec.Reset(&r.buf, decodeOptions...)
	return r
}

// putReader keeps r for reuse unless enough are kept already.
func putReader(r *tokenReader) {
	r.buf = bytes.Buffer{}
	r.dec.Reset(&r.buf) // keeps no reference to the document
	select {
	case readers <- r:
	default:
	}
}

// decodeOptions are jsontext's rules minus the one D6 does not have: duplicate object keys are
// kept as sent (SPEC §0 D6: "key order ... as sent"). Invalid UTF-8, lone surrogate escapes and
// everything else outside RFC 8259 stay errors (jsontext's default).
var decodeOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true)}

// compactText is [CompactDepth], [Valid], [CheckCompactString] and the [Walker]'s pass in one: it
// reads src as one strict JSON value (SPEC §0 D6) token by token with jsontext, which checks RFC
// 8259 and UTF-8, and adds the rules jsontext does not have in the same pass: nesting at most
// maxDepth, integers within [math.MinInt64, math.MaxUint64], floats that do not overflow float64.
// Unless discard is set it appends src to dst with the whitespace between tokens removed (every
// token's text is copied as sent). spaced reports whether any whitespace was removed. w, when not
// nil, receives the walk's events and string suffixes (see [Walker]). On error dst is returned
// unchanged together with a *SyntaxError. A text that is already compact, the usual case for a
// payload a writer re-checks, is taken by [compactWhole] and walked by [Walker.walkCompact]
// without the token read; every other text is read by compactTokens.
func compactText(w *Walker, dst, src []byte, maxDepth int, discard bool) (out []byte, spaced bool, err error) {
	if compactWhole(src, maxDepth) {
		if w != nil && (w.Visitor != nil || w.Suffix != "") {
			w.walkCompact(src)
		}
		if !discard {
			dst = append(dst, src...)
		}
		return dst, false, nil
	}
	return compactTokens(w, dst, src, maxDepth, discard)
}

// compactTokens is [compactText] reading token by token, the one pass that compacts, feeds a
// Walker and names the error.
func compactTokens(w *Walker, dst, src []byte, maxDepth int, discard bool) (out []byte, spaced bool, err error) {
	r := getReader(src)
	defer putReader(r)

	var stack [16]walkFrame
	open := stack[:0] // the containers open at the current token, outermost first
	n := len(dst)
	end := 0
	for {
		tok, err := r.dec.ReadToken()
		if err != nil {
			return dst[:n], false, tokenError(err, len(src))
		}
		// The bytes since the previous token are whitespace and at most one ',' or ':', then
		// this token's text.
		start, tokEnd := end, int(r.dec.InputOffset())
		for ; isSpaceOrDelim(src[start]); start++ {
			if src[start] == ',' || src[start] == ':' {
				if !discard {
					dst = append(dst, src[start])
				}
			} else {
				spaced = true
			}
		}
		end = tokEnd
		if !discard {
			dst = append(dst, src[start:end]...)
		}
		kind, depth := tok.Kind(), len(open)
		if kind == '"' {
			w.sawString(src[start:end])
			if depth > 0 && open[depth-1].object && open[depth-1].key == nil {
				f := &open[depth-1]
				f.key = src[start:end]
				if w.visits(depth) {
					w.Visitor.Visit(depth, f.key, nil)
				}
				continue
			}
		}
		switch kind {
		case '{', '[':
			if depth >= maxDepth {
				return dst[:n], false, depthError(start, maxDepth)
			}
			if depth > 0 {
				open[depth-1].valAt = start
			}
			open = append(open, walkFrame{object: kind == '{'})
			continue
		case '}', ']':
			open = open[:depth-1]
			depth--
		case '0':
			if msg := numberRangeError(src[start:end]); msg != "" {
				return dst[:n], false, &SyntaxError{Offset: start, Msg: msg}
			}
			fallthrough
		default:
			if depth > 0 {
				open[depth-1].valAt = start
			}
		}
		if depth == 0 {
			break
		}
		// A member's or element's value of the innermost open container ends here.
		f := &open[depth-1]
		if w.visits(depth) {
			w.Visitor.Visit(depth, f.key, src[f.valAt:end])
		}
		f.key = nil
	}
	if _, err := r.dec.ReadToken(); err != io.EOF {
		at := end
		for at < len(src) && isJSONSpace(src[at]) {
			at++
		}
		return dst[:n], false, &SyntaxError{Offset: at, Msg: "data after the top-level value"}
	}
	return dst, spaced || end < len(src), nil
}

// walkFrame is a container open in [compactText]: whether it is an object, where the value of its
// current member or element starts, and the member's raw key (nil while a key is awaited).
type walkFrame struct {
	object bool
	valAt  int
	key    []byte
}

// tokenError turns an error of jsontext's ReadToken into a *SyntaxError. io.EOF means that the
// input ended before a value started (jsontext reports it unwrapped).
func tokenError(err error, size int) error {
	var se *jsontext.SyntacticError
	switch {
	case errors.As(err, &se):
		msg := se.Err.Error()
		if se.Err == io.ErrUnexpectedEOF {
			msg = "unexpected end of input"
		}
		return &SyntaxError{Offset: int(se.ByteOffset), Msg: msg}
	case err == io.EOF:
		return &SyntaxError{Offset: size, Msg: "unexpected end of input"}
	}
	return &SyntaxError{Offset: size, Msg: err.Error()}
}

// isJSONSpace reports whether c is JSON whitespace.
func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// isSpaceOrDelim reports whether c is JSON whitespace, ',' or ':'.
func isSpaceOrDelim(c byte) bool { return isJSONSpace(c) || c == ',' || c == ':' }
