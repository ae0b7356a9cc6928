package demo

import (
	"cmp"
	"errors"
	"fmt"
	"io"

	"github.com/gymtrace/gymtrace/sdk/stream"
)

// maxSSEEvent bounds one server-sent event read by the agent, in bytes. The fake model's events
// are a few KiB; the bound only keeps a broken server from exhausting memory.
const maxSSEEvent = 8 << 20

// sseEvent is one dispatched server-sent event: its "event:" name ("" when none was sent) and its
// data lines joined with "\n".
type sseEvent struct {
	name string
	data string
}

// errSSEEventTooLarge is returned for an event larger than maxSSEEvent.
var errSSEEventTooLarge = errors.New("sse: event too large")

// sseReader reads server-sent events as a client does, framed by the proxy's own decoder
// (stream.Decoder, WHATWG HTML "Interpreting an event stream"): an event without data is not
// dispatched, nor is an unfinished event at the end of the body. It is not safe for concurrent use.
type sseReader struct {
	r     io.Reader
	d     *stream.Decoder
	max   int // largest event accepted, in bytes
	buf   []byte
	queue []sseEvent
	err   error // what ends the reading once queue is empty: io.EOF, a read error or errSSEEventTooLarge
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: r, max: maxSSEEvent}
}

// next returns the next event. It returns io.EOF when the body ended and any other read error as
// it is.
func (s *sseReader) next() (sseEvent, error) {
	if s.d == nil {
		s.buf = make([]byte, 32<<10)
		s.d = stream.NewDecoder(func(e stream.Event) {
			switch {
			case e.Overflow:
				s.err = fmt.Errorf("%w: over %d bytes", errSSEEventTooLarge, s.max)
			case e.DataLines > 0 && !e.AtEOF && s.err == nil:
				s.queue = append(s.queue, sseEvent{name: string(e.Name), data: string(e.Data)})
			}
		}, stream.WithMaxEventBytes(s.max))
	}
	for len(s.queue) == 0 {
		if s.err != nil {
			return sseEvent{}, s.err
		}
		n, err := s.r.Read(s.buf)
		s.d.Feed(s.buf[:n])
		if errors.Is(err, io.EOF) {
			s.d.Close()
			s.err = cmp.Or(s.err, io.EOF)
		} else if err != nil {
			s.err = cmp.Or(s.err, err)
		}
	}
	ev := s.queue[0]
	s.queue = s.queue[1:]
	return ev, nil
}
