package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/ojson"
)

func TestNewRedactorErrors(t *testing.T) {
	tests := []struct {
		name            string
		paths, patterns []string
		want            string
	}{
		{name: "nothing", want: "no JSON path and no pattern given"},
		{name: "no dollar", paths: []string{"a.b"}, want: `JSON path "a.b": must start with "$"`},
		{name: "bare dollar", paths: []string{"$"}, want: `JSON path "$": needs at least one segment`},
		{name: "empty member", paths: []string{"$.a..", "$.x"}, want: `JSON path "$.a..": ".." must be followed by a member name`},
		{name: "dot at end", paths: []string{"$.a."}, want: `"." must be followed by a member name or "*"`},
		{name: "junk", paths: []string{"$a"}, want: `unexpected "a": segments start with ".", ".." or "["`},
		{name: "unterminated bracket", paths: []string{"$.a[1"}, want: `unterminated "["`},
		{name: "negative index", paths: []string{"$.a[-1]"}, want: `index "-1" must be "*" or a non-negative decimal integer`},
		{name: "padded index", paths: []string{"$.a[01]"}, want: `index "01"`},
		{name: "unterminated quote", paths: []string{`$["a`}, want: "unterminated quoted member name"},
		{name: "quote without bracket", paths: []string{`$["a"x`}, want: `a quoted member name must be followed by "]"`},
		{name: "bad escape", paths: []string{`$["a\q"]`}, want: `member name "a\q"`},
		{name: "bad pattern", patterns: []string{"sk-("}, want: `pattern "sk-(": error parsing regexp`},
		{name: "empty-matching pattern", patterns: []string{"x*"}, want: `pattern "x*" matches the empty string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewRedactor(tt.paths, tt.patterns)
			require.Error(t, err)
			assert.Nil(t, r)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestParseJSONPath(t *testing.T) {
	tests := []struct {
		path string
		want []pathSegment
	}{
		{"$.a", []pathSegment{{kind: segMember, name: "a"}}},
		{"$.messages[*].content", []pathSegment{{kind: segMember, name: "messages"}, {kind: segAnyIndex}, {kind: segMember, name: "content"}}},
		{"$..api_key", []pathSegment{{kind: segDescend, name: "api_key"}}},
		{"$.*[2]", []pathSegment{{kind: segAnyMember}, {kind: segIndex, index: 2}}},
		{`$["a.b[c]"]["\u00e9"]`, []pathSegment{{kind: segMember, name: "a.b[c]"}, {kind: segMember, name: "é"}}},
		{"$[0]", []pathSegment{{kind: segIndex}}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := parseJSONPath(tt.path)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func strPtr(s string) *string { return &s }

func TestRedactExchange(t *testing.T) {
	const sse = "event: x\r\ndata: {\"delta\":\"key sk-abc123 here\",\"n\":1.50}\r\n\r\n: comment sk-zzz999\n" +
		"data: [DONE]\n\ndata:{\"api_key\":\"v\"}\r\rdata: not json sk-qqq111\n"
	tests := []struct {
		name            string
		paths, patterns []string
		in, want        capture.Exchange
	}{
		{
			name:  "paths in the request object keep order, duplicates and number text",
			paths: []string{"$.metadata.user", "$.messages[*].content", "$..api_key"},
			in: capture.Exchange{Request: json.RawMessage(
				`{"model":"m","n":1.50,"metadata":{"user":"alice","user":"bob","x":1e2},"messages":[{"role":"user","content":"hi"},{"content":{"deep":[1]}}],"tools":[{"api_key":{"api_key":"k"}}]}`)},
			want: capture.Exchange{Request: json.RawMessage(
				`{"model":"m","n":1.50,"metadata":{"user":"[REDACTED]","user":"[REDACTED]","x":1e2},"messages":[{"role":"user","content":"[REDACTED]"},{"content":"[REDACTED]"}],"tools":[{"api_key":"[REDACTED]"}]}`)},
		},
		{
			name:  "nothing matched keeps the bytes (escapes as sent)",
			paths: []string{"$.absent", "$.model[0]", "$.a[5]"}, patterns: []string{"sk-[a-z0-9]+"},
			in:   capture.Exchange{Request: json.RawMessage(`{"model":"\u006d","a":[1]}`)},
			want: capture.Exchange{Request: json.RawMessage(`{"model":"\u006d","a":[1]}`)},
		},
		{
			name:     "patterns see decoded string values only",
			patterns: []string{`sk-[a-z0-9]+`, `"`},
			in:       capture.Exchange{Request: json.RawMessage(`{"k":"use sk-abc123 \"quoted\"","sk-abc123":1}`)},
			want:     capture.Exchange{Request: json.RawMessage(`{"k":"use [REDACTED] [REDACTED]quoted[REDACTED]","sk-abc123":1}`)},
		},
		{
			name:  "index and any member",
			paths: []string{"$.choices[1].message", "$.usage.*"},
			in:    capture.Exchange{Response: json.RawMessage(`{"choices":[{"message":"a"},{"message":"b"}],"usage":{"i":1,"o":2}}`)},
			want:  capture.Exchange{Response: json.RawMessage(`{"choices":[{"message":"a"},{"message":"[REDACTED]"}],"usage":{"i":"[REDACTED]","o":"[REDACTED]"}}`)},
		},
		{
			name:  "SSE response_raw: JSON data lines by path and pattern, other lines by pattern, line ends kept",
			paths: []string{"$..api_key"}, patterns: []string{`sk-[a-z0-9]+`},
			in: capture.Exchange{ResponseRaw: strPtr(sse)},
			want: capture.Exchange{ResponseRaw: strPtr("event: x\r\ndata: {\"delta\":\"key [REDACTED] here\",\"n\":1.50}\r\n\r\n: comment [REDACTED]\n" +
				"data: [DONE]\n\ndata:{\"api_key\":\"[REDACTED]\"}\r\rdata: not json [REDACTED]\n")},
		},
		{
			name:     "raw non-JSON text (HTML) by pattern",
			patterns: []string{`token=\w+`},
			in:       capture.Exchange{RequestRaw: strPtr("<html>\n<p>token=abc</p>\n</html>"), ResponseRaw: strPtr("no match")},
			want:     capture.Exchange{RequestRaw: strPtr("<html>\n<p>[REDACTED]</p>\n</html>"), ResponseRaw: strPtr("no match")},
		},
		{
			name:  "raw JSON that is not an object (array) by path",
			paths: []string{"$[1]"},
			in:    capture.Exchange{ResponseRaw: strPtr(`[1, 2, 3]`), RequestRaw: strPtr(`{"a":NaN}`)},
			want:  capture.Exchange{ResponseRaw: strPtr(`[1,"[REDACTED]",3]`), RequestRaw: strPtr(`{"a":NaN}`)},
		},
		{
			name:  "raw JSON that Python's json.loads reads (NaN, a 30-digit integer, 1e400): paths applied to that reading",
			paths: []string{"$.metadata.user_id", "$..api_key"},
			in: capture.Exchange{
				RequestRaw:  strPtr(`{"model":"m","temperature":NaN,"metadata":{"user_id":"alice"},"n":123456789012345678901234567890,"x":1e400}`),
				ResponseRaw: strPtr("data: {\"api_key\":\"k1\",\"n\":123456789012345678901234567890}\n\ndata: {\"api_key\":\"k2\"}\n\n"),
			},
			want: capture.Exchange{
				RequestRaw:  strPtr(`{"model":"m","temperature":null,"metadata":{"user_id":"[REDACTED]"},"n":123456789012345678901234567890,"x":null}`),
				ResponseRaw: strPtr("data: {\"api_key\":\"[REDACTED]\",\"n\":123456789012345678901234567890}\n\ndata: {\"api_key\":\"[REDACTED]\"}\n\n"),
			},
		},
		{
			name:  "JSON-looking text no reading parses is withheld when a path may select in it",
			paths: []string{"$.metadata.user_id"},
			in: capture.Exchange{
				RequestRaw:  strPtr(`{"metadata":{"user_id":"alice"}}x`),
				ResponseRaw: strPtr("data: {\"user_id\":\"bob\"} trailing\n\ndata: {\"model\":\"m\"} trailing\n\n"),
			},
			want: capture.Exchange{
				RequestRaw:  strPtr(RedactedText),
				ResponseRaw: strPtr("data: [REDACTED]\n\ndata: {\"model\":\"m\"} trailing\n\n"),
			},
		},
		{
			name:  "a path naming no member withholds any JSON-looking text no reading parses, but not [DONE]",
			paths: []string{"$[*]"},
			in:    capture.Exchange{ResponseRaw: strPtr("data: [1,2\n\ndata: [DONE]\n\ndata: [DONE] \n\n")},
			want:  capture.Exchange{ResponseRaw: strPtr("data: [REDACTED]\n\ndata: [DONE]\n\ndata: [DONE] \n\n")},
		},
		{
			name:  "an event's JSON over several data lines is redacted as their join (one data line out)",
			paths: []string{"$..user_id"}, patterns: []string{`SECRET[0-9]+`},
			in: capture.Exchange{ResponseRaw: strPtr("event: response.completed\r\ndata: {\r\ndata:   \"user_id\": \"u1\",\r\ndata:   \"n\": 1.50\r\ndata: }\r\n\r\n" +
				"data: {\"a\":\ndata: \"SECRET12\"}\n\n" +
				"data: {\"user\":\ndata: 1}\n\n" +
				"data: {\"user_id\":\ndata: \"u2\"} x\n\n" +
				"data: one\ndata: SECRET34 two\n\n")},
			want: capture.Exchange{ResponseRaw: strPtr("event: response.completed\r\ndata: {\"user_id\":\"[REDACTED]\",\"n\":1.50}\r\n\r\n" +
				"data: {\"a\":\"[REDACTED]\"}\n\n" +
				"data: {\"user\":\ndata: 1}\n\n" +
				"data: [REDACTED]\n\n" +
				"data: one\ndata: [REDACTED] two\n\n")},
		},
		{
			name:  "one event's data lines (CR ends) whose join no reading parses: withheld as one event",
			paths: []string{"$..api_key"},
			in:    capture.Exchange{ResponseRaw: strPtr("data:{\"api_key\":\"v\"}\rdata: not json\n\ndata: ok\n")},
			want:  capture.Exchange{ResponseRaw: strPtr("data: [REDACTED]\n\ndata: ok\n")},
		},
		{
			name:  "a name behind an escape may be there: withheld",
			paths: []string{"$.metadata.user_id"},
			in:    capture.Exchange{RequestRaw: strPtr(`{"metadata":{"user\u005fid":"alice"}} x`)},
			want:  capture.Exchange{RequestRaw: strPtr(RedactedText)},
		},
		{
			name:  "text that does not start like JSON: no path can apply, kept",
			paths: []string{"$.metadata.user_id"},
			in:    capture.Exchange{RequestRaw: strPtr(`user_id=alice`)},
			want:  capture.Exchange{RequestRaw: strPtr(`user_id=alice`)},
		},
		{
			name:     "null payloads stay null",
			patterns: []string{"x"},
			in:       capture.Exchange{ModelCallID: "id"},
			want:     capture.Exchange{ModelCallID: "id"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewRedactor(tt.paths, tt.patterns)
			require.NoError(t, err)
			ex := tt.in
			r.redactExchange(&ex)
			assert.Equal(t, string(tt.want.Request), string(ex.Request))
			assert.Equal(t, string(tt.want.Response), string(ex.Response))
			assert.Equal(t, tt.want.RequestRaw, ex.RequestRaw)
			assert.Equal(t, tt.want.ResponseRaw, ex.ResponseRaw)
			for _, obj := range []json.RawMessage{ex.Request, ex.Response} {
				if obj != nil {
					v, err := ojson.Parse(obj)
					require.NoError(t, err, "still strict JSON")
					assert.Equal(t, ojson.KindObject, v.Kind(), "still an object")
				}
			}
		})
	}
	t.Run("nil redactor does nothing", func(t *testing.T) {
		var r *Redactor
		ex := capture.Exchange{Request: json.RawMessage(`{"a":1}`)}
		r.redactExchange(&ex)
		assert.Equal(t, `{"a":1}`, string(ex.Request))
	})
}

