package demo

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxSSELine bounds one line of a server-sent event stream read by the agent, in bytes. The fake
// model's lines are a few KiB; the bound only keeps a broken server from exhausting memory.
const maxSSELine = 8 << 20

// sseEvent is one dispatched server-sent event: its "event:" name ("" when none was sent) and its
// data lines joined with "\n".
type sseEvent struct {
	name string
	data string
}

// sseReader reads server-sent events the way a client does (WHATWG HTML "Interpreting an event
// stream"): lines end at CRLF, LF or CR; a blank line dispatches the event; lines starting with
// ":" are comments; a field value drops one leading space; "data" lines accumulate; an event
// without data is not dispatched; an unfinished event at the end of the body is dropped.
// It is not safe for concurrent use.
type sseReader struct {
	r       *bufio.Reader
	maxLine int // longest line accepted, in bytes
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReader(r), maxLine: maxSSELine}
}

// errSSELineTooLong is returned for a line longer than maxSSELine.
var errSSELineTooLong = errors.New("sse: line too long")

// readLine returns the next line without its terminator. At the end of the body it returns the
// unterminated rest (if any) with io.EOF.
func (s *sseReader) readLine() (string, error) {
	var b strings.Builder
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return b.String(), err
		}
		switch c {
		case '\n':
			return b.String(), nil
		case '\r':
			if next, err := s.r.Peek(1); err == nil && next[0] == '\n' {
				_, _ = s.r.ReadByte()
			}
			return b.String(), nil
		}
		if b.Len() >= s.maxLine {
			return "", fmt.Errorf("%w: over %d bytes", errSSELineTooLong, s.maxLine)
		}
		b.WriteByte(c)
	}
}

// next returns the next event. It returns io.EOF when the body ended (an unfinished event is
// dropped, as the standard says) and any other read error as it is.
func (s *sseReader) next() (sseEvent, error) {
	var (
		ev      sseEvent
		data    strings.Builder
		hasData bool
	)
	for {
		line, err := s.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return sseEvent{}, io.EOF
			}
			return sseEvent{}, err
		}
		if line == "" {
			if hasData {
				ev.data = data.String()
				return ev, nil
			}
			ev = sseEvent{}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.name = value
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.WriteString(value)
			hasData = true
		}
	}
}
