package ojson

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// plainByte is the byte-wise definition plainWord must agree with.
func plainByte(c byte) bool { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' }

func wordOf(b [8]byte) uint64 { return load8(b[:], 0) }

func TestPlainWordEveryByteAtEveryPosition(t *testing.T) {
	for pos := range 8 {
		for c := range 256 {
			w := [8]byte{'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'}
			w[pos] = byte(c)
			assert.Equal(t, plainByte(byte(c)), plainWord(wordOf(w)), "byte %#x at %d", c, pos)
		}
	}
}

func TestPlainWordRandomWords(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	// Bytes near the boundaries, where borrows could mislead a word test.
	pool := []byte{0x00, 0x01, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x5b, 0x5c, 0x5d, 0x7e, 0x7f, 0x80, 0x81, 0xa2, 0xdc, 0xff, 'a', ' '}
	for range 200000 {
		var w [8]byte
		want := true
		for i := range w {
			w[i] = pool[r.IntN(len(pool))]
			want = want && plainByte(w[i])
		}
		require.Equal(t, want, plainWord(wordOf(w)), "word % x", w[:])
	}
}

func TestSkipPlain(t *testing.T) {
	tests := []struct {
		name string
		in   string
		from int
		want int
	}{
		{name: "empty", in: "", want: 0},
		{name: "short tail left to the byte loop", in: "abcdefg", want: 0},
		{name: "all plain", in: "abcdefghijklmnop", want: 16},
		{name: "stops at the word holding a quote", in: "abcdefgh" + `ijk"mnop` + "qrstuvwx", want: 8},
		{name: "stops at non-ASCII", in: "abcdefghijklmnopé_______", want: 16},
		{name: "from an offset", in: "\nbcdefghijklmnopq", from: 1, want: 17},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, skipPlain([]byte(tt.in), tt.from))
			assert.Equal(t, tt.want, skipPlain(tt.in, tt.from), "string")
		})
	}
}