// TestProxyRedaction: configured paths and patterns never reach the span or the capture file, in
// the request, the reassembled response and the SSE response_raw; the client and the upstream see
// the exact bytes.
func TestProxyRedaction(t *testing.T) {
	const secret = "sk-live-0123456789"
	ev1 := "data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"your key is " + secret + "\"}}]}\n\n"
	sse := ev1 + chatEvent2 + chatDone
	reqBody := `{"model":"m","stream":true,"user":"alice@example.com","messages":[{"role":"user","content":"my key: ` + secret + `"}]}`
	gotReq := make(chan string, 1)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotReq <- string(b)
		sseHeaders(w)
		_, _ = io.WriteString(w, sse)
	})
	red, err := NewRedactor([]string{"$.user"}, []string{`sk-[a-z]+-[0-9]+`})
	require.NoError(t, err)
	env := newProxyEnv(t, up.URL, nil, WithRedaction(red), WithMessageContent(true))
	_, body, err := env.post(t, "/ng-rollout/red/v1/chat/completions", reqBody, nil)
	require.NoError(t, err)
	assert.Equal(t, sse, string(body), "the client gets the upstream's bytes")
	assert.Equal(t, reqBody, <-gotReq, "the upstream gets the client's bytes")

	_, lines := env.records(t, "red")
	require.Len(t, lines, 1)
	line := lines[0]
	assert.NotContains(t, line, secret)
	assert.NotContains(t, line, "alice@example.com")
	assert.Contains(t, line, `"user":"[REDACTED]"`)
	assert.Contains(t, line, `"content":"my key: [REDACTED]"`)
	rec := env.record(t, "red")
	assert.Nil(t, rec["error_category"])
	content := rec["response"].(map[string]any)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]
	assert.Equal(t, "your key is [REDACTED]lo", content, "the reassembled response is redacted")
	assert.Contains(t, rec["response_raw"], `"content":"your key is [REDACTED]"`)
	for _, kv := range env.spans.GetSpans()[0].Attributes {
		assert.NotContains(t, kv.Value.Emit(), secret, "%s", kv.Key)
		assert.NotContains(t, kv.Value.Emit(), "alice@example.com", "%s", kv.Key)
	}
	records, invalid, err := env.store.ReadAvailableModelCallRecords("red")
	require.NoError(t, err)
	assert.Zero(t, invalid)
	assert.Len(t, records, 1)
	assert.NotContains(t, env.logs.String(), secret)
}

