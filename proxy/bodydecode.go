package proxy

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"github.com/gymtrace/gymtrace/semconv"
)

// contentCodings parses a Content-Encoding header (all values, comma-separated, in the order
// applied) into lowercase codings, dropping "identity". ok is false when a coding is not one the
// capture can decode (SPEC §0 D4: gzip, deflate, br, zstd).
func contentCodings(values []string) (codings []string, ok bool) {
	ok = true
	for _, v := range values {
		for _, c := range strings.Split(v, ",") {
			c = strings.ToLower(strings.TrimSpace(c))
			switch c {
			case "", "identity":
			case "gzip", "x-gzip", "deflate", "br", "zstd":
				codings = append(codings, c)
			default:
				ok = false
			}
		}
	}
	return codings, ok
}

// errBound ends a decode that reached a capture bound (SPEC §0 D15); it is no decode error.
var errBound = errors.New("capture bound reached")

// zstdMaxWindow is the largest zstd window capture decodes (RFC 9659: a Content-Encoding zstd
// window is at most 8 MB); a body that needs more is kept as received (SPEC §0 D4).
const zstdMaxWindow = 8 << 20

// pushDecoder decodes a content-encoded body pushed to it write by write, for capture only (SPEC §0
// D4), within the call's capture bounds (D15). The pull-style decompressors run on one goroutine
// reading the pushed bytes and hand what they decode to out (on that goroutine). A push either
// waits until everything pushed so far was decoded as far as possible (an SSE body, whose terminal
// event decides what is held) or returns at once, so forwarding never waits for decoding.
//
// The decoder stops, keeping what it decoded up to the bound, when the decoded size would pass
// maxDecoded, when it would pass ratio × the encoded bytes read so far, when the in-flight budget
// is spent, or once the call reached any other bound.
type pushDecoder struct {
	out    func([]byte)
	budget *callBudget

	mu      sync.Mutex
	cond    sync.Cond
	input   []byte // every encoded byte pushed so far: a view of the capture's raw bytes, never modified
	off     int    // bytes of input handed to the decompressors
	closed  bool   // no more input: the source reports EOF once input is drained
	waiting bool   // the decoder goroutine is blocked for input with input drained
	done    bool   // the decoder goroutine has exited
	err     error

	decoded int64 // bytes handed to out; decoder goroutine only
}

// newPushDecoder starts decoding codings (in the order applied) within budget's bounds; close
// releases the goroutine.
func newPushDecoder(codings []string, budget *callBudget, out func([]byte)) *pushDecoder {
	d := &pushDecoder{out: out, budget: budget}
	d.cond.L = &d.mu
	go d.run(codings)
	return d
}

func (d *pushDecoder) run(codings []string) {
	err := d.decode(codings)
	d.mu.Lock()
	d.done = true
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, errBound) {
		d.err = err
	}
	d.input = nil
	d.cond.Broadcast()
	d.mu.Unlock()
}

func (d *pushDecoder) decode(codings []string) (err error) {
	var r io.Reader = (*pushSource)(d)
	for i := len(codings) - 1; i >= 0; i-- {
		switch codings[i] {
		case "gzip", "x-gzip":
			zr, err := gzip.NewReader(r)
			if err != nil {
				return fmt.Errorf("gzip: %w", err)
			}
			r = zr
		case "deflate":
			// HTTP's deflate is zlib-wrapped; raw deflate is accepted as a fallback (SPEC §0 D4).
			br := bufio.NewReader(r)
			head, err := br.Peek(2)
			if err != nil {
				return fmt.Errorf("deflate: %w", err)
			}
			if head[0]&0x0f == 8 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 {
				zr, err := zlib.NewReader(br)
				if err != nil {
					return fmt.Errorf("deflate: %w", err)
				}
				r = zr
			} else {
				r = flate.NewReader(br)
			}
		case "br":
			r = brotli.NewReader(r)
		case "zstd":
			zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
				zstd.WithDecoderMaxWindow(zstdMaxWindow))
			if err != nil {
				return fmt.Errorf("zstd: %w", err)
			}
			defer zr.Close() // at the end of the decode, like every reader of the chain
			r = zr
		}
	}
	buf := make([]byte, 32<<10)
	for {
		if d.budget.stopsDecoding() {
			return errBound
		}
		n, err := r.Read(buf)
		if n > 0 {
			keep, stop := d.allow(int64(n))
			if keep > 0 {
				d.decoded += keep
				d.out(buf[:keep])
			}
			if stop {
				return errBound
			}
		}
		if err != nil {
			return err
		}
	}
}

// allow returns how many of n newly decoded bytes the bounds let capture keep, and whether decoding
// stops there (SPEC §0 D15).
func (d *pushDecoder) allow(n int64) (keep int64, stop bool) {
	b := d.budget.bounds
	d.mu.Lock()
	encoded := int64(d.off)
	d.mu.Unlock()
	keep = n
	if d.decoded+keep > b.maxDecoded {
		keep = b.maxDecoded - d.decoded
		d.budget.reach(semconv.CaptureBoundKindDecodedBytes, b.maxDecoded)
		stop = true
	}
	if most := b.ratio * encoded; d.decoded+keep > most {
		keep = max(0, most-d.decoded)
		d.budget.reach(semconv.CaptureBoundKindDecodeRatio, b.ratio)
		stop = true
	}
	if keep > 0 && !d.budget.take(keep) {
		return 0, true
	}
	return keep, stop
}

// pushSource is the decoder goroutine's view of the pushed bytes.
type pushSource pushDecoder

func (s *pushSource) Read(p []byte) (int, error) {
	d := (*pushDecoder)(s)
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.off == len(d.input) && !d.closed {
		d.waiting = true
		d.cond.Broadcast()
		d.cond.Wait()
	}
	d.waiting = false
	if d.off == len(d.input) {
		return 0, io.EOF
	}
	n := copy(p, d.input[d.off:])
	d.off += n
	return n, nil
}

// push hands the decoder all, every encoded byte of the body so far (all's bytes must never change;
// each push extends the previous one). With wait it returns once all was decoded as far as
// possible, else at once.
func (d *pushDecoder) push(all []byte, wait bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done || d.closed || len(all) <= len(d.input) {
		return
	}
	d.input = all
	d.cond.Broadcast()
	for wait && !d.done && (!d.waiting || d.off < len(d.input)) {
		d.cond.Wait()
	}
}

// failure returns the error the decoder already stopped with, or nil while it still decodes.
func (d *pushDecoder) failure() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.done {
		return nil
	}
	return d.err
}

// close ends the input and waits for the decoder goroutine to exit. It returns the decode error, if
// any (a truncated or corrupt body); the bytes decoded before it were handed to out. A decode that
// stopped at a capture bound is no error. Idempotent.
func (d *pushDecoder) close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	d.cond.Broadcast()
	for !d.done {
		d.cond.Wait()
	}
	return d.err
}
