package ojson

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// This file checks the pieces a long string is written in (AppendStringBody, CutUTF8) and the
// compactness check that lets a compact payload be copied in pieces (CheckCompactString).

// bodyUnits are the building blocks of the random strings below: ASCII, the escaped bytes, DEL,
// 2/3/4-byte runes, U+2028, U+FFFD itself, and ill-formed UTF-8 (lone continuation bytes, bytes that
// never start a sequence, truncated sequences, surrogates, overlongs, code points past U+10FFFF).
var bodyUnits = []string{
	"a", "Z", " ", "0", `"`, `\`, "/", "\n", "\r", "\t", "\b", "\f", "\x00", "\x01", "\x1f", "\x7f",
	"é", "ß", "東", "京", "\u2028", "\ufffd", "🙂", "😀", "\U0010ffff",
	"\x80", "\xbf", "\xc0", "\xc1", "\xf5", "\xff", "\xc3", "\xe6\x97", "\xf0\x9f\x98", "\xf0\x9f",
	"\xed\xa0\x80", "\xed\xbf\xbf", "\xc0\xaf", "\xe0\x80\xaf", "\xf4\x90\x80\x80", "\xf8\x88\x80\x80\x80",
}

// randomBody returns a string of up to n units of bodyUnits.
func randomBody(r *rand.Rand, n int) string {
	var b strings.Builder
	for range r.IntN(n + 1) {
		b.WriteString(bodyUnits[r.IntN(len(bodyUnits))])
	}
	return b.String()
}

// randomValidBody returns a valid UTF-8 string of up to n runes, mostly multibyte.
func randomValidBody(r *rand.Rand, n int) string {
	var b strings.Builder
	for range r.IntN(n + 1) {
		switch r.IntN(4) {
		case 0:
			b.WriteByte(byte(r.IntN(0x80)))
		case 1:
			b.WriteRune(rune(0x80 + r.IntN(0x800-0x80)))
		case 2:
			c := rune(0x800 + r.IntN(0x10000-0x800))
			if c >= 0xd800 && c < 0xe000 {
				c = 0xe000
			}
			b.WriteRune(c)
		default:
			b.WriteRune(rune(0x10000 + r.IntN(0x110000-0x10000)))
		}
	}
	return b.String()
}

func TestAppendStringBodyIsAppendStringWithoutQuotes(t *testing.T) {
	tests := []struct{ name, in string }{
		{"empty", ""},
		{"plain", "abc"},
		{"quote and backslash", `a"b\c`},
		{"short escapes", "\b\f\n\r\t"},
		{"other controls", "\x00\x01\x1f"},
		{"DEL and U+2028 raw", "\x7f\u2028\u2029"},
		{"non-ASCII raw", "Grüß 東京 🙂"},
		{"invalid UTF-8", "a\xffb\xe2\x82"},
		{"truncated sequence at the end", "abc\xf0\x9f\x98"},
		{"lone continuation bytes", "\x80\x80\x80\x80\x80"},
		{"surrogate and overlong", "\xed\xa0\x80\xc0\xaf"},
		{"long plain run", strings.Repeat("x", 70_000)},
		{"long escaped run", strings.Repeat("\"\n\x00", 10_000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := string(AppendString(nil, tt.in))
			got := `"` + string(AppendStringBody(nil, tt.in)) + `"`
			require.Equal(t, want, got)
			prefixed := AppendStringBody([]byte("keep:"), tt.in)
			assert.Equal(t, "keep:"+want[1:len(want)-1], string(prefixed), "appends to dst")
		})
	}
	t.Run("random", func(t *testing.T) {
		r := rand.New(rand.NewPCG(21, 22))
		for range 20_000 {
			s := randomBody(r, 24)
			require.Equal(t, string(AppendString(nil, s)), `"`+string(AppendStringBody(nil, s))+`"`, "%q", s)
		}
	})
}

// checkCut checks CutUTF8(s, max) for one max: n is within [max-3, max] (or len(s) when max >=
// len(s)), and the bodies of s[:n] and s[n:] together are the body of s.
func checkCut(t *testing.T, s string, max int, whole []byte) {
	t.Helper()
	n := CutUTF8(s, max)
	if max >= len(s) {
		require.Equal(t, len(s), n, "max %d >= len %d of %q", max, len(s), s)
		return
	}
	require.LessOrEqual(t, n, max, "%q max %d", s, max)
	require.GreaterOrEqual(t, n, max-(utf8.UTFMax-1), "%q max %d", s, max)
	require.GreaterOrEqual(t, n, 0, "%q max %d", s, max)
	got := AppendStringBody(AppendStringBody(nil, s[:n]), s[n:])
	require.Equal(t, string(whole), string(got), "%q cut at %d (max %d)", s, n, max)
}

