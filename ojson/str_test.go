package ojson

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// This file checks parser.str, whose fast paths (substrings for strings without escapes, one
// presized buffer and whole plain runs otherwise) must give exactly what the byte-by-byte
// reference below gives: the same string, the same end offset and the same error at the same
// offset, in every mode.

// strSlow is the reference for str: the implementation before the fast paths, which decodes byte
// by byte.
func (p *parser) strSlow() (string, error) {
	p.pos++ // '"'
	// Fast path: no escapes and valid UTF-8 up to the closing quote.
	i := p.pos
	for i < len(p.data) {
		c := p.data[i]
		if c == '"' || c == '\\' || c < 0x20 {
			break
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(p.data[i:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		i += size
	}
	if i < len(p.data) && p.data[i] == '"' {
		from := p.pos
		p.pos = i + 1
		return p.src[from:i], nil
	}
	// Slow path.
	buf := append(make([]byte, 0, i-p.pos+16), p.data[p.pos:i]...)
	p.pos = i
	for {
		if p.pos >= len(p.data) {
			return "", p.fail("unexpected end of input in string")
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(buf), nil
		case c < 0x20:
			return "", p.fail(fmt.Sprintf("control character %#02x in string", c))
		case c == '\\':
			var err error
			buf, err = p.escapeSlow(buf)
			if err != nil {
				return "", err
			}
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size == 1 {
				if p.mode != modePython {
					return "", p.fail("invalid UTF-8 in string")
				}
				n := invalidLen(p.data[p.pos:])
				buf = utf8.AppendRune(buf, utf8.RuneError)
				p.pos += n
				continue
			}
			buf = append(buf, p.data[p.pos:p.pos+size]...)
			p.pos += size
		}
	}
}

// escapeSlow is the reference for escape: it decodes one backslash escape at p.pos, appending its UTF-8 to buf.
func (p *parser) escapeSlow(buf []byte) ([]byte, error) {
	if p.pos+1 >= len(p.data) {
		return buf, p.fail("unexpected end of input in string escape")
	}
	c := p.data[p.pos+1]
	var r byte
	switch c {
	case '"', '\\', '/':
		r = c
	case 'b':
		r = '\b'
	case 'f':
		r = '\f'
	case 'n':
		r = '\n'
	case 'r':
		r = '\r'
	case 't':
		r = '\t'
	case 'u':
		return p.unicodeEscapeSlow(buf)
	default:
		p.pos++
		return buf, p.fail(fmt.Sprintf("invalid escape '\\%c' in string", c))
	}
	p.pos += 2
	return append(buf, r), nil
}

func (p *parser) unicodeEscapeSlow(buf []byte) ([]byte, error) {
	r, ok := p.hex4(p.pos + 2)
	if !ok {
		return buf, p.fail("invalid \\u escape in string")
	}
	switch {
	case utf16.IsSurrogate(r) && r < 0xDC00:
		// High surrogate: must be followed by \u low surrogate.
		if p.pos+7 < len(p.data) && p.data[p.pos+6] == '\\' && p.data[p.pos+7] == 'u' {
			if r2, ok := p.hex4(p.pos + 8); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
				p.pos += 12
				return utf8.AppendRune(buf, utf16.DecodeRune(r, r2)), nil
			}
		}
		if p.mode != modePython {
			return buf, p.fail("lone surrogate escape in string")
		}
		p.pos += 6
		return utf8.AppendRune(buf, utf8.RuneError), nil
	case utf16.IsSurrogate(r):
		if p.mode != modePython {
			return buf, p.fail("lone surrogate escape in string")
		}
		p.pos += 6
		return utf8.AppendRune(buf, utf8.RuneError), nil
	}
	p.pos += 6
	return utf8.AppendRune(buf, r), nil
}

var strModes = []struct {
	name string
	mode mode
}{{"strict", modeStrict}, {"python", modePython}}

// checkStrMatchesSlow reads the string at the start of data (which must start with '"') with str
// and with strSlow in every mode and fails on any difference.
func checkStrMatchesSlow(t *testing.T, data []byte) {
	t.Helper()
	for _, m := range strModes {
		fast := parser{data: data, src: string(data), mode: m.mode}
		slow := parser{data: data, src: string(data), mode: m.mode}
		gotS, gotErr := fast.str()
		wantS, wantErr := slow.strSlow()
		if gotS != wantS || fast.pos != slow.pos || !sameSyntaxError(gotErr, wantErr) {
			t.Fatalf("%s mode, input %q:\nstr     = %q, pos %d, err %v\nstrSlow = %q, pos %d, err %v",
				m.name, data, gotS, fast.pos, gotErr, wantS, slow.pos, wantErr)
		}
	}
}

func sameSyntaxError(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var sa, sb *SyntaxError
	return errors.As(a, &sa) && errors.As(b, &sb) && *sa == *sb
}

// strPieces are the fragments the random strings are made of: plain ASCII and multibyte text,
// every escape, surrogate pairs and lone surrogates, invalid and truncated UTF-8, control
// characters, quotes and backslashes at the end of the input.
var strPieces = []string{
	"a", "hello world ", "é", "東京", "🙂", "\u2028", "\x7f", `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`,
	`\u00e9`, `\u0000`, `\u001F`, `\uFFFF`, `\ud83d\ude42`, `\ud800`, `\udc00`, `\ud800\u0041`, `\ud800\ud800`,
	`\u12`, `\x`, `\`, "\xff", "\xe2\x82", "\xed\xa0\x80", "\xf0\x9f\x99", "\xc0\xaf", "\t", "\x00", "\n", `"`,
}

func randomStringInput(r *rand.Rand) []byte {
	var b strings.Builder
	b.WriteByte('"')
	for range r.IntN(12) {
		b.WriteString(strPieces[r.IntN(len(strPieces))])
	}
	if r.IntN(4) > 0 {
		b.WriteByte('"')
	}
	if r.IntN(3) == 0 {
		b.WriteString(`,"next"`)
	}
	return []byte(b.String())
}

func TestStrMatchesSlowPath(t *testing.T) {
	t.Run("table", func(t *testing.T) {
		for _, s := range []string{
			`""`, `"plain"`, `"a\nb"`, `"\u00e9\ud83d\ude42"`, "\"a\xffb\"", "\"\xed\xa0\x80\"", `"\ud800"`,
			`"abc`, `"ab\`, `"\u12"`, "\"a\tb\"", `"` + strings.Repeat("x", 5000) + `\n` + strings.Repeat("y", 5000) + `"`,
			"\"\xff\xff\xff\xff\xff\"", // modePython: each byte becomes 3 bytes of U+FFFD
		} {
			checkStrMatchesSlow(t, []byte(s))
		}
	})
	t.Run("random", func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		for range 50_000 {
			checkStrMatchesSlow(t, randomStringInput(r))
		}
	})
}

func FuzzStrMatchesSlowPath(f *testing.F) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 32 {
		f.Add(randomStringInput(r)[1:])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkStrMatchesSlow(t, append([]byte{'"'}, data...))
	})
}

// TestStrAllocations checks the allocation counts the fast paths exist for.
func TestStrAllocations(t *testing.T) {
	escaped := []byte(`{"text":"` + strings.Repeat(`a long line\n`, 400) + `"}`)
	text := string(escaped)
	buf := make([]byte, 0, len(escaped))
	tests := []struct {
		name string
		run  func()
		max  float64
	}{
		{"Compact of escaped text", func() { _, _ = Compact(make([]byte, 0, len(escaped)), escaped) }, 1},
		{"CompactString into a buffer that fits", func() { _, _ = CompactString(buf[:0], text, MaxDepth) }, 0},
		{"Valid", func() { _ = Valid(escaped) }, 0},
		{"Parse of escaped text: input copy, decoded string, member stack, members", func() { _, _ = Parse(escaped) }, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.LessOrEqual(t, testing.AllocsPerRun(50, tc.run), tc.max)
		})
	}
	v, err := Parse(escaped)
	require.NoError(t, err)
	s, _ := mustGet(t, v, "text").AsString()
	assert.Equal(t, strings.Repeat("a long line\n", 400), s)
}
