package stream

import (
	"fmt"

	"github.com/gymtrace/gymtrace/ojson"
)

// Stats counts what a [Capture] saw, in events unless stated otherwise.
type Stats struct {
	// Bytes is the number of body bytes fed.
	Bytes int64
	// Events is the number of events dispatched by the framer (events with a name or data).
	Events int
	// ParseErrors counts events with data that is not a strict JSON object (SPEC §4.3: skipped);
	// events without data and chat's "[DONE]" are not counted.
	ParseErrors int
	// BoundHits counts events that outgrew the capture bound ([WithMaxEventBytes]) and lost their
	// data: the response may miss parts, so mark the capture incomplete (SPEC §0 D2).
	BoundHits int
	// Skipped counts JSON objects, or parts of them (a chat choice, an Anthropic event), that the
	// reassembly could not use because a member had a type §4.4–§4.6 cannot combine (e.g. a tool
	// index that is not an integer), where the reference would fail the whole reassembly. Chat
	// values of another type where strings are joined are read, not skipped (SPEC §0 D13).
	Skipped int
}

// Capture decodes one SSE response body in a single pass (SPEC.md §4.2–§4.7, §0 D1, D2, D8, D9): it
// frames the bytes ([Decoder]), detects the terminal event incrementally and folds every event into
// the dialect's reassembly state, so the body never has to be kept for parsing. Feed it each piece
// read from the upstream (after forwarding it), Close it when the body ends, then read Terminal and
// Response.
//
// Memory: the reassembly state, the pending event (bounded by the capture bound) and the parser's
// memory, which each event reuses; the reassembly keeps clones of the few values it needs, so
// parsing allocates about once per event. A Capture is not safe for concurrent use.
type Capture struct {
	dialect dialect
	dec     *Decoder
	term    Terminal
	clean   bool
	closed  bool
	stats   Stats

	released bool // Release dropped the reassembly state

	parser      ojson.Parser
	cloneEvents bool // deep-copy each event before folding it in: the tests' reference

	responses responsesState
	chat      chatState
	messages  messagesState
}

// NewCapture returns a Capture for dialect, one of [DialectResponses], [DialectChat] and
// [DialectMessages]; any other value is an error. Options: [WithMaxEventBytes].
func NewCapture(dialect string, opts ...Option) (*Capture, error) {
	d := parseDialect(dialect)
	if d == dialectUnknown {
		return nil, fmt.Errorf("stream: unknown dialect %q (want %q, %q or %q)",
			dialect, DialectResponses, DialectChat, DialectMessages)
	}
	c := &Capture{dialect: d}
	c.dec = NewDecoder(c.onEvent, opts...)
	return c, nil
}

// Feed processes the next piece of the body and returns [Capture.Terminal] afterwards: the first
// Feed that returns a state other than [TerminalNone] completed the terminal event (which the proxy
// holds until the record is durable). The first terminal event wins; later events are still
// reassembled. p is not retained. Feed after Close does nothing.
func (c *Capture) Feed(p []byte) Terminal {
	if !c.closed {
		c.stats.Bytes += int64(len(p))
		c.dec.Feed(p)
	}
	return c.term
}

// Close ends the body and returns the final [Capture.Terminal]; cleanEOF reports a clean end (no
// transport error, no client disconnect). An event that lacks its closing blank line is reassembled
// (as the reference's block split keeps the last block) but terminal only when cleanEOF. With
// cleanEOF, a chat stream whose every choice got a non-empty finish_reason is complete (SPEC §0 D8).
// Close is idempotent; only the first call's cleanEOF counts.
func (c *Capture) Close(cleanEOF bool) Terminal {
	if c.closed {
		return c.term
	}
	c.clean = cleanEOF
	c.dec.Close()
	c.closed = true
	c.parser.Release()
	if cleanEOF && c.term == TerminalNone && c.dialect == dialectChat && c.chat.finished() {
		c.term = TerminalComplete
	}
	return c.term
}

// Terminal returns the terminal state seen so far (SPEC §4.2, D1; D8 after Close).
func (c *Capture) Terminal() Terminal { return c.term }

// Stats returns the counters so far.
func (c *Capture) Stats() Stats {
	s := c.stats
	s.Events = c.dec.Events()
	s.BoundHits = c.dec.BoundHits()
	return s
}

// Response returns the reassembled response (SPEC §4.4–§4.6, D9) as compact JSON text encoded
// like orjson (SPEC §0 D6): key order as the SPEC gives it, numbers as the upstream wrote them.
// ok is false when there is nothing to reassemble (the reference's null: no usable event, no
// chat choice, no Anthropic message_start or block, no Responses `response` object). It may be
// called before Close for a partial result (SPEC §0 D3) and any number of times.
func (c *Capture) Response() (obj []byte, ok bool) {
	v, ok := c.result()
	if !ok {
		return nil, false
	}
	return v.AppendJSON(make([]byte, 0, v.SizeHint())), true
}

// Release closes the capture if needed (Close(false)) and drops the reassembly state, most of a long
// stream, once the caller took the [Capture.Response] it needs. Afterwards Response reports no
// response; Terminal and Stats keep their values.
func (c *Capture) Release() {
	c.Close(false)
	c.released = true
	c.responses, c.chat, c.messages = responsesState{}, chatState{}, messagesState{}
	c.parser.Release()
}

func (c *Capture) result() (ojson.Value, bool) {
	if c.released {
		return ojson.Value{}, false
	}
	switch c.dialect {
	case dialectResponses:
		return c.responses.result()
	case dialectChat:
		return c.chat.result()
	case dialectMessages:
		return c.messages.result()
	}
	return ojson.Value{}, false
}

// onEvent handles one framed event: parse its data once, check it for the terminal state,
// fold it into the reassembly.
func (c *Capture) onEvent(ev Event) {
	var obj ojson.Value
	isObj := false
	if ev.DataLines > 0 && !ev.Overflow && string(ev.Data) != "[DONE]" {
		obj, isObj = c.parseEvent(ev.Data)
		if !isObj {
			c.stats.ParseErrors++
		}
	}
	if c.term == TerminalNone && (!ev.AtEOF || c.clean) {
		c.term = eventTerminal(c.dialect, &ev, obj, isObj)
	}
	if !isObj {
		return
	}
	// obj lives in c.parser's memory until the next event: what the reassembly keeps, it clones.
	switch c.dialect {
	case dialectResponses:
		c.responses.add(obj)
	case dialectChat:
		c.stats.Skipped += c.chat.add(obj)
	case dialectMessages:
		if c.messages.add(obj) {
			c.stats.Skipped++
		}
	}
}

// parseEvent parses one event's data like parseObject, into c.parser's reused memory.
func (c *Capture) parseEvent(data []byte) (ojson.Value, bool) {
	v, ok := parseObjectWith(c.parser.Parse, data)
	if ok && c.cloneEvents {
		v = v.Clone()
	}
	return v, ok
}

// Reassemble decodes a whole SSE body of dialect and returns its reassembled response as
// [Capture.Response] does, for offline use and tests; the body is taken as ending cleanly.
// ok is false for an unknown dialect too.
func Reassemble(dialect string, body []byte) ([]byte, bool) {
	c, err := NewCapture(dialect)
	if err != nil {
		return nil, false
	}
	c.Feed(body)
	c.Close(true)
	return c.Response()
}