// FuzzRedact: any payload, path and pattern never panic, a payload that was a JSON object stays
// a strict JSON object, and a raw text that is no strict JSON keeps its lines unless it is withheld
// whole.
func FuzzRedact(f *testing.F) {
	f.Add([]byte(`{"a":{"b":[1,"sk-1"]}}`), "$.a.b[1]", "sk-[0-9]")
	f.Add([]byte("data: {\"x\":\"y\"}\r\n\r\n"), "$..x", "y")
	f.Add([]byte(`{"a":1,"a":2}`), "$.*", "")
	f.Add([]byte{0xff, '{', '"'}, `$["\u0000"]`, ".")
	f.Fuzz(func(t *testing.T, payload []byte, path, pattern string) {
		var paths, patterns []string
		if path != "" {
			paths = []string{path}
		}
		if pattern != "" {
			patterns = []string{pattern}
		}
		r, err := NewRedactor(paths, patterns)
		if err != nil {
			return
		}
		obj, raw := capture.RequestPayload(payload)
		ex := capture.Exchange{Request: obj, RequestRaw: raw, Response: obj, ResponseRaw: raw}
		r.redactExchange(&ex)
		for _, o := range []json.RawMessage{ex.Request, ex.Response} {
			if obj != nil {
				v, err := ojson.ParseDepth(o, capture.PayloadMaxDepth)
				require.NoError(t, err)
				require.Equal(t, ojson.KindObject, v.Kind())
			}
		}
		if raw == nil {
			require.Nil(t, ex.RequestRaw)
		} else {
			require.NotNil(t, ex.RequestRaw)
			if _, err := ojson.Parse([]byte(*raw)); err != nil && *ex.RequestRaw != RedactedText {
				require.Equal(t, strings.Count(*raw, "\n"), strings.Count(*ex.RequestRaw, "\n"), "the line structure of text is kept")
			}
		}
	})
}

