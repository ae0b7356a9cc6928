package pyrepr

import (
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/ojson"
)

// Expected values in this file were produced by CPython 3.11.7 (the vectors' Python):
// str(json.loads(in)), repr(json.loads(in)), int(json.loads(in)).

func loads(t *testing.T, text string) ojson.Value {
	t.Helper()
	v, err := ojson.ParsePython([]byte(text))
	require.NoError(t, err)
	return v
}

func TestStrOfJSONNumbers(t *testing.T) {
	tests := []struct{ in, want string }{
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
		{"1e-400", "0.0"},
		{"1e16", "1e+16"},
		{"1e15", "1000000000000000.0"},
		{"0.0001", "0.0001"},
		{"1.5e-7", "1.5e-07"},
		{"123.456", "123.456"},
		{"1e22", "1e+22"},
		{"1.7976931348623157e308", "1.7976931348623157e+308"},
		{"5e-324", "5e-324"},
		{"9007199254740993.0", "9007199254740992.0"},
		{"1234567890123456.7", "1234567890123456.8"},
		{"12345678901234567.0", "1.2345678901234568e+16"},
		{"123456789.123456789", "123456789.12345679"},
		{"1.5e300", "1.5e+300"},
		{"-1e-5", "-1e-05"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := StrOf(loads(t, tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	t.Run("int digit limit", func(t *testing.T) {
		_, err := StrOf(loads(t, strings.Repeat("9", MaxStrDigits)))
		require.NoError(t, err)
		_, err = StrOf(loads(t, strings.Repeat("9", MaxStrDigits+1)))
		require.ErrorContains(t, err, "4300 digits")
	})
	t.Run("string is itself", func(t *testing.T) {
		got, err := StrOf(loads(t, `"a'b"`))
		require.NoError(t, err)
		assert.Equal(t, "a'b", got)
	})
}

func TestValue(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{name: "single quote inside", in: `"a'b"`, want: `"a'b"`},
		{name: "both quotes", in: `"a'\"b"`, want: `'a\'"b'`},
		{name: "controls", in: `"\u0000\u001f\u007f"`, want: `'\x00\x1f\x7f'`},
		{name: "astral", in: `"\ud83d\ude00\udb40\udc01"`, want: `'😀\U000e0001'`},
		{name: "None", in: `null`, want: "None"},
		{name: "bools", in: `[true,false]`, want: "[True, False]"},
		{name: "list", in: `[1,"a",null,true,2.0]`, want: "[1, 'a', None, True, 2.0]"},
		{name: "nested dict", in: `{"a":{"b":[]}}`, want: "{'a': {'b': []}}"},
		{name: "dict keeps order", in: `{"z":1,"a":"q"}`, want: "{'z': 1, 'a': 'q'}"},
		{name: "repeated key: first position, last value", in: `{"k":1,"z":2,"k":3}`, want: "{'k': 3, 'z': 2}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Value(loads(t, tt.in)))
		})
	}
}

func TestInt(t *testing.T) {
	tests := []struct{ in, want string }{
		{"2.7", "2"},
		{"-2.7", "-2"},
		{"0.5", "0"},
		{"-0.5", "0"},
		{"1e20", "100000000000000000000"},
		{"1e300", "1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160"},
		{"true", "1"},
		{"false", "0"},
		{`" 2 "`, "2"},
		{"-123456789012345678901", "-123456789012345678901"},
		{"18446744073709551615", "18446744073709551615"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			n, err := Int(loads(t, tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want, n.String())
		})
	}
	errs := []struct{ name, in, want string }{
		{name: "list", in: `[]`, want: "int() argument must be a string, a bytes-like object or a real number, not 'list'"},
		{name: "dict", in: `{}`, want: "int() argument must be a string, a bytes-like object or a real number, not 'dict'"},
		{name: "None", in: `null`, want: "int() argument must be a string, a bytes-like object or a real number, not 'NoneType'"},
		{name: "string", in: `"invalid"`, want: "invalid literal for int() with base 10: 'invalid'"},
	}
	for _, tt := range errs {
		t.Run("error "+tt.name, func(t *testing.T) {
			_, err := Int(loads(t, tt.in))
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
	t.Run("infinity", func(t *testing.T) {
		// Python's json.loads("1e400") is inf; a reader represents it as the number text "inf".
		_, err := Int(ojson.Number("inf"))
		require.EqualError(t, err, "cannot convert float infinity to integer")
		s, err := StrOf(ojson.Number("-inf"))
		require.NoError(t, err)
		assert.Equal(t, "-inf", s)
	})
}

func TestTypeName(t *testing.T) {
	for in, want := range map[string]string{`null`: "NoneType", `true`: "bool", `1`: "int", `1.0`: "float", `""`: "str", `[]`: "list", `{}`: "dict"} {
		assert.Equal(t, want, TypeName(loads(t, in)), in)
	}
}

func TestParseInt(t *testing.T) {
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
			n, err := ParseInt(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, n.String())
		})
	}
	bad := []string{"1__0", "_1", "1_", "0x10", "1.5", "", " ", "12 3", "+", "-_1", "1\x00", "²", "\x1c5\x1f", "\x1f5", "\x1c٣", "invalid", "1e3", "--1", "5\xff"}
	for _, in := range bad {
		t.Run("invalid "+in, func(t *testing.T) {
			_, err := ParseInt(in)
			require.Error(t, err)
			assert.Equal(t, "invalid literal for int() with base 10: "+Str(in), err.Error())
		})
	}
	t.Run("digit limit", func(t *testing.T) {
		_, err := ParseInt(strings.Repeat("1", MaxStrDigits))
		require.NoError(t, err)
		_, err = ParseInt(strings.Repeat("1_", MaxStrDigits) + "1")
		require.ErrorContains(t, err, "4300 digits")
	})
}

func TestDecimalCoversEveryNdDigit(t *testing.T) {
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
		d, ok := decimal(tt.r)
		require.True(t, ok, "%q", tt.r)
		assert.Equal(t, tt.want, d, "%q", tt.r)
	}
	for _, r := range []rune{'a', '²', 'Ⅷ', '½'} {
		_, ok := decimal(r)
		assert.False(t, ok, "%q", r)
	}
}
