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

// pushDecoder decodes a content-encoded body pushed to it write by write, for capture only (SPEC §0
// D4). The pull-style decompressors run on one goroutine reading the pushed bytes; push returns once
// it consumed everything and waits for more, so every byte decodable so far went to out (called on
// that goroutine, only while a push or close waits for it).
type pushDecoder struct {
	out func([]byte)

	mu      sync.Mutex
	cond    sync.Cond
	pending []byte
	closed  bool // no more input: the source reports EOF once pending is drained
	waiting bool // the decoder goroutine is blocked for input with pending empty
	done    bool // the decoder goroutine has exited
	err     error
}

// newPushDecoder starts decoding codings (in the order applied); close releases the goroutine.
func newPushDecoder(codings []string, out func([]byte)) *pushDecoder {
	d := &pushDecoder{out: out}
	d.cond.L = &d.mu
	go d.run(codings)
	return d
}

func (d *pushDecoder) run(codings []string) {
	err := d.decode(codings)
	d.mu.Lock()
	d.done = true
	if err != nil && !errors.Is(err, io.EOF) {
		d.err = err
	}
	d.pending = nil
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
			zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
			if err != nil {
				return fmt.Errorf("zstd: %w", err)
			}
			defer zr.Close() // at the end of the decode, like every reader of the chain
			r = zr
		}
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			d.out(buf[:n])
		}
		if err != nil {
			return err
		}
	}
}

// pushSource is the decoder goroutine's view of the pushed bytes.
type pushSource pushDecoder

func (s *pushSource) Read(p []byte) (int, error) {
	d := (*pushDecoder)(s)
	d.mu.Lock()
	defer d.mu.Unlock()
	for len(d.pending) == 0 && !d.closed {
		d.waiting = true
		d.cond.Broadcast()
		d.cond.Wait()
	}
	d.waiting = false
	if len(d.pending) == 0 {
		return 0, io.EOF
	}
	n := copy(p, d.pending)
	d.pending = d.pending[n:]
	return n, nil
}

// push hands p (copied) to the decoder and waits until it was consumed and decoded as far as possible.
func (d *pushDecoder) push(p []byte) {
	if len(p) == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done || d.closed {
		return
	}
	d.pending = append(d.pending, p...)
	d.cond.Broadcast()
	for !d.done && (!d.waiting || len(d.pending) > 0) {
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
// any (a truncated or corrupt body); the bytes decoded before it were handed to out. Idempotent.
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
