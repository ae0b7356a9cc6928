package python

import (
	"math"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/ojson"
)

// Expected values are CPython 3.11's int(json.loads(in)).
func TestInt(t *testing.T) {
	tests := []struct {
		in   string // JSON
		want string
	}{
		{`"2"`, "2"}, {`2.7`, "2"}, {`-2.7`, "-2"}, {`true`, "1"}, {`false`, "0"}, {`0`, "0"}, {`-0`, "0"},
		{`-3`, "-3"}, {`0.5`, "0"}, {`-0.5`, "0"}, {`1e20`, "100000000000000000000"},
		{`1e300`, "1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160"},
		{`-123456789012345678901`, "-123456789012345678901"}, {`18446744073709551615`, "18446744073709551615"},
		{`" 2 "`, "2"}, {`"1_0"`, "10"}, {`"+5"`, "5"}, {`"-0"`, "0"}, {`"-12"`, "-12"}, {`"007"`, "7"},
		{`"0_0"`, "0"}, {`"٣"`, "3"}, {`"\u00a0 7\u3000"`, "7"}, {`"\u00855"`, "5"}, {`"\u000b5\f"`, "5"},
		{`"\u2028 5"`, "5"}, {`"𝟗"`, "9"}, {`"５"`, "5"}, {`"1_٣"`, "13"},
		{`"99999999999999999999999"`, "99999999999999999999999"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			v, err := Loads([]byte(tt.in))
			require.NoError(t, err)
			n, err := Int(v)
			require.NoError(t, err)
			assert.Equal(t, tt.want, n.String())
		})
	}
}

func TestIntErrors(t *testing.T) {
	const notANumber = "int() argument must be a string, a bytes-like object or a real number, not "
	tests := []struct {
		name string
		in   ojson.Value
		want string
	}{
		{"None", ojson.Null(), notANumber + "'NoneType'"},
		{"list", ojson.Array(), notANumber + "'list'"},
		{"dict", ojson.Object(), notANumber + "'dict'"},
		{"float beyond float64", ojson.Number("1e400"), "cannot convert float infinity to integer"},
		{"not number text", ojson.Number("nan"), `invalid JSON number "nan"`},
	}
	for _, in := range []string{"invalid", "1__0", "_1", "1_", "0x10", "1.5", "", " ", "12 3", "+", "-_1", "1\x00",
		"²", "\x1c5\x1f", "\x1f5", "\x1c٣", "1e3", "--1", "5\xff", "it's"} {
		tests = append(tests, struct {
			name string
			in   ojson.Value
			want string
		}{"string " + in, ojson.String(in), "invalid literal for int() with base 10: " + ReprStr(in)})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Int(tt.in)
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

func TestIntOfFloatNaN(t *testing.T) {
	// Unreachable from a JSON value (number text never parses to NaN there), but never a panic.
	_, err := intOfFloat(math.NaN())
	assert.EqualError(t, err, "cannot convert float NaN to integer")
}

func TestIntDigitLimit(t *testing.T) {
	for _, v := range []ojson.Value{ojson.String(strings.Repeat("1", MaxStrDigits)), ojson.Number("-" + strings.Repeat("9", MaxStrDigits))} {
		_, err := Int(v)
		require.NoError(t, err)
	}
	_, err := Int(ojson.String(strings.Repeat("1_", MaxStrDigits) + "1"))
	assert.EqualError(t, err, "exceeds the limit (4300 digits) for integer string conversion: value has 4301 digits")
	_, err = Int(ojson.Number(strings.Repeat("9", MaxStrDigits+1)))
	assert.EqualError(t, err, "exceeds the limit (4300 digits) for integer string conversion: value has 4301 digits")
}

func TestDecimalDigitCoversEveryNdDigit(t *testing.T) {
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
		d, ok := decimalDigit(tt.r)
		require.True(t, ok, "%q", tt.r)
		assert.Equal(t, tt.want, d, "%q", tt.r)
	}
	for _, r := range []rune{'a', '²', 'Ⅷ', '½'} {
		_, ok := decimalDigit(r)
		assert.False(t, ok, "%q", r)
	}
}

func FuzzInt(f *testing.F) {
	for _, s := range []string{"2", " -1_0 ", "٣", "1e3", "", "\x1c5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Int(ojson.String(s))
		if err != nil {
			return
		}
		// What int() accepted, written back in ASCII digits, reads as the same number.
		back, err := Int(ojson.String(n.String()))
		require.NoError(t, err)
		assert.Zero(t, n.Cmp(back))
	})
}
