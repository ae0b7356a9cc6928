package stream

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rec is a copied Event, comparable across decoders.
type rec struct {
	Name      string
	HasName   bool
	Data      string
	DataLines int
	Overflow  bool
	AtEOF     bool
}

func collect(out *[]rec) func(Event) {
	return func(ev Event) {
		*out = append(*out, rec{
			Name: string(ev.Name), HasName: ev.HasName, Data: string(ev.Data),
			DataLines: ev.DataLines, Overflow: ev.Overflow, AtEOF: ev.AtEOF,
		})
	}
}

// decodeAll feeds pieces to a fresh Decoder, closes it and returns the events.
func decodeAll(pieces [][]byte, opts ...Option) []rec {
	var out []rec
	d := NewDecoder(collect(&out), opts...)
	for _, p := range pieces {
		d.Feed(p)
	}
	d.Close()
	return out
}

// referenceDecode is a deliberately naive framer over the whole input (WHATWG rules plus our
// two additions: events with only a name are dispatched, and Close dispatches the last event).
func referenceDecode(in []byte) []rec {
	s := string(in)
	s = strings.TrimPrefix(s, "\uFEFF")
	var lines []string
	var cur strings.Builder
	hasTail := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\r':
			lines = append(lines, cur.String())
			cur.Reset()
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			hasTail = false
		case '\n':
			lines = append(lines, cur.String())
			cur.Reset()
			hasTail = false
		default:
			cur.WriteByte(s[i])
			hasTail = true
		}
	}
	if hasTail {
		lines = append(lines, cur.String())
	}
	var out []rec
	var ev rec
	var data []string
	flush := func(eof bool) {
		if ev.HasName || len(data) > 0 {
			ev.Data = strings.Join(data, "\n")
			ev.DataLines = len(data)
			ev.AtEOF = eof
			out = append(out, ev)
		}
		ev, data = rec{}, nil
	}
	for _, l := range lines {
		if l == "" {
			flush(false)
			continue
		}
		if l[0] == ':' {
			continue
		}
		field, value, found := strings.Cut(l, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch field {
		case "event":
			ev.Name, ev.HasName = value, true
		case "data":
			data = append(data, value)
		}
	}
	flush(true)
	return out
}

func TestDecoderFraming(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []rec
	}{
		{"LF", "event: a\ndata: 1\n\n", []rec{{Name: "a", HasName: true, Data: "1", DataLines: 1}}},
		{"CRLF", "event: a\r\ndata: 1\r\n\r\n", []rec{{Name: "a", HasName: true, Data: "1", DataLines: 1}}},
		{"lone CR", "event: a\rdata: 1\r\r", []rec{{Name: "a", HasName: true, Data: "1", DataLines: 1}}},
		{"no space after colon", "data:x\n\n", []rec{{Data: "x", DataLines: 1}}},
		{"only one space dropped", "data:  x \n\n", []rec{{Data: " x ", DataLines: 1}}},
		{"tab kept", "event:\tx\n\n", []rec{{Name: "\tx", HasName: true}}},
		{"data lines joined", "data: a\ndata: b\ndata\n\n", []rec{{Data: "a\nb\n", DataLines: 3}}},
		{"comment ignored", ": keepalive\n\n: x\ndata: y\n\n", []rec{{Data: "y", DataLines: 1}}},
		{"id and retry ignored", "id: 7\nretry: 10\n\ndata: z\nid: 8\n\n", []rec{{Data: "z", DataLines: 1}}},
		{"field without colon", "event\n\n", []rec{{HasName: true}}},
		{"last event name wins", "event: a\nevent: b\n\n", []rec{{Name: "b", HasName: true}}},
		{"U+2028 U+2029 U+0085 do not split", "data: a\u2028b\u2029c\u0085d\n\n", []rec{{Data: "a\u2028b\u2029c\u0085d", DataLines: 1}}},
		{"form feed and vertical tab do not split", "data: a\fb\vc\x1cd\n\n", []rec{{Data: "a\fb\vc\x1cd", DataLines: 1}}},
		{"leading BOM dropped", "\uFEFFdata: x\n\n", []rec{{Data: "x", DataLines: 1}}},
		{"second BOM kept", "\uFEFF\uFEFFdata: x\n\n", nil},
		{"final event without blank line at close", "data: a\n\ndata: b\n", []rec{{Data: "a", DataLines: 1}, {Data: "b", DataLines: 1, AtEOF: true}}},
		{"final line without terminator at close", "data: b", []rec{{Data: "b", DataLines: 1, AtEOF: true}}},
		{"empty body", "", nil},
		{"blank lines only", "\n\r\n\r\n", nil},
		{"uppercase field ignored", "Event: x\nDATA: y\n\n", nil},
		{"CR then LF is one line end", "data: a\r\n\r\ndata: b\n\r\n", []rec{{Data: "a", DataLines: 1}, {Data: "b", DataLines: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decodeAll([][]byte{[]byte(tt.in)})
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.want, referenceDecode([]byte(tt.in)), "reference framer disagrees")
			for k := 0; k <= len(tt.in); k++ {
				assert.Equal(t, tt.want, decodeAll([][]byte{[]byte(tt.in[:k]), []byte(tt.in[k:])}), "split at %d", k)
			}
			assert.Equal(t, tt.want, decodeAll(bytePieces([]byte(tt.in))), "byte by byte")
		})
	}
}

