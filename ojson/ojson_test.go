package ojson

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseStrict(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		name string
		in   string
		want string // AppendJSON of the result; "" = must fail
	}{
		{"object order and duplicates kept", `{"b":1, "a":2, "b":3}`, `{"b":1,"a":2,"b":3}`},
		{"number text kept", `[1.50, 1e3, -0, 0.0, 1E+2, 12345678901234567890123.5]`, `[1.50,1e3,-0,0.0,1E+2,12345678901234567890123.5]`},
		{"uint64 max", `18446744073709551615`, `18446744073709551615`},
		{"int64 min", `-9223372036854775808`, `-9223372036854775808`},
		{"uint64 max + 1", `18446744073709551616`, ""},
		{"int64 min - 1", `-9223372036854775809`, ""},
		{"float overflow", `1e400`, ""},
		{"float underflow is fine", `1e-400`, `1e-400`},
		{"NaN", `NaN`, ""},
		{"Infinity", `[Infinity]`, ""},
		{"-Infinity", `-Infinity`, ""},
		{"BOM", "\uFEFF{}", ""},
		{"invalid UTF-8 in string", "\"a\xffb\"", ""},
		{"invalid UTF-8 outside string", "[1,\xff]", ""},
		{"surrogate encoded as UTF-8", "\"\xed\xa0\x80\"", ""},
		{"raw control char", "\"a\tb\"", ""},
		{"DEL raw ok", "\"a\x7fb\"", "\"a\x7fb\""},
		{"escapes decoded", `"\u00e9\n\/\"\\\ud83d\ude42"`, `"é\n/\"\\🙂"`},
		{"lone high surrogate", `"\ud800"`, ""},
		{"lone low surrogate", `"\udc00x"`, ""},
		{"high then non-low", `"\ud800\u0041"`, ""},
		{"bad escape", `"\x"`, ""},
		{"short unicode escape", `"\u12"`, ""},
		{"trailing data", `{} {}`, ""},
		{"trailing comma", `[1,]`, ""},
		{"leading zero", `01`, ""},
		{"bare minus", `-`, ""},
		{"dot without digits", `1.`, ""},
		{"exponent without digits", `1e+`, ""},
		{"empty", ``, ""},
		{"whitespace only", " \n", ""},
		{"surrounding whitespace", " \t\r\n true \n", `true`},
		{"single quotes", `{'a':1}`, ""},
		{"unterminated string", `"abc`, ""},
		{"unterminated object", `{"a":1`, ""},
		{"missing colon", `{"a" 1}`, ""},
		{"non-string key", `{1:2}`, ""},
		{"depth at limit", deep(MaxDepth), deep(MaxDepth)},
		{"depth over limit", deep(MaxDepth + 1), ""},
		{"U+2028 raw", "\"a\u2028b\"", "\"a\u2028b\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			requireSameCompaction(t, []byte(tc.in), MaxDepth)
			v, err := Parse([]byte(tc.in))
			c, cerr := Compact(nil, []byte(tc.in))
			cs, cserr := CompactString(nil, tc.in, MaxDepth)
			if tc.want == "" {
				require.Error(t, err)
				var se *SyntaxError
				require.ErrorAs(t, err, &se)
				require.Error(t, cerr, "Compact must reject what Parse rejects")
				assert.True(t, sameSyntaxError(cerr, cserr), "CompactString error %v, Compact error %v", cserr, cerr)
				assert.False(t, Valid([]byte(tc.in)), "Valid")
				return
			}
			require.NoError(t, err)
			require.NoError(t, cerr)
			require.NoError(t, cserr)
			assert.Equal(t, string(c), string(cs), "CompactString")
			assert.True(t, Valid([]byte(tc.in)), "Valid")
			assert.Equal(t, tc.want, string(v.AppendJSON(nil)))
			back, err := Parse(c)
			require.NoError(t, err)
			assert.True(t, v.Equal(back), "Compact output parses to the same value")
		})
	}
}

