package demo

import (
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

var (
	// errSSEEventTooLarge is returned for an event larger than the bound.
	errSSEEventTooLarge = errors.New("sse: event too large")
	// errStreamEnded is returned when the body ends before the stream's terminal event.
	errStreamEnded = errors.New("stream ended without")
)

// readEvents reads the server-sent events of r as a client does, framed by the proxy's own decoder
// (stream.Decoder, WHATWG HTML "Interpreting an event stream": an event without data is not
// dispatched, nor is an unfinished event at the end of the body), and hands each to handle until
// handle reports done or fails. It returns handle's error, a read error, errSSEEventTooLarge for
// an event over max bytes, or errStreamEnded ("stream ended without " + terminal) when the body
// ends first.
func readEvents(r io.Reader, max int, terminal string, handle func(sseEvent) (done bool, err error)) error {
	var done bool
	var err error
	d := stream.NewDecoder(func(e stream.Event) {
		switch {
		case done || err != nil:
		case e.Overflow:
			err = fmt.Errorf("%w: over %d bytes", errSSEEventTooLarge, max)
		case e.DataLines > 0 && !e.AtEOF:
			done, err = handle(sseEvent{name: string(e.Name), data: string(e.Data)})
		}
	}, stream.WithMaxEventBytes(max))
	buf := make([]byte, 32<<10)
	for !done && err == nil {
		n, rerr := r.Read(buf)
		d.Feed(buf[:n])
		if errors.Is(rerr, io.EOF) {
			d.Close()
			rerr = fmt.Errorf("%w %s", errStreamEnded, terminal)
		}
		if rerr != nil && !done && err == nil {
			err = rerr
		}
	}
	return err
}
