package growbuf

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppend(t *testing.T) {
	tests := []struct {
		name    string
		dst     []byte
		p       []byte
		want    string
		wantCap int // 0: not checked
	}{
		{name: "nil and empty", dst: nil, p: nil, want: ""},
		{name: "first allocation", dst: nil, p: []byte("abc"), want: "abc", wantCap: minCap},
		{name: "fits", dst: append(make([]byte, 0, 8), "ab"...), p: []byte("cd"), want: "abcd", wantCap: 8},
		{name: "doubles", dst: bytes.Repeat([]byte("x"), minCap), p: []byte("y"), want: string(bytes.Repeat([]byte("x"), minCap)) + "y", wantCap: 2 * minCap},
		{name: "large piece", dst: nil, p: bytes.Repeat([]byte("z"), 3*minCap), want: string(bytes.Repeat([]byte("z"), 3*minCap)), wantCap: 3 * minCap},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Append(tt.dst, tt.p)
			assert.Equal(t, tt.want, string(got))
			if tt.wantCap > 0 {
				assert.Equal(t, tt.wantCap, cap(got))
			}
		})
	}
}

func TestAppendAccumulates(t *testing.T) {
	var buf, want []byte
	grows := 0
	piece := bytes.Repeat([]byte("0123456789abcdef"), 1024) // 16 KiB
	for i := range 64 {
		piece[0] = byte(i)
		before := cap(buf)
		buf = Append(buf, piece)
		want = append(want, piece...)
		if cap(buf) != before {
			grows++
		}
	}
	require.Equal(t, want, buf)
	assert.LessOrEqual(t, grows, 8, "1 MiB in 16 KiB pieces: doubling from 16 KiB takes 7 steps")
	assert.Less(t, cap(buf), 2*len(buf)+1)
}

func BenchmarkAppend1MiB(b *testing.B) {
	piece := bytes.Repeat([]byte("x"), 16<<10)
	b.ReportAllocs()
	b.SetBytes(1 << 20)
	for b.Loop() {
		var buf []byte
		for range 64 {
			buf = Append(buf, piece)
		}
	}
}

func BenchmarkBuiltinAppend1MiB(b *testing.B) {
	piece := bytes.Repeat([]byte("x"), 16<<10)
	b.ReportAllocs()
	b.SetBytes(1 << 20)
	for b.Loop() {
		var buf []byte
		for range 64 {
			buf = append(buf, piece...)
		}
	}
}

// TestAppendToward: a growth that would double past the expected size stops at it; a wrong size
// (too small for the data, or beyond a doubling) changes nothing, and size 0 is Append.
func TestAppendToward(t *testing.T) {
	full := func(n int) []byte { return bytes.Repeat([]byte("x"), n) }
	tests := []struct {
		name    string
		dst     []byte
		p       []byte
		size    int
		wantCap int
	}{
		{name: "grows to the size", dst: full(1024), p: full(100), size: 1500, wantCap: 1500},
		{name: "fits: no growth", dst: append(make([]byte, 0, 2048), full(1024)...), p: full(100), size: 1500, wantCap: 2048},
		{name: "size too small for the data: doubles", dst: full(1024), p: full(600), size: 1500, wantCap: 2048},
		{name: "size beyond a doubling: doubles", dst: full(1024), p: full(100), size: 5000, wantCap: 2048},
		{name: "no size: Append", dst: full(1024), p: full(100), size: 0, wantCap: 2048},
		{name: "first allocation", dst: nil, p: full(10), size: 300, wantCap: minCap},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := string(tt.dst) + string(tt.p)
			got := AppendToward(tt.dst, tt.p, tt.size)
			assert.Equal(t, want, string(got))
			assert.Equal(t, tt.wantCap, cap(got))
		})
	}
}