func TestCompactKeepsText(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"whitespace removed", "{ \"a\" :\t[ 1 , 2.50 ,\n1e3 ] ,\r\n\"b\" : null }", `{"a":[1,2.50,1e3],"b":null}`},
		{"escapes kept as sent", `{"k":"caf\u00e9 \/ \ud83d\ude42 \n"}`, `{"k":"caf\u00e9 \/ \ud83d\ude42 \n"}`},
		{"spaces in strings kept", `[" a b "]`, `[" a b "]`},
		{"duplicates kept", `{"a":1,"a":2}`, `{"a":1,"a":2}`},
		{"raw non-ASCII kept", `"Grüß 東京 🙂"`, `"Grüß 東京 🙂"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Compact([]byte("prefix:"), []byte(tc.in))
			require.NoError(t, err)
			assert.Equal(t, "prefix:"+tc.want, string(got))
		})
	}
	t.Run("error leaves dst", func(t *testing.T) {
		got, err := Compact([]byte("keep"), []byte(`{"a":[1,2`))
		require.Error(t, err)
		assert.Equal(t, "keep", string(got))
	})
}

func TestCompactDepth(t *testing.T) {
	_, err := CompactDepth(nil, []byte(`[[1]]`), 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nesting too deep")
	got, err := CompactDepth(nil, []byte(`[ [1] ]`), 2)
	require.NoError(t, err)
	assert.Equal(t, `[[1]]`, string(got))
	_, err = ParseDepth([]byte(`{"a":{}}`), 1)
	require.Error(t, err)
}

// TestParsePythonNonFinite: ParsePython's reading, except that the non-finite floats stay numbers
// Float64 reads (NaN, ±Inf) instead of null; every other value reads as ParsePython reads it.
func TestParsePythonNonFinite(t *testing.T) {
	v, err := ParsePythonNonFinite([]byte(`{"a":NaN,"b":[Infinity,-Infinity,1e400,-1e400],"c":1.50,"d":123456789012345678901234567890,"e":"NaN","a2":null}`))
	require.NoError(t, err)
	get := func(path ...string) Value {
		t.Helper()
		cur := v
		for _, k := range path {
			if i, err := strconv.Atoi(k); err == nil {
				cur = cur.Elems()[i]
				continue
			}
			var ok bool
			cur, ok = cur.Get(k)
			require.True(t, ok, k)
		}
		return cur
	}
	for path, want := range map[string]float64{"a": math.NaN(), "b/0": math.Inf(1), "b/1": math.Inf(-1), "b/2": math.Inf(1), "b/3": math.Inf(-1)} {
		n := get(strings.Split(path, "/")...)
		require.Equal(t, KindNumber, n.Kind(), path)
		f, ok := n.Float64()
		require.True(t, ok, path)
		if math.IsNaN(want) {
			assert.True(t, math.IsNaN(f), path)
		} else {
			assert.Equal(t, want, f, path)
		}
	}
	assert.Equal(t, `1.5`, string(get("c").AppendJSON(nil)), "floats as ParsePython writes them")
	assert.Equal(t, `123456789012345678901234567890`, string(get("d").AppendJSON(nil)))
	assert.Equal(t, `"NaN"`, string(get("e").AppendJSON(nil)), "a string stays a string")
	assert.True(t, get("a2").IsNull())
	_, err = ParsePythonNonFinite([]byte(`[-NaN]`))
	assert.Error(t, err)
	p, err := ParsePython([]byte(`[NaN,1e400]`))
	require.NoError(t, err)
	assert.Equal(t, `[null,null]`, string(p.AppendJSON(nil)), "ParsePython is unchanged")
}

func TestParsePython(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // "" = must fail
	}{
		{"float normalized", `1.50`, `1.5`},
		{"exponent to float", `1e2`, `100.0`},
		{"big exponent", `1e16`, `1e16`},
		{"small", `0.00001`, `0.00001`},
		{"smaller", `1e-06`, `1e-6`},
		{"int kept", `100`, `100`},
		{"huge int exact", `123456789012345678901234567890`, `123456789012345678901234567890`},
		{"negative zero int", `-0`, `0`},
		{"negative zero float", `-0.0`, `-0.0`},
		{"NaN to null", `[NaN, Infinity, -Infinity]`, `[null,null,null]`},
		{"float overflow to null", `1e400`, `null`},
		{"duplicate keys: first position, last value", `{"a":1,"b":2,"a":3}`, `{"a":3,"b":2}`},
		{"whitespace around", "  {\"x\":1}\n", `{"x":1}`},
		{"trailing garbage", `{"x":1} x`, ""},
		{"empty", ``, ""},
		{"control char rejected", "\"a\nb\"", ""},
		{"lone surrogate to U+FFFD", `"\ud800x"`, "\"\uFFFDx\""},
		{"nested floats normalized", `{"a":[1.0,2.50e0]}`, `{"a":[1.0,2.5]}`},
		{"string", `"s"`, `"s"`},
		{"nan lowercase rejected", `nan`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ParsePython([]byte(tc.in))
			if tc.want == "" {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(v.AppendJSON(nil)))
		})
	}
}

func TestAppendString(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "abc", `"abc"`},
		{"quote and backslash", `a"b\c`, `"a\"b\\c"`},
		{"short escapes", "\b\f\n\r\t", `"\b\f\n\r\t"`},
		{"other controls", "\x00\x01\x1f", `"\u0000\u0001\u001f"`},
		{"no HTML escaping", "<b>&</b>", `"<b>&</b>"`},
		{"U+2028/U+2029 raw", "\u2028\u2029", "\"\u2028\u2029\""},
		{"DEL raw", "\x7f", "\"\x7f\""},
		{"non-ASCII raw", "Grüß 東京 🙂", `"Grüß 東京 🙂"`},
		{"slash not escaped", "a/b", `"a/b"`},
		{"invalid UTF-8 replaced", "a\xffb\xe2\x82", "\"a\uFFFDb\uFFFD\""},
		{"truncated sequence then ASCII", "\xe2\x82A", "\"\uFFFDA\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, string(AppendString(nil, tc.in)))
		})
	}
}

func TestDecodeUTF8MatchesPython(t *testing.T) {
	// Expected values computed with Python 3: b.decode("utf-8", "replace").
	tests := []struct{ in, want string }{
		{"abc", "abc"},
		{"\xff", "\uFFFD"},
		{"\xe2\x82A", "\uFFFDA"},
		{"\xe2\x82", "\uFFFD"},
		{"\xf0\x9f\x99", "\uFFFD"},
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"},
		{"\xc0\xaf", "\uFFFD\uFFFD"},
		{"\xf4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"},
		{"a\x80b", "a\uFFFDb"},
		{"\xe0\x80\x80", "\uFFFD\uFFFD\uFFFD"},
		{"\xf0\x80", "\uFFFD\uFFFD"},
		{"\xc3", "\uFFFD"},
		{"\xc3\xa9", "é"},
		{"\xf0\x9f\x99\x82\xf0", "🙂\uFFFD"},
		{"\xe1\x80\xe1\x80\x80", "\uFFFD\u1000"},
	}
	for _, tc := range tests {
		t.Run(strconv.Quote(tc.in), func(t *testing.T) {
			assert.Equal(t, tc.want, DecodeUTF8([]byte(tc.in)))
			enc := string(AppendString(nil, tc.in))
			assert.Equal(t, `"`+tc.want+`"`, enc, "AppendString replaces the same way")
		})
	}
}

func TestValueAccessors(t *testing.T) {
	v, err := Parse([]byte(`{"s":"x","n":12,"f":1.5,"big":18446744073709551615,"b":true,"a":[1,2],"o":{},"z":null,"n":13}`))
	require.NoError(t, err)
	assert.Equal(t, KindObject, v.Kind())
	s, ok := mustGet(t, v, "s").AsString()
	assert.True(t, ok)
	assert.Equal(t, "x", s)
	n, ok := mustGet(t, v, "n").Int64()
	assert.True(t, ok)
	assert.Equal(t, int64(13), n, "Get takes the last duplicate")
	_, ok = mustGet(t, v, "f").Int64()
	assert.False(t, ok)
	f, ok := mustGet(t, v, "f").Float64()
	assert.True(t, ok)
	assert.Equal(t, 1.5, f)
	_, ok = mustGet(t, v, "big").Int64()
	assert.False(t, ok, "beyond int64")
	assert.True(t, mustGet(t, v, "big").IsInteger())
	b, ok := mustGet(t, v, "b").AsBool()
	assert.True(t, ok && b)
	assert.Len(t, mustGet(t, v, "a").Elems(), 2)
	assert.Equal(t, 0, mustGet(t, v, "o").Len())
	assert.NotNil(t, mustGet(t, v, "o").Members())
	assert.True(t, mustGet(t, v, "z").IsNull())
	_, ok = v.Get("missing")
	assert.False(t, ok)
	_, ok = String("x").Get("x")
	assert.False(t, ok)
	assert.Nil(t, String("x").Elems())
	assert.Len(t, v.Members(), 9, "duplicates kept")
}

func mustGet(t *testing.T, v Value, key string) Value {
	t.Helper()
	got, ok := v.Get(key)
	require.True(t, ok, key)
	return got
}

func TestSetAndConstructors(t *testing.T) {
	o := Object(Member{"a", Int(1)}, Member{"b", Int(2)}, Member{"a", Int(3)})
	o.Set("a", String("x"))
	o.Set("c", Array(Bool(true), Null(), Float(100), Float(math.NaN()), Number("1e3")))
	assert.Equal(t, `{"a":1,"b":2,"a":"x","c":[true,null,100.0,null,1e3]}`, o.String())
	assert.Equal(t, `[]`, Array().String())
	assert.Equal(t, `{}`, Object().String())
	assert.Panics(t, func() { v := Int(1); v.Set("a", Null()) })

	c := o.Clone()
	c.Set("b", Null())
	assert.Equal(t, `2`, mustGet(t, o, "b").String(), "Clone is deep")
	assert.False(t, c.Equal(o))
	assert.True(t, o.Equal(o.Clone()))
	assert.False(t, Number("1").Equal(Number("1.0")))
}

func TestSyntaxErrorNamesRule(t *testing.T) {
	_, err := Parse([]byte(`[1, 99999999999999999999]`))
	var se *SyntaxError
	require.True(t, errors.As(err, &se))
	assert.Equal(t, 4, se.Offset)
	assert.Contains(t, se.Error(), "outside the 64-bit range")
}

func TestValidNumber(t *testing.T) {
	for _, s := range []string{"0", "-0", "1.5", "1e3", "-1.2E-7", "123456789012345678901234567890"} {
		assert.True(t, ValidNumber(s), s)
	}
	for _, s := range []string{"", "-", "01", "1.", ".5", "1e", "+1", "NaN", "1 ", "0x10"} {
		assert.False(t, ValidNumber(s), s)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"x\u00e9\ud83d\ude42"],"b":{"a":null,"a":true}}`, `[]`, `"\u2028"`,
		"\"\xff\"", `-0.0e+1`, `18446744073709551615`, `NaN`, ` [ { } , [ ] ] `, `{"k":"\"\\\/\b\f\n\r\t"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		requireSameCompaction(t, data, MaxDepth)
		v, err := Parse(data)
		c, cerr := Compact(nil, data)
		if (err == nil) != (cerr == nil) {
			t.Fatalf("Parse err %v, Compact err %v", err, cerr)
		}
		if Valid(data) != (err == nil) {
			t.Fatalf("Valid %v, Parse err %v", Valid(data), err)
		}
		cs, cserr := CompactString([]byte("x"), string(data), MaxDepth)
		if string(cs) != "x"+string(c) || !sameSyntaxError(cserr, cerr) {
			t.Fatalf("CompactString %q %v, Compact %q %v", cs, cserr, c, cerr)
		}
		if _, perr := ParsePython(data); perr != nil && err == nil {
			// Strict JSON is a subset of what json.loads reads.
			t.Fatalf("ParsePython rejected strict JSON: %v", perr)
		}
		if err != nil {
			return
		}
		back, err := Parse(c)
		if err != nil {
			t.Fatalf("Compact output does not parse: %v", err)
		}
		if !v.Equal(back) {
			t.Fatalf("Compact changed the value: %s vs %s", v, back)
		}
		enc := v.AppendJSON(nil)
		again, err := Parse(enc)
		if err != nil {
			t.Fatalf("AppendJSON output does not parse: %v: %q", err, enc)
		}
		if !v.Equal(again) {
			t.Fatalf("AppendJSON changed the value: %s vs %s", v, again)
		}
	})
}

func FuzzAppendString(f *testing.F) {
	f.Add("a\"\\\x00\u2028\xff\xe2\x82")
	f.Fuzz(func(t *testing.T, s string) {
		enc := AppendString(nil, s)
		v, err := Parse(enc)
		if err != nil {
			t.Fatalf("AppendString output invalid: %v %q", err, enc)
		}
		got, _ := v.AsString()
		if got != DecodeUTF8([]byte(s)) {
			t.Fatalf("round trip: %q → %q", s, got)
		}
	})
}

var benchDoc = []byte(`{"id":"resp_01","object":"response","status":"completed","model":"policy","output":[{"type":"message","id":"msg_01","role":"assistant","status":"completed","content":[{"type":"output_text","text":"The answer is 4. Grüß dich, 東京 — ok","annotations":[]}]},{"type":"function_call","call_id":"c1","name":"calc","arguments":"{\"x\": 1, \"y\": [1.5, 2e3]}"}],"usage":{"input_tokens":12,"output_tokens":2,"total_tokens":14,"input_tokens_details":{"cached_tokens":0},"output_tokens_details":{"reasoning_tokens":0}},"temperature":0.7,"top_p":1.0}`)

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchDoc)))
	for b.Loop() {
		if _, err := Parse(benchDoc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompact(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchDoc)))
	buf := make([]byte, 0, len(benchDoc))
	for b.Loop() {
		var err error
		if buf, err = Compact(buf[:0], benchDoc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValid(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchDoc)))
	for b.Loop() {
		if !Valid(benchDoc) {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	v, err := Parse(benchDoc)
	require.NoError(b, err)
	b.ReportAllocs()
	buf := make([]byte, 0, len(benchDoc))
	for b.Loop() {
		buf = v.AppendJSON(buf[:0])
	}
}

func BenchmarkAppendFloat(b *testing.B) {
	b.ReportAllocs()
	buf := make([]byte, 0, 32)
	for b.Loop() {
		buf = AppendFloat(buf[:0], 1786032154.1234567)
	}
}

func TestCollapseDuplicates(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"no duplicates unchanged", `{"a":[1,{"b":2}],"c":3}`, `{"a":[1,{"b":2}],"c":3}`},
		{"first position last value", `{"a":1,"b":2,"a":3}`, `{"a":3,"b":2}`},
		{"nested in array", `[{"x":1,"x":2},{"y":1}]`, `[{"x":2},{"y":1}]`},
		{"nested in object", `{"o":{"k":1,"k":{"z":1,"z":2}},"p":0}`, `{"o":{"k":{"z":2}},"p":0}`},
		{"scalar", `"s"`, `"s"`},
		{"large object (map path)", manyKeys(20, true), manyKeys(20, false)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Parse([]byte(tc.in))
			require.NoError(t, err)
			before := v.String()
			got := v.CollapseDuplicates()
			assert.Equal(t, tc.want, got.String())
			assert.Equal(t, before, v.String(), "input not modified")
			py, err := ParsePython([]byte(tc.in))
			require.NoError(t, err)
			assert.True(t, py.Equal(got), "same as json.loads")
		})
	}
}

// manyKeys builds {"k0":0,...,"k<n-1>":n-1}, with a trailing duplicate "k0":"last" when dup, or
// the collapsed form (k0 first, holding "last") when not.
func manyKeys(n int, dup bool) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		if i == 0 && !dup {
			b.WriteString(`"k0":"last"`)
			continue
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":` + strconv.Itoa(i))
	}
	if dup {
		b.WriteString(`,"k0":"last"`)
	}
	b.WriteString("}")
	return b.String()
}

