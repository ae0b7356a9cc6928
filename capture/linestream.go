package capture

import (
	"slices"
	"strings"
	"time"

	"github.com/gymtrace/gymtrace/ojson"
)

// LinePieceBytes is the size of the pieces [SpanLine.WriteTo] hands out: a line is never held
// whole, only one piece of about this many bytes (plus one window of escaping growth) at a time.
const LinePieceBytes = 64 << 10

// StreamedLineBytes is the payload size ([SpanLine.PayloadBytes]) from which the [Writer] hands a
// record to the store in pieces ([SpanLine.WriteTo], [SpanLine.Streamed]), so that a large record
// is never held whole a second time; below it one buffer is cheaper.
const StreamedLineBytes = 128 << 10

// lineWindow is how much of a payload is escaped or copied between two checks of the piece size.
const lineWindow = 32 << 10

// SpanLine is the capture line of one model-call span, read from its attributes but not yet
// written: [SpanLine.AppendTo] appends it whole (the bytes of [AppendLineFromAttributes]),
// [SpanLine.WriteTo] hands it out in pieces so that a large record (a 1 MiB stream's response_raw)
// is never held whole in memory. Reading checks everything but the payload objects' JSON, so a
// span that cannot give a record fails in [NewSpanLine], before any byte is written. A SpanLine
// reads the span's attribute strings in place; it is for one goroutine.
type SpanLine struct {
	e       Exchange
	p       spanPayloads
	dropped int  // attributes the span lost to a count limit ([ModelCallLines])
	checked bool // the payload objects were checked: the line was made, or Problems checked them
}

// NewSpanLine reads the record of a model-call span from its attributes (see
// [ExchangeFromAttributes]), with traceID and spanID as the record's trace_id and span_id. The
// error is ExchangeFromAttributes's for a missing or mistyped attribute.
func NewSpanLine(a AttributeLookup, start, end time.Time, traceID, spanID string) (*SpanLine, error) {
	return newSpanLine(a, start, end, traceID, spanID, "", "")
}

// newSpanLine is NewSpanLine for a span whose producer checked the body texts checkedReq and
// checkedResp (see [Span.CheckedRequest]; "" for none).
func newSpanLine(a AttributeLookup, start, end time.Time, traceID, spanID, checkedReq, checkedResp string) (*SpanLine, error) {
	e, err := exchangeHead(a, start, end)
	if err != nil {
		return nil, err
	}
	p, err := readPayloads(a)
	if err != nil {
		return nil, err
	}
	p.markChecked(checkedReq, checkedResp)
	e.TraceID, e.SpanID = traceID, spanID
	return &SpanLine{e: e, p: p}, nil
}

// PayloadBytes is the total length in bytes of the usable payload texts (request/response bodies
// and raw texts): what decides between AppendTo and WriteTo.
func (l *SpanLine) PayloadBytes() int {
	n := 0
	for i := range l.p {
		if l.p[i].usable {
			n += len(l.p[i].text)
		}
	}
	return n
}

// SizeHint estimates the line's length in bytes (for [Store.AppendStream]).
func (l *SpanLine) SizeHint() int { return l.p.lineSizeHint() }

// AppendTo appends the whole line to dst.
func (l *SpanLine) AppendTo(dst []byte) []byte {
	dst = slices.Grow(dst, l.p.lineSizeHint())
	l.checked = true
	return l.e.appendJSON(dst, &l.p, nil)
}

// WriteTo hands the line to emit in consecutive pieces of about [LinePieceBytes] bytes, the last
// one ending in "\n": the same bytes as AppendTo. The pieces are built in buf (pass nil or a pooled
// buffer; it is returned for reuse), so emit must consume each piece before returning. emit's first
// error stops the output and is returned (the line is then incomplete).
func (l *SpanLine) WriteTo(buf []byte, emit func(piece []byte) error) ([]byte, error) {
	sink := &lineSink{emit: emit}
	l.checked = true
	rest := l.e.appendJSON(buf[:0], &l.p, sink)
	sink.send(rest)
	return rest[:0], sink.err
}

// Problems lists the payloads that the line writes as null although the span had them (cut, or not
// one strict JSON object), and the span's dropped attributes when [ModelCallLines] read it from a
// span that lost some to a count limit. Before AppendTo or WriteTo it checks the payload objects
// itself (validating them without making the line: the [Writer.Forward] path, whose line another
// writer makes).
func (l *SpanLine) Problems() Problems {
	if !l.checked {
		l.checked = true
		l.p[reqBody].checkObject()
		l.p[respBody].checkObject()
	}
	p := l.p.problems()
	if l.dropped > 0 {
		p = append(p, droppedProblem(l.dropped))
	}
	return p
}

// lineSink hands a line out in pieces (see SpanLine.WriteTo). A nil *lineSink means the
// whole line is appended to one buffer.
type lineSink struct {
	emit func([]byte) error
	err  error // the first error of emit; later pieces are dropped
}

// send emits b (when non-empty and no earlier emit failed).
func (k *lineSink) send(b []byte) {
	if k.err == nil && len(b) > 0 {
		k.err = k.emit(b)
	}
}

// spill emits dst once it holds a whole piece and returns it emptied, else returns it unchanged.
func (k *lineSink) spill(dst []byte) []byte {
	if len(dst) < LinePieceBytes {
		return dst
	}
	k.send(dst)
	return dst[:0]
}

// appendString appends s as a JSON string (ojson.AppendString), in windows through k when k is set.
func (k *lineSink) appendString(dst []byte, s string) []byte {
	if k == nil {
		return ojson.AppendString(dst, s)
	}
	dst = append(dst, '"')
	for len(s) > 0 {
		n := ojson.CutUTF8(s, lineWindow)
		dst = k.spill(ojson.AppendStringBody(dst, s[:n]))
		s = s[n:]
	}
	return append(dst, '"')
}

// appendObject writes a body payload as the record's object, like payloadField.appendRecordObject:
// a text that is already compact strict JSON is copied in windows; one that needs compacting is
// compacted into a buffer of its own first (only spans from other writers carry such text).
func (k *lineSink) appendObject(dst []byte, f *payloadField) []byte {
	if !f.usable {
		return append(dst, "null"...)
	}
	text := f.text
	compact := f.checked
	if !compact && strings.HasPrefix(text, "{") {
		var err error
		compact, err = ojson.CheckCompactString(text, PayloadMaxDepth)
		if err != nil {
			f.problem = &Problem{Key: string(f.key), Reason: "not a JSON object: " + err.Error()}
			return append(dst, "null"...)
		}
	}
	if !compact {
		out, ok := f.appendObject(nil)
		if !ok {
			return append(dst, "null"...)
		}
		text = bytesText(out) // out is this call's own buffer
	}
	for len(text) > 0 {
		n := min(len(text), lineWindow)
		dst = k.spill(append(dst, text[:n]...))
		text = text[n:]
	}
	return dst
}
