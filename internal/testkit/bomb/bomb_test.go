package bomb

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestZerosDecodes: every coding's body decodes, with the reference decoders, to exactly the zeros
// asked for, and is far smaller.
func TestZerosDecodes(t *testing.T) {
	for _, coding := range Codings {
		decoded := 4 << 20 // four segments: the repeated one is copied
		if coding == "br" {
			decoded = 3 * brSegment
		}
		t.Run(coding, func(t *testing.T) {
			body, err := Zeros(coding, int64(decoded))
			require.NoError(t, err)
			assert.Less(t, len(body), decoded/500, "a bomb is small")
			var r io.Reader
			switch coding {
			case "gzip":
				r, err = gzip.NewReader(bytes.NewReader(body))
			case "deflate":
				r, err = zlib.NewReader(bytes.NewReader(body))
			case "br":
				r = brotli.NewReader(bytes.NewReader(body))
			case "zstd":
				var zr *zstd.Decoder
				zr, err = zstd.NewReader(bytes.NewReader(body))
				if err == nil {
					defer zr.Close()
				}
				r = zr
			}
			require.NoError(t, err)
			var n int64
			buf := make([]byte, 1<<20)
			for {
				k, err := r.Read(buf)
				for _, c := range buf[:k] {
					if c != 0 {
						t.Fatalf("a non-zero byte at %d", n)
					}
				}
				n += int64(k)
				if err == io.EOF {
					break
				}
				require.NoError(t, err)
			}
			assert.EqualValues(t, decoded, n)
		})
	}
}

// TestAttackSizes: the bodies of issue #14's attacks have the attacks' sizes.
func TestAttackSizes(t *testing.T) {
	br, err := Zeros("br", 4<<30)
	require.NoError(t, err)
	t.Logf("br, 4 GiB decoded: %d bytes", len(br))
	assert.Less(t, len(br), 64<<10)
	gz, err := Zeros("gzip", 1<<30)
	require.NoError(t, err)
	t.Logf("gzip, 1 GiB decoded: %d bytes", len(gz))
	assert.InDelta(t, 1<<20, len(gz), 1<<18)
}

func TestZerosRefusesBadSizes(t *testing.T) {
	for _, n := range []int64{0, -1, 1000} {
		_, err := Zeros("gzip", n)
		assert.Error(t, err, n)
	}
	_, err := Zeros("compress", 1<<20)
	assert.Error(t, err)
}
