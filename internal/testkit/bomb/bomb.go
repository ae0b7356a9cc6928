// Package bomb makes decompression bombs for the tests of the capture bounds (SPEC §0 D15): small
// Content-Encoding bodies (gzip, deflate, br, zstd) that decode to a given number of zero bytes, and
// the body sizes of the attacks of issue #14 (a 6.6 KB brotli body decoding to 4 GiB, a ~1 MiB gzip
// body decoding to 1 GiB). The bodies are built in milliseconds: the compressor's output for one
// segment of zeros is repeated, since once the window holds only zeros every further segment
// compresses to the very same bytes.
package bomb

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"io"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"
)

// Codings are the Content-Encoding values Zeros makes, in the order of SPEC §0 D4.
var Codings = []string{"gzip", "deflate", "br", "zstd"}

// segment is how many zero bytes one repeated compressed segment decodes to; brSegment is brotli's
// when the size allows (a brotli meta-block holds at most 16 MiB).
const (
	segment   = 1 << 20
	brSegment = 16 << 20
)

// Zeros returns a body in Content-Encoding coding that decodes to decoded zero bytes (decoded must
// be a positive multiple of 1 MiB). deflate is zlib-wrapped, as HTTP's deflate is.
func Zeros(coding string, decoded int64) ([]byte, error) {
	if decoded <= 0 || decoded%segment != 0 {
		return nil, fmt.Errorf("bomb: decoded size %d is not a positive multiple of %d", decoded, segment)
	}
	n := int(decoded / segment)
	switch coding {
	case "gzip":
		body, err := deflateZeros(n, 9)
		if err != nil {
			return nil, err
		}
		out := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255}
		out = append(out, body...)
		out = binary.LittleEndian.AppendUint32(out, zerosChecksum(crc32.NewIEEE(), decoded))
		return binary.LittleEndian.AppendUint32(out, uint32(decoded)), nil
	case "deflate":
		body, err := deflateZeros(n, 9)
		if err != nil {
			return nil, err
		}
		out := append([]byte{0x78, 0xda}, body...)
		// Adler-32 of zeros: the sum A stays 1, the sum B adds A once per byte.
		return binary.BigEndian.AppendUint32(out, uint32(decoded%65521)<<16|1), nil
	case "br":
		size := segment
		if decoded%brSegment == 0 {
			size = brSegment // fewer, longer segments: the 6.6 KB of the attack for 4 GiB
		}
		return repeatSegments(int(decoded/int64(size)), size, func(w io.Writer) segmentWriter {
			return brotli.NewWriterOptions(w, brotli.WriterOptions{Quality: 5, LGWin: 24})
		})
	case "zstd":
		var b bytes.Buffer
		zw, err := zstd.NewWriter(&b, zstd.WithWindowSize(1<<20), zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		zeros := make([]byte, segment)
		for range n {
			if _, err := zw.Write(zeros); err != nil {
				return nil, err
			}
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
	return nil, fmt.Errorf("bomb: unknown coding %q", coding)
}

// segmentWriter is a compressor that can end a segment on a byte boundary (Flush) and the stream.
type segmentWriter interface {
	io.Writer
	Flush() error
	Close() error
}

// deflateZeros returns the raw deflate stream of n segments of zeros.
func deflateZeros(n, level int) ([]byte, error) {
	return repeatSegments(n, segment, func(w io.Writer) segmentWriter {
		fw, _ := flate.NewWriter(w, level) // level is a valid constant
		return fw
	})
}

// repeatSegments compresses n segments of size zeros: the first two and the end for real, the repeated
// steady-state segment (the second) copied for the others. It checks that the third segment
// compresses like the second, which is what makes the copies valid.
func repeatSegments(n, size int, newWriter func(io.Writer) segmentWriter) ([]byte, error) {
	var b bytes.Buffer
	w := newWriter(&b)
	zeros := make([]byte, size)
	cut := func() ([]byte, error) {
		if _, err := w.Write(zeros); err != nil {
			return nil, err
		}
		if err := w.Flush(); err != nil {
			return nil, err
		}
		seg := bytes.Clone(b.Bytes())
		b.Reset()
		return seg, nil
	}
	var segs [3][]byte
	for i := range segs {
		s, err := cut()
		if err != nil {
			return nil, err
		}
		segs[i] = s
	}
	if !bytes.Equal(segs[1], segs[2]) {
		return nil, fmt.Errorf("bomb: the compressor's steady-state segments differ (%d and %d bytes)", len(segs[1]), len(segs[2]))
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	out := append([]byte(nil), segs[0]...)
	for range n - 1 {
		out = append(out, segs[1]...)
	}
	return append(out, b.Bytes()...), nil
}

// zerosChecksum returns h's 32-bit checksum of n zero bytes.
func zerosChecksum(h hash.Hash32, n int64) uint32 {
	zeros := make([]byte, segment)
	for ; n > 0; n -= segment {
		_, _ = h.Write(zeros[:min(n, segment)])
	}
	return h.Sum32()
}
