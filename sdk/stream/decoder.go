package stream

import "bytes"

// DefaultMaxEventBytes is the default per-event capture bound, in bytes (64 MiB, SPEC.md §0 D2).
const DefaultMaxEventBytes = 64 << 20

// retainLimit is the buffer capacity, in bytes, kept between events; larger buffers are released
// after their event so one huge event does not pin its memory for the rest of the stream.
const retainLimit = 1 << 20

// Event is one dispatched Server-Sent Event (WHATWG HTML "event stream interpretation", SPEC.md §0 D2).
//
// Name and Data alias the decoder's buffers: they are valid only until the handler returns.
type Event struct {
	// Name is the value of the last "event" field of the event (one leading space dropped,
	// nothing else trimmed); empty when HasName is false.
	Name []byte
	// HasName reports whether the event carried an "event" field at all (even an empty one).
	HasName bool
	// Data is the event's "data" field values (one leading space dropped from each) joined with
	// "\n"; a value never contains CR or LF, so splitting Data at '\n' gives the lines back.
	Data []byte
	// DataLines is the number of "data" fields; zero means the event had no data at all.
	DataLines int
	// Overflow reports that the event outgrew the capture bound (see [WithMaxEventBytes]): its
	// data, and any line that did not fit, were dropped (Data is empty and DataLines 0). Name
	// is kept when its line fitted.
	Overflow bool
	// AtEOF reports that the event was dispatched by [Decoder.Close] because the body ended
	// before the event's closing blank line (SPEC.md §0 D8).
	AtEOF bool
}

// Decoder is a push-style WHATWG Server-Sent Events framer (SPEC.md §0 D2). Bytes are given to
// [Decoder.Feed] in pieces of any size, split anywhere (even inside a CRLF or a UTF-8
// sequence); each complete event is passed to the handler as soon as its closing blank line has
// been fed.
//
// Framing: lines end at CRLF, LF or a lone CR (U+2028, U+2029 and U+0085 never end a line); a
// blank line ends an event; a line starting with ':' is a comment; a line is split at its first
// ':' into field name and value, and the value drops one leading space; a line without ':' is a
// field with an empty value; "event" sets the name, "data" lines are joined with "\n", every
// other field ("id", "retry", unknown ones) is ignored; one leading UTF-8 byte order mark of the
// stream is dropped. Unlike a browser, an event that has a name but no data is dispatched too
// (terminal events such as "event: response.incomplete" carry no data), and [Decoder.Close]
// dispatches an event that lacks its closing blank line (see [Event.AtEOF]).
//
// No line length limit applies; instead the bytes held for the pending event (name, data and
// the current partial line) are bounded by the capture bound ([WithMaxEventBytes], default
// [DefaultMaxEventBytes]). An event that outgrows it is dispatched with [Event.Overflow] set and
// its data dropped; framing continues normally with the next event, and nothing panics.
//
// Work per Feed is proportional to the bytes fed. A Decoder is not safe for concurrent use.
type Decoder struct {
	handle func(Event)
	max    int

	line     []byte // pending partial line (bytes fed since the last line end)
	lineOver bool   // the pending line did not fit the bound and was dropped
	skipLF   bool   // the previous byte was a CR: an LF right after it belongs to the same line end
	bom      int    // bytes of a leading byte order mark matched so far; -1 once the start is passed

	name     []byte
	hasName  bool
	data     []byte
	nData    int
	overflow bool

	events int
	hits   int
	closed bool
}

var bomBytes = [3]byte{0xEF, 0xBB, 0xBF}

// NewDecoder returns a Decoder that passes each complete event to handle. Of opts, only
// [WithMaxEventBytes] applies. handle must not retain the event's slices after it returns; a nil
// handle drops every event (they are still counted).
func NewDecoder(handle func(Event), opts ...Option) *Decoder {
	cfg := newConfig(opts)
	if handle == nil {
		handle = func(Event) {}
	}
	return &Decoder{handle: handle, max: cfg.maxEventBytes}
}

// Events returns the number of events dispatched so far.
func (d *Decoder) Events() int { return d.events }

// BoundHits returns the number of events that outgrew the capture bound so far.
func (d *Decoder) BoundHits() int { return d.hits }