// TestRedactByteOrderMarkAndWideText: a body json.loads reads although it is no UTF-8 JSON text —
// one behind a UTF-8 byte order mark, one in UTF-16 or UTF-32 — keeps no selected value and no
// credential in its raw text. The BOM is read past (and kept); wide text is withheld whole when its
// ASCII reading would change, and kept when it would not.
func TestRedactByteOrderMarkAndWideText(t *testing.T) {
	const key = "sk-abcdefghijklmnopqrstuvwx"
	r, err := NewRedactor([]string{"$.metadata.user_id"}, []string{`tok-[0-9]+`})
	require.NoError(t, err)
	r = r.withSecrets([]string{key})
	const body = `{"model":"m","metadata":{"user_id":"alice"}}`
	const clean = `{"model":"m","metadata":{"team":"a"}}`
	raw := func(b []byte) *string { return capture.RawText(b) }
	for _, c := range []struct {
		name string
		in   *string
		want string // "" = kept unchanged
	}{
		{"UTF-8 BOM: the path applied, the mark kept", raw([]byte("\uFEFF" + body)), "\uFEFF" + `{"model":"m","metadata":{"user_id":"[REDACTED]"}}`},
		{"UTF-8 BOM, nothing selected: kept", raw([]byte("\uFEFF" + clean)), ""},
		{"UTF-8 BOM, JSON no reading parses: withheld", raw([]byte("\uFEFF" + body + "x")), RedactedText},
		{"UTF-16LE with its BOM", raw(append([]byte{0xFF, 0xFE}, utf16Bytes(body, false)...)), RedactedText},
		{"UTF-16BE without a BOM", raw(utf16Bytes(body, true)), RedactedText},
		{"UTF-32LE", raw(utf32LEBytes(body)), RedactedText},
		{"UTF-16LE holding the call's key", raw(utf16Bytes(`{"error":"bad key `+key+`"}`, false)), RedactedText},
		{"UTF-16LE holding a pattern's match", raw(utf16Bytes(`{"error":"tok-123"}`, false)), RedactedText},
		{"UTF-16LE with nothing to redact: kept", raw(utf16Bytes(clean, false)), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := *c.in
			ex := capture.Exchange{RequestRaw: c.in}
			r.redactExchange(&ex)
			require.NotNil(t, ex.RequestRaw)
			want := c.want
			if want == "" {
				want = in
			}
			assert.Equal(t, want, *ex.RequestRaw)
		})
	}
}

func utf16Bytes(s string, bigEndian bool) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		if bigEndian {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	return b
}

func utf32LEBytes(s string) []byte {
	var b []byte
	for _, r := range s {
		b = append(b, byte(r), byte(r>>8), byte(r>>16), byte(r>>24))
	}
	return b
}