func TestCutUTF8(t *testing.T) {
	tests := []struct {
		name string
		s    string
		max  int
		want int
	}{
		{"max past the end", "abc", 10, 3},
		{"max at the end", "abc", 3, 3},
		{"empty string", "", 0, 0},
		{"ASCII", "abcdef", 4, 4},
		{"max zero", "abc", 0, 0},
		{"before a 2-byte rune", "ab\u00e9", 2, 2},
		{"inside a 2-byte rune", "ab\u00e9", 3, 2},
		{"inside a 3-byte rune, 1 in", "a東", 2, 1},
		{"inside a 3-byte rune, 2 in", "a東", 3, 1},
		{"inside a 4-byte rune, 1 in", "a🙂b", 2, 1},
		{"inside a 4-byte rune, 2 in", "a🙂b", 3, 1},
		{"inside a 4-byte rune, 3 in", "a🙂b", 4, 1},
		{"after a 4-byte rune", "a🙂b", 5, 5},
		{"rune at the start", "🙂", 3, 0},
		{"ill-formed: four continuation bytes", "a\x80\x80\x80\x80\x80", 5, 5},
		{"ill-formed: truncated 3-byte then ASCII", "\xe6\x97ab", 2, 2},
		{"ill-formed: lead byte before max", "ab\xff", 2, 2},
		{"ill-formed: overlong pair", "a\xc0\xaf", 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, CutUTF8(tt.s, tt.max))
			checkCut(t, tt.s, tt.max, AppendStringBody(nil, tt.s))
		})
	}
	t.Run("every max of random strings keeps the body", func(t *testing.T) {
		r := rand.New(rand.NewPCG(23, 24))
		for range 3_000 {
			s := randomBody(r, 40)
			whole := AppendStringBody(nil, s)
			for max := 0; max <= len(s)+1; max++ {
				checkCut(t, s, max, whole)
			}
		}
	})
	t.Run("valid UTF-8 is cut at the last rune start", func(t *testing.T) {
		r := rand.New(rand.NewPCG(25, 26))
		for range 3_000 {
			s := randomValidBody(r, 30)
			whole := AppendStringBody(nil, s)
			for max := 0; max < len(s); max++ {
				n := CutUTF8(s, max)
				want := max
				for want > 0 && !utf8.RuneStart(s[want]) {
					want--
				}
				require.Equal(t, want, n, "%q max %d", s, max)
				require.True(t, utf8.ValidString(s[:n]) && utf8.ValidString(s[n:]), "%q split at %d", s, n)
				checkCut(t, s, max, whole)
			}
		}
	})
	t.Run("windows of a long string", func(t *testing.T) {
		// The way capture's line writer uses it: consecutive windows of a fixed size.
		r := rand.New(rand.NewPCG(27, 28))
		s := randomBody(r, 200_000)
		whole := AppendStringBody(nil, s)
		for _, window := range []int{4, 5, 7, 64, 1000, 32 << 10} {
			var got []byte
			for rest := s; len(rest) > 0; {
				n := CutUTF8(rest, window)
				require.Positive(t, n, "window %d never stalls", window)
				got = AppendStringBody(got, rest[:n])
				rest = rest[n:]
			}
			require.Equal(t, string(whole), string(got), "window %d", window)
		}
	})
}

func FuzzCutUTF8(f *testing.F) {
	for _, s := range []string{"", "abc", "a🙂b", "a\x80\x80\x80\x80\x80", "\xe6\x97ab", "東京\xff\"\n", "\xed\xa0\x80\xc0\xaf"} {
		f.Add(s, uint16(1))
	}
	f.Fuzz(func(t *testing.T, s string, max uint16) {
		whole := AppendStringBody(nil, s)
		m := int(max) % (len(s) + 2)
		n := CutUTF8(s, m)
		if m >= len(s) {
			if n != len(s) {
				t.Fatalf("CutUTF8(%q, %d) = %d, want len %d", s, m, n, len(s))
			}
			return
		}
		if n > m || n < 0 || n < m-(utf8.UTFMax-1) {
			t.Fatalf("CutUTF8(%q, %d) = %d, outside [max-3, max]", s, m, n)
		}
		if got := AppendStringBody(AppendStringBody(nil, s[:n]), s[n:]); string(got) != string(whole) {
			t.Fatalf("CutUTF8(%q, %d) = %d splits a sequence: %q + %q != %q",
				s, m, n, AppendStringBody(nil, s[:n]), AppendStringBody(nil, s[n:]), whole)
		}
		if utf8.ValidString(s) && !(utf8.ValidString(s[:n]) && utf8.ValidString(s[n:])) {
			t.Fatalf("CutUTF8(%q, %d) = %d splits a valid rune", s, m, n)
		}
	})
}