// Feed frames p, which continues the bytes fed before; it dispatches every event completed by p.
// p is not retained. Feed after [Decoder.Close] does nothing.
func (d *Decoder) Feed(p []byte) {
	if d.closed {
		return
	}
	if d.bom >= 0 {
		p = d.feedBOM(p)
	}
	pos := 0
	nl, cr := -2, -2 // next LF / CR position in p; -1 none left; < pos unknown
	for pos < len(p) {
		if d.skipLF {
			d.skipLF = false
			if p[pos] == '\n' {
				pos++
				continue
			}
		}
		if nl != -1 && nl < pos {
			if j := bytes.IndexByte(p[pos:], '\n'); j < 0 {
				nl = -1
			} else {
				nl = pos + j
			}
		}
		if cr != -1 && cr < pos {
			if j := bytes.IndexByte(p[pos:], '\r'); j < 0 {
				cr = -1
			} else {
				cr = pos + j
			}
		}
		end := nl
		if end < 0 || (cr >= 0 && cr < end) {
			end = cr
		}
		if end < 0 {
			d.appendLine(p[pos:])
			return
		}
		if len(d.line) > 0 || d.lineOver {
			d.appendLine(p[pos:end])
			d.takeLine()
		} else if d.pending()+end-pos > d.max {
			d.markOverflow() // a line over the bound is dropped, however it was fed
		} else {
			d.endLine(p[pos:end])
		}
		d.skipLF = p[end] == '\r'
		pos = end + 1
	}
}

// feedBOM drops a leading byte order mark, which may arrive split across pieces.
func (d *Decoder) feedBOM(p []byte) []byte {
	for len(p) > 0 && d.bom < len(bomBytes) {
		if p[0] != bomBytes[d.bom] {
			// Not a byte order mark: the bytes held so far are ordinary line content.
			held := d.bom
			d.bom = -1
			d.appendLine(bomBytes[:held])
			return p
		}
		d.bom++
		p = p[1:]
	}
	if d.bom == len(bomBytes) {
		d.bom = -1
	}
	return p
}

// pending returns the bytes held for the pending event.
func (d *Decoder) pending() int { return len(d.name) + len(d.data) + len(d.line) }

// appendLine adds b to the pending partial line, within the capture bound.
func (d *Decoder) appendLine(b []byte) {
	if d.lineOver || len(b) == 0 {
		return
	}
	if d.pending()+len(b) > d.max {
		d.markOverflow()
		d.lineOver = true
		d.line = release(d.line)
		return
	}
	d.line = append(d.line, b...)
}

// markOverflow records that the pending event outgrew the bound and drops its data.
func (d *Decoder) markOverflow() {
	if !d.overflow {
		d.overflow = true
		d.hits++
	}
	d.data = release(d.data)
}

// takeLine ends the buffered pending line. A line dropped by the bound was not blank, so it
// does not end the event; it is ignored.
func (d *Decoder) takeLine() {
	line, over := d.line, d.lineOver
	d.line, d.lineOver = d.line[:0], false
	if !over {
		d.endLine(line)
	}
}

// endLine interprets one complete line (without its terminator).
func (d *Decoder) endLine(line []byte) {
	if len(line) == 0 {
		d.dispatch(false)
		return
	}
	if line[0] == ':' {
		return // comment
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "event":
		d.hasName = true
		if len(d.data)+len(value) > d.max {
			d.markOverflow()
			d.name = d.name[:0]
			return
		}
		d.name = append(d.name[:0], value...)
	case "data":
		d.nData++
		if d.overflow {
			return
		}
		sep := 0
		if d.nData > 1 {
			sep = 1
		}
		// The line may have been counted in pending() already (when buffered); count it once.
		held := len(d.name) + len(d.data) + sep + len(value)
		if held > d.max {
			d.markOverflow()
			return
		}
		if sep == 1 {
			d.data = append(d.data, '\n')
		}
		d.data = append(d.data, value...)
	}
}

// dispatch passes the pending event to the handler (when it has a name, data or overflowed)
// and resets the event state.
func (d *Decoder) dispatch(atEOF bool) {
	if d.hasName || d.nData > 0 || d.overflow {
		if d.overflow {
			d.nData = 0 // dropped lines cannot be told apart: report no data at all
		}
		d.events++
		d.handle(Event{
			Name:      d.name,
			HasName:   d.hasName,
			Data:      d.data,
			DataLines: d.nData,
			Overflow:  d.overflow,
			AtEOF:     atEOF,
		})
	}
	d.hasName, d.nData, d.overflow = false, 0, false
	d.name = d.name[:0]
	d.data = d.data[:0]
	if cap(d.data) > retainLimit {
		d.data = nil
	}
	if cap(d.line) > retainLimit {
		d.line = nil
	}
}

// Close ends the stream: a pending partial line is taken as a complete line and a pending event
// without its closing blank line is dispatched with [Event.AtEOF] set (SPEC.md §0 D8). Close is
// idempotent; later Feed calls do nothing.
func (d *Decoder) Close() {
	if d.closed {
		return
	}
	if d.bom > 0 {
		held := d.bom
		d.bom = -1
		d.appendLine(bomBytes[:held])
	}
	d.bom = -1
	if len(d.line) > 0 || d.lineOver {
		d.takeLine()
	}
	d.dispatch(true)
	d.closed = true
	d.line, d.data, d.name = nil, nil, nil
}

// release empties b, dropping its memory when it is large.
func release(b []byte) []byte {
	if cap(b) > retainLimit {
		return nil
	}
	return b[:0]
}
