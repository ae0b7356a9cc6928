package ojson

import (
	"strings"
	"testing"
)

// TestCompactWhole pins the fast path's verdicts: true only for a strict, compact value within
// the depth limit whose numbers need no exact range check; every other text is left to
// compactTokens (false), which the differential fuzzers hold to ParseDepth and encoding/json.
func TestCompactWhole(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, c := range []struct {
		src   string
		depth int
		want  bool
	}{
		{`{"a":1,"b":[true,false,null],"c":"x y\t"}`, 10, true},
		{`{"k":"say \"hi\" \\ \u00e9 end","n":-12345678901234567}`, 10, true},
		{`"just a string"`, 10, true},
		{`{"a": 1}`, 10, false},                         // whitespace between tokens
		{"{\"a\":1}\n", 10, false},                      // trailing whitespace
		{`{"a":1.5,"b":-0.25e-12,"c":6E+23}`, 10, true}, // floats whose text shows them in range
		{`{"a":1e100}`, 10, false},                      // a three-digit exponent: checked exactly
		{`{"a":1e400}`, 10, false},                      // overflows float64
		{`{"a":1234567890123456789}`, 10, false},        // 19 characters: checked exactly
		{`{"a":-12345678901234567}`, 10, true},          // 18 characters
		{deep(10), 10, true},
		{deep(11), 10, false},
		{`{"a":1}{}`, 10, false},              // data after the value
		{`{"a":01}`, 10, false},               // RFC 8259: no leading zero
		{`{"a":"` + "\xff" + `"}`, 10, false}, // invalid UTF-8
		{`{"a":"\ud800"}`, 10, false},         // lone surrogate
		{`{"a":"unterminated}`, 10, false},
		{`{"a":1,}`, 10, false},
		{`{"a":1,"a":2}`, 10, true}, // duplicate keys are kept (D6)
		{``, 10, false},
	} {
		if got := compactWhole([]byte(c.src), c.depth); got != c.want {
			t.Errorf("compactWhole(%q, %d) = %v, want %v", c.src, c.depth, got, c.want)
		}
		requireSameCompaction(t, []byte(c.src), c.depth)
	}
}

// BenchmarkCompactCompact compares compacting an already compact record payload token by token
// (compactTokens) with the fast path compaction takes for it (compactText).
func BenchmarkCompactCompact(b *testing.B) {
	src := []byte(`{"id":"chatcmpl-bench-1234567890","object":"chat.completion","created":1764000000,"model":"policy-model","choices":[{"index":0,"message":{"role":"assistant","content":"The answer is 42. Let me know if you need anything else."},"finish_reason":"stop","logprobs":null}],"usage":{"prompt_tokens":24,"completion_tokens":14,"total_tokens":38,"prompt_tokens_details":{"cached_tokens":0}}}`)
	dst := make([]byte, 0, 2*len(src))
	b.Run("tokens", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			if _, _, err := compactTokens(nil, dst[:0], src, 1000, false); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("whole", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			if _, err := CompactDepth(dst[:0], src, 1000); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestParseScalar pins which texts Parse reads without its parser: the value must be the parser's
// (requireSameCompaction compares them), and every text it declines is left to the parser.
func TestParseScalar(t *testing.T) {
	for _, c := range []struct {
		src  string
		want bool
	}{
		{`"policy-model"`, true}, {`""`, true}, {`"é ü 🙂"`, true}, {`-0`, true}, {`0`, true},
		{`-12345678901234567`, true}, {`123456789012345678`, true},
		{`1234567890123456789`, false}, {`"a\"b"`, false}, {`"a\nb"`, false}, {"\"a\x01b\"", false},
		{"\"\xff\"", false}, {`"`, false}, {`01`, false}, {`-`, false}, {`1.5`, false}, {`1e3`, false},
		{` "x"`, false}, {`"x" `, false}, {`true`, false}, {`"a"b"`, false},
	} {
		_, got := parseScalar([]byte(c.src))
		if got != c.want {
			t.Errorf("parseScalar(%q) ok = %v, want %v", c.src, got, c.want)
		}
		requireSameCompaction(t, []byte(c.src), MaxDepth)
	}
}

// TestWalkCompact runs both walks over compact texts whose events are easy to get wrong: empty
// containers, nesting past the visiting depth, escaped quotes before a delimiter, a top-level scalar.
func TestWalkCompact(t *testing.T) {
	for _, src := range []string{
		`{"a":1,"b":[{"c":"x"},2],"\u0064":{"e":{"f":null}}}`, `[{},[],{"k":[]},""]`,
		`{"q":"a\"","r":"\\\\","s":["a\\\"",{"t":"ya"}]}`, `"za"`, `-12`, `[[[[["a"]]]],true]`,
		`{"a":{"a":{"a":{"a":"a"}}},"a":"b"}`,
	} {
		if !compactWhole([]byte(src), 10) {
			t.Fatalf("%q: not taken whole", src)
		}
		requireSameWalk(t, []byte(src), 10)
	}
}