// checkCompactAgrees checks CheckCompactString against CompactString: the same error (type,
// offset, message), and compact exactly when CompactString gives back src unchanged.
func checkCompactAgrees(t *testing.T, src string, maxDepth int) (compact bool, err error) {
	t.Helper()
	requireSameCompaction(t, []byte(src), maxDepth)
	out, cerr := CompactString(nil, src, maxDepth)
	compact, err = CheckCompactString(src, maxDepth)
	if cerr != nil {
		require.Error(t, err, "%q: CompactString fails with %v", src, cerr)
		var se *SyntaxError
		require.ErrorAs(t, err, &se)
		require.Equal(t, cerr.Error(), err.Error(), "%q", src)
		require.False(t, compact, "%q: an invalid text is never compact", src)
		return compact, err
	}
	require.NoError(t, err, "%q", src)
	require.Equal(t, string(out) == src, compact, "%q compacts to %q", src, out)
	return compact, nil
}

func TestCheckCompactString(t *testing.T) {
	tests := []struct {
		name        string
		src         string
		maxDepth    int
		wantCompact bool
		wantErr     string // "" = valid
	}{
		{name: "compact object", src: `{"a":[1,2.5e3,"x y",true,null,{}],"b":"\n\u00e9"}`, maxDepth: 10, wantCompact: true},
		{name: "compact scalar", src: `"s p a c e s"`, maxDepth: 10, wantCompact: true},
		{name: "spaces inside strings only", src: `{"a b":" c\t"}`, maxDepth: 10, wantCompact: true},
		{name: "space after colon", src: `{"a": 1}`, maxDepth: 10},
		{name: "newline between members", src: "{\"a\":1,\n\"b\":2}", maxDepth: 10},
		{name: "tab in array", src: "[1,\t2]", maxDepth: 10},
		{name: "CR before closing brace", src: "{\"a\":1\r}", maxDepth: 10},
		{name: "space in empty object", src: "{ }", maxDepth: 10},
		{name: "leading space", src: ` {"a":1}`, maxDepth: 10},
		{name: "trailing newline", src: "{\"a\":1}\n", maxDepth: 10},
		{name: "depth at the limit", src: `[[{"a":[]}]]`, maxDepth: 4, wantCompact: true},
		{name: "too deep", src: `[[{"a":[]}]]`, maxDepth: 3, wantErr: "nesting too deep"},
		{name: "too deep, spaced", src: `[ [ { "a" : [ ] } ] ]`, maxDepth: 3, wantErr: "nesting too deep"},
		{name: "empty", src: "", maxDepth: 10, wantErr: "unexpected end of input"},
		{name: "only whitespace", src: "  ", maxDepth: 10, wantErr: "unexpected end of input"},
		{name: "trailing comma", src: `{"a":1,}`, maxDepth: 10, wantErr: "invalid character"},
		{name: "truncated", src: `{"a":[1,2`, maxDepth: 10, wantErr: "unexpected end of input"},
		{name: "two values", src: `{} {}`, maxDepth: 10, wantErr: "data after the top-level value"},
		{name: "NaN", src: `{"a":NaN}`, maxDepth: 10, wantErr: "invalid character"},
		{name: "raw control character in string", src: "{\"a\":\"x\ny\"}", maxDepth: 10, wantErr: "string"},
		{name: "invalid UTF-8 in string", src: "{\"a\":\"\xff\"}", maxDepth: 10, wantErr: "UTF-8"},
		{name: "lone surrogate escape", src: `{"a":"\ud800"}`, maxDepth: 10, wantErr: "surrogate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			compact, err := checkCompactAgrees(t, tt.src, tt.maxDepth)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantCompact, compact)
		})
	}
	t.Run("random documents", func(t *testing.T) {
		r := rand.New(rand.NewPCG(29, 30))
		compacts, spaced, invalid := 0, 0, 0
		for range 20_000 {
			src := randomJSONText(r)
			compact, err := checkCompactAgrees(t, src, 1+r.IntN(6))
			switch {
			case err != nil:
				invalid++
			case compact:
				compacts++
			default:
				spaced++
			}
		}
		assert.Positive(t, compacts, "the generator makes compact documents")
		assert.Positive(t, spaced, "the generator makes spaced documents")
		assert.Positive(t, invalid, "the generator makes invalid documents")
	})
	t.Run("large compact and spaced object", func(t *testing.T) {
		r := rand.New(rand.NewPCG(31, 32))
		var b strings.Builder
		b.WriteString(`{"text":`)
		b.Write(AppendString(nil, randomValidBody(r, 100_000)))
		b.WriteString(`,"n":[1,2,3]}`)
		compactSrc := b.String()
		compact, err := checkCompactAgrees(t, compactSrc, MaxDepth)
		require.NoError(t, err)
		assert.True(t, compact)
		spacedSrc := strings.Replace(compactSrc, `,"n":[1,2,3]}`, `, "n":[1,2,3]}`, 1)
		compact, err = checkCompactAgrees(t, spacedSrc, MaxDepth)
		require.NoError(t, err)
		assert.False(t, compact)
	})
}

