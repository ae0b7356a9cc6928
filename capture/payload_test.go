package capture

import (
	"encoding/json"
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

// TestSharedPayload checks that the sharing variants give exactly the copying ones' results, and
// share the body's memory only for compact strict JSON objects.
func TestSharedPayload(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		shared bool
	}{
		{name: "empty", body: ""},
		{name: "compact object", body: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, shared: true},
		{name: "spaced object", body: `{"model": "m"}`},
		{name: "pretty-printed object", body: "{\n  \"model\": \"m\"\n}"},
		{name: "lone brace", body: "{"},
		{name: "leading space", body: ` {"a":1}`},
		{name: "array", body: `[1,2]`},
		{name: "invalid", body: `{"a":}`},
		{name: "trailing data", body: `{"a":1}x`},
		{name: "invalid UTF-8", body: "{\"a\":\"\xff\"}"},
		{name: "too deep", body: strings.Repeat(`{"a":`, PayloadMaxDepth+1) + "1" + strings.Repeat("}", PayloadMaxDepth+1)},
		{name: "not JSON", body: "plain text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, f := range []struct {
				name         string
				copying, shr func([]byte) (json.RawMessage, *string)
			}{
				{"request", RequestPayload, new(PayloadFacts).RequestPayload},
				{"response", ResponsePayload, new(PayloadFacts).ResponsePayload},
			} {
				body := []byte(tt.body)
				wantObj, wantRaw := f.copying(body)
				obj, raw := f.shr(body)
				assert.Equal(t, wantObj, obj, f.name)
				assert.Equal(t, wantRaw, raw, f.name)
				sharesBody := len(obj) > 0 && &obj[0] == &body[0]
				assert.Equal(t, tt.shared, sharesBody, f.name+": shares the body's memory")
			}
		})
	}
}
