package python

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Expected values were produced by CPython 3.11.7 (the vectors' Python): repr(in).

func TestReprStr(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "abc", `'abc'`},
		{"empty", "", `''`},
		{"single quote only", "it's", `"it's"`},
		{"single quote inside", "a'b", `"a'b"`},
		{"both quotes", `it's "x"`, `'it\'s "x"'`},
		{"both quotes adjacent", `a'"b`, `'a\'"b'`},
		{"double quote only", `say "x"`, `'say "x"'`},
		{"double quote inside", `a"b`, `'a"b'`},
		{"controls", "a\tb\nc\rd\x00e\x7f", `'a\tb\nc\rd\x00e\x7f'`},
		{"controls bare", "\x00\x1f\x7f", `'\x00\x1f\x7f'`},
		{"tab newline return", "t\tn\nr\r", `'t\tn\nr\r'`},
		{"backslash", `a\b`, `'a\\b'`},
		{"backslash alone", `\`, `'\\'`},
		{"latin1 printable", "röllout", `'röllout'`},
		{"nbsp", "a\u00a0", `'a\xa0'`},
		{"latin-1 non printable", "\u0085\u00a0é", `'\x85\xa0é'`},
		{"line separator", "a\u2028", `'a\u2028'`},
		{"line separator and zero width space", "\u2028\u200b", `'\u2028\u200b'`},
		{"bidi format char", "a\u200e", `'a\u200e'`},
		{"astral private use", "a\U000F0000", `'a\U000f0000'`},
		{"astral printable", "a😀", `'a😀'`},
		{"astral", "\U0001F600\U000E0001", `'😀\U000e0001'`},
		{"greek", "καλη", `'καλη'`},
		{"invalid utf8", "a\xff", `'a\xff'`},
		{"invalid utf-8 byte", "a\xffb", `'a\xffb'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ReprStr(tt.in))
		})
	}
}
