package sdk

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/pyrepr"
)

// Expected values in this file were produced by CPython 3.11.7 (the vectors' Python).

func TestPyStrOfJSONNumbers(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"0", "0"},
		{"-0", "0"},
		{"12345678901234567890123", "12345678901234567890123"},
		{"9007199254740993", "9007199254740993"},
		{"1.0", "1.0"},
		{"3.0", "3.0"},
		{"-0.0", "-0.0"},
		{"1e2", "100.0"},
		{"1E-5", "1e-05"},
		{"2.50", "2.5"},
		{"1e400", "inf"},
		{"-1e400", "-inf"},
		{"1e-400", "0.0"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := pyStr(json.Number(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	for _, bad := range []string{"", "01", "1.", ".5", "+1", "1e", "0x10", "NaN", "1_0"} {
		t.Run("invalid "+bad, func(t *testing.T) {
			_, err := pyStr(json.Number(bad))
			require.Error(t, err)
		})
	}
	t.Run("int digit limit", func(t *testing.T) {
		_, err := pyStr(json.Number(strings.Repeat("9", pyMaxStrDigits)))
		require.NoError(t, err)
		_, err = pyStr(json.Number(strings.Repeat("9", pyMaxStrDigits+1)))
		require.ErrorContains(t, err, "4300 digits")
	})
}

func TestPyRepr(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{name: "single quote inside", in: "a'b", want: `"a'b"`},
		{name: "double quote inside", in: `a"b`, want: `'a"b'`},
		{name: "both quotes", in: `a'"b`, want: `'a\'"b'`},
		{name: "backslash", in: `\`, want: `'\\'`},
		{name: "controls", in: "\x00\x1f\x7f", want: `'\x00\x1f\x7f'`},
		{name: "tab newline return", in: "t\tn\nr\r", want: `'t\tn\nr\r'`},
		{name: "latin-1 non printable", in: "\u0085\u00a0é", want: `'\x85\xa0é'`},
		{name: "line separator and zero width space", in: "\u2028\u200b", want: `'\u2028\u200b'`},
		{name: "astral", in: "\U0001F600\U000E0001", want: `'😀\U000e0001'`},
		{name: "greek", in: "καλη", want: `'καλη'`},
		{name: "invalid utf-8 byte", in: "a\xffb", want: `'a\xffb'`},
		{name: "None", in: nil, want: "None"},
		{name: "bools", in: []any{true, false}, want: "[True, False]"},
		{name: "list", in: []any{json.Number("1"), "a", nil, true, json.Number("2.0")}, want: "[1, 'a', None, True, 2.0]"},
		{name: "nested dict", in: map[string]any{"a": map[string]any{"b": []any{}}}, want: "{'a': {'b': []}}"},
		{name: "Go ints and floats", in: []any{int8(-3), uint64(18446744073709551615), float32(0.5)}, want: "[-3, 18446744073709551615, 0.5]"},
		{name: "typed slice", in: []string{"x", "y"}, want: "['x', 'y']"},
		{name: "typed map sorted", in: map[string]int{"b": 2, "a": 1}, want: "{'a': 1, 'b': 2}"},
		{name: "raw message keeps order", in: json.RawMessage(`{"z":1,"a":"q"}`), want: "{'z': 1, 'a': 'q'}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pyRepr(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	t.Run("unsupported", func(t *testing.T) {
		_, err := pyRepr(struct{}{})
		require.ErrorContains(t, err, "unsupported value type")
	})
	t.Run("cyclic value ends in an error", func(t *testing.T) {
		cyc := []any{nil}
		cyc[0] = cyc
		_, err := pyRepr(cyc)
		require.ErrorIs(t, err, errPyTooDeep)
	})
}

func TestPyParseIntString(t *testing.T) {
	ok := []struct {
		in   string
		want string
	}{
		{" 2 ", "2"},
		{"1_0", "10"},
		{"+5", "5"},
		{"-0", "0"},
		{"-12", "-12"},
		{"007", "7"},
		{"0_0", "0"},
		{"٣", "3"},
		{"\u00a0 7\u3000", "7"},
		{"\u00855", "5"},
		{"\u30005", "5"},
		{"\v5\f", "5"},
		{"\u2028 5", "5"},
		{"𝟗", "9"},
		{"５", "5"},
		{"1_٣", "13"},
		{"99999999999999999999999", "99999999999999999999999"},
	}
	for _, tt := range ok {
		t.Run(tt.in, func(t *testing.T) {
			n, err := pyParseIntString(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, n.String())
		})
	}
	bad := []string{"1__0", "_1", "1_", "0x10", "1.5", "", " ", "12 3", "+", "-_1", "1\x00", "²", "\x1c5\x1f", "\x1f5", "\x1c٣", "invalid", "1e3", "--1", "5\xff"}
	for _, in := range bad {
		t.Run("invalid "+in, func(t *testing.T) {
			_, err := pyParseIntString(in)
			require.Error(t, err)
			assert.Equal(t, "invalid literal for int() with base 10: "+pyrepr.Str(in), err.Error())
		})
	}
	t.Run("digit limit", func(t *testing.T) {
		_, err := pyParseIntString(strings.Repeat("1", pyMaxStrDigits))
		require.NoError(t, err)
		_, err = pyParseIntString(strings.Repeat("1_", pyMaxStrDigits) + "1")
		require.ErrorContains(t, err, "4300 digits")
	})
}

func TestPyInt(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{name: "2.7", in: 2.7, want: "2"},
		{name: "-2.7", in: -2.7, want: "-2"},
		{name: "0.5", in: json.Number("0.5"), want: "0"},
		{name: "-0.5", in: json.Number("-0.5"), want: "0"},
		{name: "1e20", in: json.Number("1e20"), want: "100000000000000000000"},
		{name: "1e300", in: 1e300, want: "1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160"},
		{name: "true", in: true, want: "1"},
		{name: "false", in: false, want: "0"},
		{name: "string", in: " 2 ", want: "2"},
		{name: "big json int", in: json.Number("-123456789012345678901"), want: "-123456789012345678901"},
		{name: "raw message", in: json.RawMessage(`"4"`), want: "4"},
		{name: "uint64", in: uint64(math.MaxUint64), want: "18446744073709551615"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := pyInt(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, n.String())
		})
	}
	errs := []struct {
		name string
		in   any
		want string
	}{
		{name: "list", in: []any{}, want: "int() argument must be a string, a bytes-like object or a real number, not 'list'"},
		{name: "dict", in: map[string]any{}, want: "int() argument must be a string, a bytes-like object or a real number, not 'dict'"},
		{name: "None", in: nil, want: "int() argument must be a string, a bytes-like object or a real number, not 'NoneType'"},
		{name: "inf", in: math.Inf(1), want: "cannot convert float infinity to integer"},
		{name: "nan", in: math.NaN(), want: "cannot convert float NaN to integer"},
		{name: "string", in: "invalid", want: "invalid literal for int() with base 10: 'invalid'"},
	}
	for _, tt := range errs {
		t.Run("error "+tt.name, func(t *testing.T) {
			_, err := pyInt(tt.in)
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

func TestPyDecimalCoversEveryNdDigit(t *testing.T) {
	// The offset-modulo-10 rule holds only if every Nd range is whole runs of ten starting at zero.
	check := func(lo, hi, stride uint32) {
		require.Equal(t, uint32(1), stride, "Nd range %x-%x", lo, hi)
		require.Zero(t, (hi-lo+1)%10, "Nd range %x-%x", lo, hi)
	}
	for _, r := range unicode.Nd.R16 {
		check(uint32(r.Lo), uint32(r.Hi), uint32(r.Stride))
	}
	for _, r := range unicode.Nd.R32 {
		check(r.Lo, r.Hi, r.Stride)
	}
	for _, tt := range []struct {
		r    rune
		want int
	}{{'7', 7}, {'٠', 0}, {'٩', 9}, {'𝟎', 0}, {'𝟗', 9}, {'𝟘', 0}, {'𝟿', 9}, {'９', 9}} {
		d, ok := pyDecimal(tt.r)
		require.True(t, ok, "%q", tt.r)
		assert.Equal(t, tt.want, d, "%q", tt.r)
	}
	for _, r := range []rune{'a', '²', 'Ⅷ', '½'} {
		_, ok := pyDecimal(r)
		assert.False(t, ok, "%q", r)
	}
}

func TestPyTruthy(t *testing.T) {
	type named bool
	tests := []struct {
		name string
		in   any
		want bool
	}{
		{name: "nil", in: nil, want: false},
		{name: "true", in: true, want: true},
		{name: "false", in: false, want: false},
		{name: "string false is true", in: "false", want: true},
		{name: "empty string", in: "", want: false},
		{name: "int 0", in: json.Number("0"), want: false},
		{name: "int -0", in: json.Number("-0"), want: false},
		{name: "int 2", in: json.Number("2"), want: true},
		{name: "float 0.0", in: json.Number("0.0"), want: false},
		{name: "float 0e5", in: json.Number("0e5"), want: false},
		{name: "float 1e-400 underflows to 0", in: json.Number("1e-400"), want: false},
		{name: "float 0.1", in: json.Number("0.1"), want: true},
		{name: "nan", in: math.NaN(), want: true},
		{name: "empty list", in: []any{}, want: false},
		{name: "list", in: []any{nil}, want: true},
		{name: "empty dict", in: map[string]any{}, want: false},
		{name: "dict", in: map[string]any{"a": nil}, want: true},
		{name: "go int 0", in: 0, want: false},
		{name: "go uint 1", in: uint(1), want: true},
		{name: "named bool false", in: named(false), want: false},
		{name: "named bool true", in: named(true), want: true},
		{name: "raw false", in: json.RawMessage("false"), want: false},
		{name: "raw object", in: json.RawMessage(`{"a":1}`), want: true},
		{name: "struct", in: struct{}{}, want: true},
		{name: "nil pointer", in: (*int)(nil), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, pyTruthy(tt.in))
		})
	}
}
