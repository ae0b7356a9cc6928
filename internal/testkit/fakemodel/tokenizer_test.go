package fakemodel

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// The tokenizer's pieces (tokenizer.go): words with at most one leading space, at most 8 bytes,
// any other rune alone.
func TestTokenizePieces(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"Hello there!", []string{"Hello", " there", "!"}},
		{"  two  spaces", []string{" ", " two", " ", " spaces"}},
		{"unbelievable", []string{"unbeliev", "able"}},
		{"a\n\nb", []string{"a", "\n", "\n", "b"}},
		{"ünï 21 °C", []string{"ünï", " 21", " ", "°", "C"}},
		{`{"city":"Paris"}`, []string{"{", `"`, "city", `"`, ":", `"`, "Paris", `"`, "}"}},
	} {
		var got []string
		for _, tok := range tokenize(tc.in) {
			got = append(got, tok.text)
			require.Equal(t, pieceID(tok.text), tok.id)
		}
		require.Equal(t, tc.want, got, "%q", tc.in)
	}
}

// Tokenizing is lossless and its ids stay below the special tokens, for any text.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "Hello there!", "ünï\n\t 21 °C", "\xff\xfe broken utf-8", strings.Repeat("x", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b strings.Builder
		for _, tok := range tokenize(s) {
			require.NotEmpty(t, tok.text)
			require.LessOrEqual(t, len(tok.text), max(maxPieceBytes, utf8.UTFMax))
			require.GreaterOrEqual(t, tok.id, firstPieceID)
			require.Less(t, tok.id, vocabSize)
			b.WriteString(tok.text)
		}
		require.Equal(t, s, b.String())
	})
}
