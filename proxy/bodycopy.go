package proxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"
)

// copyBufs recycles the 32 KiB buffers bodyCopiers read the upstream body into (the most bytes one
// read forwards). A buffer goes back only once no read can still write into it (bodyCopier.close).
var copyBufs = sync.Pool{New: func() any {
	b := make([]byte, 32<<10)
	return &b
}}

// errTailAbandoned is the cancel cause of an upstream body whose tail was never forwarded.
var errTailAbandoned = errors.New("upstream body abandoned after the terminal grace")

// readResult is the outcome of one upstream body read.
type readResult struct {
	n   int
	err error
}

// bodyCopier copies one upstream response body to the client read by read (DESIGN.md "The proxy's
// upstream request") and implements the terminal grace ([WithTerminalGrace]).
//
// Reads are synchronous on the handler goroutine until the capture reports the terminal SSE event
// (callState.terminal, SPEC §4.2, §0 D1); from then on each read runs on its own goroutine and the
// copier waits for it at most until the grace expires. Then run returns with the read outstanding
// and the copier handed off to the call (callState.handOff): the capture layer ends the call (record
// written, held bytes released) and calls forwardTail, which keeps copying on the handler goroutine.
// Only the handler goroutine touches the ResponseWriter, the record and the body.
type bodyCopier struct {
	f         *forwarder
	w         http.ResponseWriter
	rc        *http.ResponseController // flushes w after each write when w is not a captureWriter
	clientCtx context.Context          // the client request's context
	call      *callState               // nil for an uncaptured call
	resp      *http.Response
	ctx       context.Context // the upstream request's context
	cancel    context.CancelCauseFunc
	idle      *time.Timer     // cancels the upstream request when a read waits longer than f.idleTimeout
	bufp      *[]byte         // from copyBufs, returned by close; nil after
	buf       []byte          // *bufp
	announced []string        // trailer keys announced in the response header (trailers.go)
	pending   chan readResult // the outstanding asynchronous read, nil when none
	trailing  int64           // bytes forwarded after the terminal grace ended the call
}

func newBodyCopier(f *forwarder, w http.ResponseWriter, r *http.Request, call *callState, resp *http.Response, ctx context.Context, cancel context.CancelCauseFunc, announced []string) *bodyCopier {
	bufp := copyBufs.Get().(*[]byte)
	c := &bodyCopier{
		f: f, w: w, clientCtx: r.Context(), call: call, resp: resp, ctx: ctx, cancel: cancel,
		bufp: bufp, buf: *bufp, announced: announced,
	}
	if call == nil {
		// The capture writer flushes every write itself; the server's own writer would buffer.
		c.rc = http.NewResponseController(w)
	}
	c.idle = time.AfterFunc(f.idleTimeout, func() { cancel(errIdleRead) })
	c.idle.Stop()
	return c
}

// flush sends what w buffered, for an uncaptured call.
func (c *bodyCopier) flush() {
	if c.rc != nil {
		_ = c.rc.Flush() // a client that is gone fails the next Write
	}
}

// run copies the body until it ends. It reports true when the terminal grace expired first: the
// copier was handed off to the call (its read still outstanding) and now owns the upstream request.
// An upstream read error or a client that is gone panics with http.ErrAbortHandler after reporting
// the transport kind (SPEC §0 D3, D5).
func (c *bodyCopier) run() (handedOff bool) {
	var grace *time.Timer
	defer func() {
		if grace != nil {
			grace.Stop()
		}
	}()
	for {
		var res readResult
		if grace == nil {
			res = c.readSync()
		} else {
			var ok bool
			if res, ok = c.readAsync(grace.C); !ok {
				c.call.handOff(c)
				return true
			}
		}
		if res.n > 0 {
			c.write(c.buf[:res.n])
		}
		if grace == nil && c.f.terminalGrace > 0 && c.call != nil && c.call.terminal.Load() {
			grace = time.NewTimer(c.f.terminalGrace)
		}
		if res.err != nil {
			c.end(res.err, false)
			return false
		}
	}
}

// forwardTail copies what the upstream sends after the terminal grace ended the call, read by read,
// until the body ends, and logs the trailing byte count at debug level. It releases the upstream
// request.
func (c *bodyCopier) forwardTail() {
	defer c.close()
	for {
		res, _ := c.readAsync(nil)
		if res.n > 0 {
			c.trailing += int64(res.n)
			c.write(c.buf[:res.n])
		}
		if res.err != nil {
			c.f.logger.Debug("gymtrace proxy: upstream body ended after the terminal grace; trailing bytes forwarded, not captured",
				"trailing_bytes", c.trailing, "end", endText(res.err))
			c.end(res.err, true)
			return
		}
	}
}

func endText(err error) string {
	if errors.Is(err, io.EOF) {
		return "eof"
	}
	return err.Error()
}

// readSync reads once on the calling goroutine, bounded by the idle-read timeout.
func (c *bodyCopier) readSync() readResult {
	c.idle.Reset(c.f.idleTimeout)
	n, err := c.resp.Body.Read(c.buf)
	c.idle.Stop()
	return readResult{n, err}
}

// readAsync waits for the next read (started on its own goroutine unless one is outstanding) until
// deadline fires (never when nil); ok is false when it fired first, the read still outstanding.
func (c *bodyCopier) readAsync(deadline <-chan time.Time) (res readResult, ok bool) {
	if c.pending == nil {
		ch := make(chan readResult, 1)
		c.pending = ch
		c.idle.Reset(c.f.idleTimeout)
		body, buf := c.resp.Body, c.buf
		go func() {
			n, err := body.Read(buf)
			ch <- readResult{n, err}
		}()
	}
	select {
	case res = <-c.pending:
		c.pending = nil
		c.idle.Stop()
		return res, true
	case <-deadline:
		return readResult{}, false
	}
}

// write sends p to the client. When the client is gone it cancels the upstream request at once and
// aborts the handler (SPEC §0 D3).
func (c *bodyCopier) write(p []byte) {
	if _, err := c.w.Write(p); err != nil {
		c.cancel(err)
		c.call.report(transportCancelled, false)
		panic(http.ErrAbortHandler)
	}
	c.flush()
}

// end handles the error that ended the body: at EOF it sets the upstream's trailers; any other error
// is reported (unless the call was already recorded, tail) and aborts the response (SPEC §0 D5).
func (c *bodyCopier) end(err error, tail bool) {
	if errors.Is(err, io.EOF) {
		copyTrailers(c.w.Header(), c.resp.Trailer, c.announced)
		return
	}
	kind := transportConnection
	switch {
	case errors.Is(context.Cause(c.ctx), errIdleRead):
		kind = transportTimeout
	case c.clientCtx.Err() != nil:
		kind = transportCancelled
	}
	if !tail {
		c.call.report(kind, false)
	}
	panic(http.ErrAbortHandler)
}

// close releases the upstream request: it cancels and waits for an outstanding read, closes the
// body, cancels the request's context and returns the read buffer. Idempotent.
func (c *bodyCopier) close() {
	c.idle.Stop()
	if c.pending != nil {
		c.cancel(errTailAbandoned)
		<-c.pending
		c.pending = nil
	}
	_ = c.resp.Body.Close()
	c.cancel(nil)
	if c.bufp != nil {
		copyBufs.Put(c.bufp)
		c.bufp, c.buf = nil, nil
	}
}