// The pieces randomJSONText builds from: valid scalars, junk that breaks a document, whitespace.
var jsonScalars = []string{`1`, `-0.5e3`, `"s"`, `"a b"`, `"\n\u00e9"`, `true`, `null`, `""`, `"東"`}
var jsonJunk = []string{`,`, `:`, `}`, `]`, `NaN`, "\"\xff\"", `01`, `"\x`, "\"\x01\"", `tru`}
var jsonSpace = []string{" ", "\t", "\n", "\r", "  \n"}

// randomJSONText returns a random JSON text: mostly a valid value, with whitespace between tokens
// in some documents, and junk in a few.
func randomJSONText(r *rand.Rand) string {
	var b strings.Builder
	spaceRate := []int{0, 0, 4, 12}[r.IntN(4)] // 0: never
	junkRate := []int{0, 0, 0, 40}[r.IntN(4)]
	ws := func() {
		if spaceRate > 0 && r.IntN(spaceRate) == 0 {
			b.WriteString(jsonSpace[r.IntN(len(jsonSpace))])
		}
	}
	junk := func() {
		if junkRate > 0 && r.IntN(junkRate) == 0 {
			b.WriteString(jsonJunk[r.IntN(len(jsonJunk))])
		}
	}
	var value func(depth int)
	value = func(depth int) {
		ws()
		junk()
		switch k := r.IntN(6); {
		case k < 2 && depth < 8:
			b.WriteByte('{')
			for i := range r.IntN(4) {
				if i > 0 {
					ws()
					b.WriteByte(',')
				}
				ws()
				b.WriteString(`"k`)
				b.WriteByte(byte('a' + i))
				b.WriteByte('"')
				ws()
				b.WriteByte(':')
				value(depth + 1)
			}
			ws()
			b.WriteByte('}')
		case k < 4 && depth < 8:
			b.WriteByte('[')
			for i := range r.IntN(4) {
				if i > 0 {
					ws()
					b.WriteByte(',')
				}
				value(depth + 1)
			}
			ws()
			b.WriteByte(']')
		default:
			b.WriteString(jsonScalars[r.IntN(len(jsonScalars))])
		}
		junk()
		ws()
	}
	value(0)
	return b.String()
}

func FuzzCheckCompactString(f *testing.F) {
	r := rand.New(rand.NewPCG(33, 34))
	for range 32 {
		f.Add(randomJSONText(r), uint8(4))
	}
	f.Fuzz(func(t *testing.T, src string, depth uint8) {
		maxDepth := 1 + int(depth)%12
		requireSameCompaction(t, []byte(src), maxDepth)
		out, cerr := CompactString(nil, src, maxDepth)
		compact, err := CheckCompactString(src, maxDepth)
		if (cerr == nil) != (err == nil) {
			t.Fatalf("%q depth %d: CompactString err %v, CheckCompactString err %v", src, maxDepth, cerr, err)
		}
		if err != nil {
			if cerr.Error() != err.Error() || compact {
				t.Fatalf("%q: errors differ (%v vs %v) or compact %v", src, cerr, err, compact)
			}
			return
		}
		if compact != (string(out) == src) {
			t.Fatalf("%q compacts to %q but CheckCompactString says compact=%v", src, out, compact)
		}
	})
}
