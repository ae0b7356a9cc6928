package capture

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPayloads(t *testing.T) {
	deep := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	tests := []struct {
		name    string
		body    string
		wantObj string // "" = nil
		wantRaw *string
	}{
		{"empty", "", "", nil},
		{"object compacted, text kept", "{ \"temperature\" : 1.50 ,\n \"e\":\"caf\\u00e9\", \"n\":1e3 }", `{"temperature":1.50,"e":"caf\u00e9","n":1e3}`, nil},
		{"leading whitespace", "\n {}", `{}`, nil},
		{"duplicates kept", `{"a":1,"a":2}`, `{"a":1,"a":2}`, nil},
		{"array is raw", `[{"role":"user"}]`, "", ptrTo(`[{"role":"user"}]`)},
		{"not json", `{not-json`, "", ptrTo(`{not-json`)},
		{"scalar", `"x"`, "", ptrTo(`"x"`)},
		{"NaN is not strict", `{"a":NaN}`, "", ptrTo(`{"a":NaN}`)},
		{"int beyond 64 bits", `{"a":18446744073709551616}`, "", ptrTo(`{"a":18446744073709551616}`)},
		{"BOM", "\uFEFF{}", "", ptrTo("\uFEFF{}")},
		{"invalid UTF-8 replaced in raw", "{\"a\":\"\xff\"}", "", ptrTo("{\"a\":\"\uFFFD\"}")},
		{"trailing data", `{} x`, "", ptrTo(`{} x`)},
		{"depth at limit", deep(PayloadMaxDepth), deep(PayloadMaxDepth), nil},
		{"too deep is raw", deep(PayloadMaxDepth + 1), "", ptrTo(deep(PayloadMaxDepth + 1))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, fn := range []func([]byte) ([]byte, *string){
				func(b []byte) ([]byte, *string) { return RequestPayload(b) },
				func(b []byte) ([]byte, *string) { return ResponsePayload(b) },
			} {
				obj, raw := fn([]byte(tc.body))
				if tc.wantObj == "" {
					assert.Nil(t, obj)
				} else {
					assert.Equal(t, tc.wantObj, string(obj))
				}
				assert.Equal(t, tc.wantRaw, raw)
			}
		})
	}
	assert.Nil(t, RawText(nil))
	assert.Equal(t, "a\uFFFDb", *RawText([]byte("a\xe2\x82b")), "one U+FFFD per maximal subpart, as Python")
}

func ptrTo(s string) *string { return &s }
