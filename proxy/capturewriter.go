package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gymtrace/gymtrace/internal/growbuf"
	"github.com/gymtrace/gymtrace/sdk/stream"
	"github.com/gymtrace/gymtrace/semconv"
)

// modelCallIDHeader is the response header naming a captured call's model_call_id.
const modelCallIDHeader = "X-Gymtrace-Model-Call-Id"

// rawPreallocMax bounds the capture buffer allocated up front for a response that declares its
// Content-Length (a lying upstream cannot make the proxy reserve more); a larger body grows from there.
const rawPreallocMax = 8 << 20

// captureWriter is the http.ResponseWriter a captured call's handler writes to: the forwarding half
// of SPEC §0 "Durability contract". Every Write goes to the client at once and is flushed, and a copy
// is kept for the record (decoded, D4, and for SSE fed to a [stream.Capture]), except what is held
// until the record is durable ([captureWriter.release]): for SSE the Write that completes the
// terminal event and everything after it, for a body with a Content-Length the Write that completes
// it, and a body-less response (204, 304, Content-Length 0) whole, status line included. After the
// terminal grace ended the call, [captureWriter.passThrough] lets later Writes through uncaptured.
//
// Forwarding never depends on parsing. The writer is meant for the handler's goroutine but guards
// its state with a mutex so that a Flush from another goroutine is safe.
type captureWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	call    *callState
	dialect string
	id      string
	clock   func() (time.Time, time.Duration)
	maxEv   int
	budget  *callBudget // the capture bounds (SPEC §0 D15)

	mu          sync.Mutex
	wroteHeader bool // the handler sent a final (non-1xx) status
	status      int
	sentHeader  bool // the status line was written to w (flushed at once only for SSE)
	holdHeader  bool // a body-less response: the status line is held too
	holding     bool // every later byte is held
	held        []byte
	heldInRaw   bool // the held bytes are raw[heldFrom:] (a captured response), not in held
	heldFrom    int
	sse         bool
	length      int64 // declared Content-Length, -1 when none
	written     int64 // body bytes the handler wrote
	clientErr   error // first error writing to the client
	passing     bool  // after the terminal grace ended the call: writes pass through uncaptured

	// Capture of what the handler wrote (never what a synthetic answer of the proxy wrote).
	raw       []byte // body bytes as written (content-encoded)
	decoded   []byte // decoded body, when encoded (raw is the body otherwise)
	encoded   bool
	decoder   *pushDecoder
	decodeErr error
	undecoded bool // unknown Content-Encoding: raw bytes are captured as they are
	sc        *stream.Capture
	ttft      time.Duration
	ttftSet   bool
	synthetic bool // the status came from the proxy itself (SPEC §0 D5), not the upstream
}

func newCaptureWriter(w http.ResponseWriter, call *callState, dialect, id string, clock func() (time.Time, time.Duration), maxEventBytes int, budget *callBudget) *captureWriter {
	return &captureWriter{
		w: w, rc: http.NewResponseController(w), call: call, dialect: dialect, id: id,
		clock: clock, maxEv: maxEventBytes, length: -1, budget: budget,
	}
}

// Header returns the header map of the underlying writer.
func (cw *captureWriter) Header() http.Header { return cw.w.Header() }

// Unwrap returns the underlying ResponseWriter (for http.ResponseController).
func (cw *captureWriter) Unwrap() http.ResponseWriter { return cw.w }

// WriteHeader records the status and, unless the response is body-less, writes the status line: an
// SSE response's is flushed at once (its client waits for it), any other goes out with the first
// body bytes or at a Flush, as net/http sends it. 1xx informational statuses pass through unrecorded.
func (cw *captureWriter) WriteHeader(code int) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	cw.writeHeaderLocked(code)
}

func (cw *captureWriter) writeHeaderLocked(code int) {
	if cw.wroteHeader {
		return
	}
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		cw.w.WriteHeader(code)
		return
	}
	cw.wroteHeader = true
	cw.status = code
	h := cw.w.Header()
	_, cw.synthetic = cw.call.reported()
	if !cw.synthetic {
		cw.setupCapture(h)
	}
	h.Set(modelCallIDHeader, cw.id)
	if cl := h.Get("Content-Length"); cl != "" {
		if n, err := strconv.ParseInt(strings.TrimSpace(cl), 10, 64); err == nil && n >= 0 {
			cw.length = n
		}
	}
	if !cw.synthetic && cw.length > 0 && cw.raw == nil {
		cw.raw = make([]byte, 0, min(cw.length, rawPreallocMax, cw.budget.bounds.maxResponse))
	}
	if bodylessStatus(code) || cw.length == 0 {
		cw.holdHeader = true
		cw.holding = true
		return
	}
	cw.sentHeader = true
	cw.w.WriteHeader(code)
	if cw.sse {
		cw.flushLocked()
	}
}