// conversationDoc returns a request body of about 1 MiB the way SDK clients send one: compact,
// 200 messages of mostly ASCII prose with escaped newlines and some non-ASCII text.
func conversationDoc() []byte {
	line := `The quick brown fox jumps over the lazy dog; Grüß dich, 東京 — \"ok\".\n`
	var b strings.Builder
	b.WriteString(`{"model":"policy","stream":true,"temperature":0.7,"messages":[`)
	for i := range 200 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"role":"user","content":"`)
		b.WriteString(strings.Repeat(line, 70))
		b.WriteString(`"}`)
	}
	b.WriteString(`],"max_tokens":1024}`)
	return []byte(b.String())
}

// BenchmarkCompactLarge compacts a large body that needs it (a space after every colon and comma)
// and checks one that does not (PayloadFacts.RequestPayload's fast path, capture/payload.go).
func BenchmarkCompactLarge(b *testing.B) {
	compact := conversationDoc()
	spaced := []byte(strings.NewReplacer(`":`, `": `, `,"`, `, "`).Replace(string(compact)))
	b.Run("Compact", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(spaced)))
		buf := make([]byte, 0, len(spaced))
		for b.Loop() {
			var err error
			if buf, err = Compact(buf[:0], spaced); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("CheckCompactString", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(compact)))
		s := string(compact)
		for b.Loop() {
			if ok, err := CheckCompactString(s, MaxDepth); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
}