func bytePieces(b []byte) [][]byte {
	out := make([][]byte, len(b))
	for i := range b {
		out[i] = b[i : i+1]
	}
	return out
}

func TestDecoderDispatchesOnBlankLine(t *testing.T) {
	var out []rec
	d := NewDecoder(collect(&out))
	d.Feed([]byte("event: message_stop\r"))
	assert.Empty(t, out, "the line is complete but the event is not")
	d.Feed([]byte("\n"))
	assert.Empty(t, out)
	d.Feed([]byte("\r"))
	require.Len(t, out, 1, "a lone CR ends the blank line at once")
	d.Feed([]byte("\n")) // the LF of that CRLF: no second blank line
	d.Feed([]byte("data: x\n\n"))
	require.Len(t, out, 2)
	assert.Equal(t, 2, d.Events())
}

func TestDecoderBOMSplit(t *testing.T) {
	tests := []struct {
		name   string
		pieces []string
		want   []rec
	}{
		{"split BOM", []string{"\xEF", "\xBB", "\xBFdata: x\n\n"}, []rec{{Data: "x", DataLines: 1}}},
		{"partial BOM is content", []string{"\xEF\xBB", "data: x\n\n"}, nil},
		{"partial BOM then close", []string{"\xEF"}, nil},
		{"partial BOM as field", []string{"\xEF\xBB", ": x\n\ndata: y\n\n"}, []rec{{Data: "y", DataLines: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pieces [][]byte
			for _, p := range tt.pieces {
				pieces = append(pieces, []byte(p))
			}
			assert.Equal(t, tt.want, decodeAll(pieces))
			assert.Equal(t, tt.want, referenceDecode([]byte(strings.Join(tt.pieces, ""))))
		})
	}
}

func TestDecoderBound(t *testing.T) {
	big := strings.Repeat("x", 100)
	tests := []struct {
		name     string
		in       string
		max      int
		want     []rec
		wantHits int
	}{
		{"within bound (the line counts whole)", "data: " + big + "\n\n", 106, []rec{{Data: big, DataLines: 1}}, 0},
		{"one line over bound", "event: e\ndata: " + big + "x\n\ndata: ok\n\n", 100,
			[]rec{{Name: "e", HasName: true, Overflow: true}, {Data: "ok", DataLines: 1}}, 1},
		{"joined data over bound", "data: " + big[:60] + "\ndata: " + big[:60] + "\nevent: e\n\ndata: ok\n\n", 100,
			[]rec{{Name: "e", HasName: true, Overflow: true}, {Data: "ok", DataLines: 1}}, 1},
		{"over-long comment counted", ": " + big + big + "\n\ndata: ok\n\n", 100,
			[]rec{{Overflow: true}, {Data: "ok", DataLines: 1}}, 1},
		{"over-long name", "event: " + big + big + "\n\n", 100, []rec{{Overflow: true}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k := 0; k <= len(tt.in); k++ {
				var out []rec
				d := NewDecoder(collect(&out), WithMaxEventBytes(tt.max))
				d.Feed([]byte(tt.in[:k]))
				d.Feed([]byte(tt.in[k:]))
				d.Close()
				assert.Equal(t, tt.want, out, "split at %d", k)
				assert.Equal(t, tt.wantHits, d.BoundHits(), "split at %d", k)
			}
		})
	}
}

func TestDecoderBoundLargeLine(t *testing.T) {
	// A 3 MiB data line fed in 1 KiB pieces with a 1 MiB bound: counted, memory released,
	// and the next event decodes.
	line := bytes.Repeat([]byte("a"), 3<<20)
	in := append(append([]byte("data: "), line...), "\n\ndata: next\n\n"...)
	var out []rec
	d := NewDecoder(collect(&out), WithMaxEventBytes(1<<20))
	for len(in) > 0 {
		n := min(1024, len(in))
		d.Feed(in[:n])
		in = in[n:]
		assert.LessOrEqual(t, d.pending(), 1<<20)
	}
	d.Close()
	require.Len(t, out, 2)
	assert.True(t, out[0].Overflow)
	assert.Equal(t, "next", out[1].Data)
	assert.Equal(t, 1, d.BoundHits())
}

func TestDecoderNoLineLimit(t *testing.T) {
	line := bytes.Repeat([]byte("b"), 5<<20) // far above bufio.Scanner's defaults
	in := append(append([]byte("data: "), line...), "\n\n"...)
	var out []rec
	d := NewDecoder(collect(&out))
	for len(in) > 0 {
		n := min(7777, len(in))
		d.Feed(in[:n])
		in = in[n:]
	}
	d.Close()
	require.Len(t, out, 1)
	assert.Equal(t, len(line), len(out[0].Data))
	assert.False(t, out[0].Overflow)
}

func TestDecoderLifecycle(t *testing.T) {
	var out []rec
	d := NewDecoder(collect(&out))
	d.Feed([]byte("data: a"))
	d.Close()
	d.Close()
	d.Feed([]byte("\n\ndata: b\n\n"))
	d.Close()
	assert.Equal(t, []rec{{Data: "a", DataLines: 1, AtEOF: true}}, out)
}

func TestWithMaxEventBytesIgnoresNonPositive(t *testing.T) {
	assert.Equal(t, DefaultMaxEventBytes, newConfig([]Option{WithMaxEventBytes(0), nil}).maxEventBytes)
	assert.Equal(t, DefaultMaxEventBytes, newConfig([]Option{WithMaxEventBytes(-5)}).maxEventBytes)
	assert.Equal(t, 10, newConfig([]Option{WithMaxEventBytes(10)}).maxEventBytes)
}

// FuzzDecoder checks that pieces never panic and that the framer, fed in pieces chosen by the
// fuzzer, agrees with the naive whole-input reference.
func FuzzDecoder(f *testing.F) {
	seeds := []string{
		"event: a\ndata: 1\n\n", "data: x\r\n\r\n", "data: y\r\r", ": c\n\n", "\uFEFFdata: z\n\n",
		"data: a\ndata: b\n", "event\n\ndata\r\n\r", "\xEF\xBB", "data: [DONE]\n\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s), uint64(0x9e3779b97f4a7c15))
	}
	f.Fuzz(func(t *testing.T, in []byte, cuts uint64) {
		want := referenceDecode(in)
		var pieces [][]byte
		rest := in
		for c := cuts; len(rest) > 0; c = c>>3 | c<<61 {
			n := int(c % 8)
			if n == 0 {
				pieces = append(pieces, nil) // empty pieces are allowed
				n = 1
			}
			n = min(n, len(rest))
			pieces = append(pieces, rest[:n])
			rest = rest[n:]
		}
		got := decodeAll(pieces)
		if !equalRecs(want, got) {
			t.Fatalf("pieces %q: got %+v want %+v", pieces, got, want)
		}
		// Capture never panics on any dialect either.
		for _, dia := range []string{DialectResponses, DialectChat, DialectMessages} {
			c, err := NewCapture(dia, WithMaxEventBytes(16))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pieces {
				c.Feed(p)
			}
			c.Close(true)
			c.Response()
		}
	})
}

func equalRecs(a, b []rec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestDecoderNilHandle: a nil handle drops the events, counted, instead of panicking.
func TestDecoderNilHandle(t *testing.T) {
	d := NewDecoder(nil)
	d.Feed([]byte("data: a\n\ndata: b\n\n"))
	assert.Equal(t, 2, d.Events())
}