// setupCapture decides SSE-ness and content decoding from the response headers (SPEC §4.1: the
// Content-Type value starts with the exact bytes "text/event-stream"; D4).
func (cw *captureWriter) setupCapture(h http.Header) {
	if ct := h.Values("Content-Type"); len(ct) > 0 && strings.HasPrefix(ct[0], "text/event-stream") {
		cw.sse = true
		sc, err := stream.NewCapture(cw.dialect, stream.WithMaxEventBytes(cw.maxEv))
		if err == nil {
			cw.sc = sc
		}
	}
	codings, ok := contentCodings(h.Values("Content-Encoding"))
	switch {
	case !ok:
		cw.undecoded = true
	case len(codings) > 0:
		cw.encoded = true
		cw.decoder = newPushDecoder(codings, cw.budget, cw.onDecoded)
	}
}

// onDecoded receives decoded bytes from the decoder goroutine. cw.decoded and cw.sc are the decoder
// goroutine's until finish closed the decoder, except while a waiting push (an SSE body) holds cw.mu.
func (cw *captureWriter) onDecoded(p []byte) {
	cw.decoded = growbuf.Append(cw.decoded, p)
	if cw.sc != nil {
		cw.sc.Feed(p)
	}
}

// Write sends p to the client (or holds it, see captureWriter) and captures a copy. It returns the
// client's write error, if any, so a forwarder can stop and cancel its upstream (SPEC §0 D3).
func (cw *captureWriter) Write(p []byte) (int, error) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if !cw.wroteHeader {
		if cw.w.Header().Get("Content-Type") == "" && len(p) > 0 {
			cw.w.Header().Set("Content-Type", http.DetectContentType(p))
		}
		cw.writeHeaderLocked(http.StatusOK)
	}
	n := len(p)
	if n == 0 {
		return 0, nil
	}
	if cw.passing {
		return cw.writeClientLocked(p)
	}
	terminal, kept := false, 0
	if !cw.synthetic {
		if !cw.ttftSet {
			_, cw.ttft = cw.clock()
			cw.ttftSet = true
		}
		kept = cw.captureLocked(p)
		terminal = cw.sc != nil && cw.sc.Terminal() != stream.TerminalNone
	}
	if !cw.holding {
		switch {
		case cw.sse && terminal:
			cw.holding = true
			cw.call.terminal.Store(true)
		case cw.length >= 0 && cw.written+int64(n) >= cw.length:
			cw.holding = true
		}
	}
	cw.written += int64(n)
	if cw.holding {
		cw.holdLocked(p, kept)
		return n, nil
	}
	return cw.writeClientLocked(p)
}

// captureLocked keeps a copy of p, just received, for the record within the call's bounds (SPEC §0
// D15): at most maxResponse bytes as received, each reserved from the in-flight budget, none once
// any bound was reached. The copy goes to the decoder (which never delays a push unless the body
// is SSE, whose terminal event decides what is held) or to the SSE capture.
// It returns how many of p's first bytes it kept.
func (cw *captureWriter) captureLocked(p []byte) int {
	if cw.budget.reached() {
		return 0
	}
	keep := p
	if room := cw.budget.bounds.maxResponse - int64(len(cw.raw)); int64(len(p)) > room {
		keep = p[:room]
		cw.budget.reach(semconv.CaptureBoundKindResponseBytes, cw.budget.bounds.maxResponse)
	}
	if len(keep) == 0 || !cw.budget.take(int64(len(keep))) {
		return 0
	}
	cw.raw = growbuf.AppendToward(cw.raw, keep, int(min(cw.length, cw.budget.bounds.maxResponse)))
	switch {
	case cw.decoder != nil:
		cw.decoder.push(cw.raw, cw.sse)
	case cw.sc != nil && !cw.undecoded:
		cw.sc.Feed(keep)
	}
	return len(keep)
}

// holdLocked keeps p, which the client gets only at release; kept is how many of p's first bytes
// captureLocked appended to raw. Held bytes stay raw's tail while every held write was captured
// whole (no copy); from the first that was not, they are a copy of their own.
func (cw *captureWriter) holdLocked(p []byte, kept int) {
	whole := kept == len(p)
	switch {
	case cw.heldInRaw && whole:
	case cw.heldInRaw:
		cw.held = append(slices.Clone(cw.raw[cw.heldFrom:len(cw.raw)-kept]), p...)
		cw.heldInRaw = false
	case whole && len(cw.held) == 0:
		cw.heldInRaw, cw.heldFrom = true, len(cw.raw)-len(p)
	default:
		cw.held = append(cw.held, p...)
	}
}

// writeClientLocked writes p to the client and flushes.
func (cw *captureWriter) writeClientLocked(p []byte) (int, error) {
	if cw.clientErr != nil {
		return 0, cw.clientErr
	}
	if _, err := cw.w.Write(p); err != nil {
		cw.clientErr = err
		return 0, err
	}
	cw.flushLocked()
	return len(p), nil
}

// passThrough ends holding and capturing once the terminal grace ended the call
// ([callState.forwardTail]): later Writes go to the client at once, uncaptured.
func (cw *captureWriter) passThrough() {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	cw.passing = true
	cw.holding = false
}

// Flush flushes the underlying writer unless bytes are being held (held bytes wait for the record).
func (cw *captureWriter) Flush() {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if !cw.wroteHeader || cw.holdHeader {
		return
	}
	cw.flushLocked()
}

func (cw *captureWriter) flushLocked() {
	if cw.clientErr != nil {
		return
	}
	if err := cw.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		cw.clientErr = err
	}
}

// Hijack is refused for captured calls: the capture needs to see the response.
func (cw *captureWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return nil, nil, errors.New("gymtrace capture: hijacking a captured response is not supported")
}

// finish ends the capture side once the handler is done: it closes the decoder and, when the
// handler wrote no status, records net/http's implicit 200 (held). It reports whether it wrote one.
func (cw *captureWriter) finish(implicitOK bool) (wrote bool) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if cw.decoder != nil {
		if cw.call.early.Load() || cw.budget.reached() {
			// The terminal grace ended the call, or capture stopped at a bound (SPEC §0 D15): the
			// encoded stream is unfinished by design.
			cw.decodeErr = cw.decoder.failure()
			_ = cw.decoder.close()
		} else {
			cw.decodeErr = cw.decoder.close()
		}
	}
	wrote = cw.wroteHeader
	if !cw.wroteHeader && implicitOK {
		cw.wroteHeader = true
		cw.status = http.StatusOK
		cw.holdHeader = true
		cw.holding = true
		cw.w.Header().Set(modelCallIDHeader, cw.id)
	}
	return wrote
}

// release sends what was held (status line and body bytes) and flushes, once the record is durable
// (or the rollout marked incomplete).
func (cw *captureWriter) release() {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if !cw.wroteHeader {
		return
	}
	if !cw.sentHeader {
		cw.sentHeader = true
		cw.w.WriteHeader(cw.status)
	}
	held := cw.held
	if cw.heldInRaw {
		held = cw.raw[cw.heldFrom:]
	}
	if len(held) > 0 && cw.clientErr == nil {
		if _, err := cw.w.Write(held); err != nil {
			cw.clientErr = err
		}
	}
	cw.held, cw.heldInRaw = nil, false
	cw.flushLocked()
}

// clientGone reports whether the client went away before the end of the response was held for it
// (SPEC §0 D3): a write to it failed, or ctx (the request's) ended while bytes still flowed.
func (cw *captureWriter) clientGone(ctx context.Context) bool {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	return cw.clientErr != nil || (ctx.Err() != nil && !cw.holding)
}

// bodylessStatus reports a final status whose response never has a body, whatever its headers
// declare (RFC 9110 §15.3.5, §15.4.5): 204 No Content and 304 Not Modified.
func bodylessStatus(code int) bool {
	return code == http.StatusNoContent || code == http.StatusNotModified
}

// shortOfLength reports whether the handler declared a Content-Length and returned having written
// fewer body bytes, for a response that has a body (not HEAD, not 1xx, 204 or 304): net/http then
// closes the connection and the client's read fails, so the call broke (SPEC §0 D5) as a short
// upstream body breaks it in the built-in forwarder (bodycopy.go).
func (cw *captureWriter) shortOfLength(method string) bool {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if !cw.wroteHeader || cw.synthetic || cw.length < 0 || method == http.MethodHead || bodylessStatus(cw.status) {
		return false
	}
	return cw.written < cw.length
}

// keepsRawLocked reports whether the record keeps the response body as received instead of
// decoded (SPEC §0 D4): an unknown Content-Encoding, or a body the decoder rejected. Such a record
// holds every byte, so the rollout is not incomplete. A decode cut short only because the exchange
// broke (clean false) keeps the bytes decoded so far (D3). Called with cw.mu held, after finish.
func (cw *captureWriter) keepsRawLocked(clean bool) bool {
	if cw.synthetic {
		return false
	}
	if cw.undecoded {
		return true
	}
	return cw.decodeErr != nil && (clean || !errors.Is(cw.decodeErr, io.ErrUnexpectedEOF))
}

// closeDecoder releases the decoder goroutine (idempotent); used on every exit path.
func (cw *captureWriter) closeDecoder() {
	cw.mu.Lock()
	d := cw.decoder
	cw.mu.Unlock()
	if d != nil {
		_ = d.close()
	}
}
