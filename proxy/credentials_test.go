package proxy

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

func TestCredentialSecrets(t *testing.T) {
	tests := []struct {
		name string
		hdr  map[string]string
		opts []Option
		want []string
	}{
		{name: "bearer token", hdr: map[string]string{"Authorization": "Bearer sk-proj-0123456789"}, want: []string{"sk-proj-0123456789"}},
		{name: "scheme any case, spaces", hdr: map[string]string{"Authorization": "  bearer   sk-proj-0123456789 "}, want: []string{"sk-proj-0123456789"}},
		{name: "no scheme", hdr: map[string]string{"Authorization": "sk-proj-0123456789"}, want: []string{"sk-proj-0123456789"}},
		{name: "basic", hdr: map[string]string{"Proxy-Authorization": "Basic dXNlcjpwYXNzd29yZA=="}, opts: []Option{WithSecretHeaders("proxy-authorization")}, want: []string{"dXNlcjpwYXNzd29yZA=="}},
		{name: "x-api-key and api-key", hdr: map[string]string{"x-api-key": "sk-ant-api03-abcdef", "api-key": "azure-0123456789"}, want: []string{"sk-ant-api03-abcdef", "azure-0123456789"}},
		{name: "secret header", hdr: map[string]string{"X-Custom-Token": "tok-0123456789"}, opts: []Option{WithSecretHeaders("x-custom-token", " X-Other ")}, want: []string{"tok-0123456789"}},
		{name: "not a secret header", hdr: map[string]string{"X-Custom-Token": "tok-0123456789", "Openai-Organization": "org-0123456789"}},
		{name: "placeholder keys are too short", hdr: map[string]string{"Authorization": "Bearer EMPTY", "X-Api-Key": "dummy", "Api-Key": "1234567"}},
		{name: "shortest secret", hdr: map[string]string{"X-Api-Key": "12345678"}, want: []string{"12345678"}},
		{name: "one value once", hdr: map[string]string{"Authorization": "Bearer sk-proj-0123456789", "X-Api-Key": "sk-proj-0123456789"}, want: []string{"sk-proj-0123456789"}},
		{name: "off", hdr: map[string]string{"Authorization": "Bearer sk-proj-0123456789"}, opts: []Option{WithCredentialRedaction(false)}},
		{name: "off then on", hdr: map[string]string{"Authorization": "Bearer sk-proj-0123456789"}, opts: []Option{WithCredentialRedaction(false), WithCredentialRedaction(true)}, want: []string{"sk-proj-0123456789"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.hdr {
				h.Set(k, v)
			}
			c := newConfig(tt.opts)
			assert.ElementsMatch(t, tt.want, c.creds.secrets(h))
		})
	}
}

// TestProxyRedactsEchoedCredentials: issue #14 finding 10. An upstream that echoes the request's
// API key — in a JSON or text error body, escaped in JSON, in an SSE stream split across reads at
// every offset of the key, in a response header — gets it into neither the record nor the span by
// default, while the client receives the upstream's bytes unchanged; WithCredentialRedaction(false)
// captures it (the test's control), and a placeholder key is never treated as a secret.
func TestProxyRedactsEchoedCredentials(t *testing.T) {
	const key = "sk-proj-Zx81QpLm4nRt7VwYb2Kc"
	escaped := `\u0073k-proj-Zx81QpLm4nRt7VwYb2Kc` // "sk-…" with its first letter escaped
	type answer struct {
		status      int
		contentType string
		parts       []string // written and flushed one by one
	}
	sseAt := func(cut int) answer {
		ev := "data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"key=" + key + "\"}}]}\n\n"
		full := ev + chatEvent2 + chatDone
		at := strings.Index(full, key) + cut
		return answer{status: 200, contentType: "text/event-stream", parts: []string{full[:at], full[at:]}}
	}
	cases := map[string]answer{
		"json":         {status: 401, contentType: "application/json", parts: []string{`{"error":{"message":"Incorrect API key provided: ` + key + `.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`}},
		"json escaped": {status: 401, contentType: "application/json", parts: []string{`{"error":{"message":"bad key ` + escaped + `","type":"invalid_request_error"}}`}},
		"text":         {status: 500, contentType: "text/plain", parts: []string{"upstream: key " + key + " refused\nagain: " + key + "\n"}},
		"html":         {status: 502, contentType: "text/html", parts: []string{"<html><body>Bearer " + key + "</body></html>"}},
	}
	for cut := 0; cut <= len(key); cut++ {
		cases[fmt.Sprintf("sse cut %02d", cut)] = sseAt(cut)
	}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		a := cases[r.Header.Get("X-Case")]
		w.Header().Set("Content-Type", a.contentType)
		w.Header().Set("X-Echo-Key", r.Header.Get("Authorization")+r.Header.Get("X-Api-Key")+r.Header.Get("Api-Key")+r.Header.Get("X-Custom-Token"))
		w.WriteHeader(a.status)
		for _, p := range a.parts {
			_, _ = w.Write([]byte(p))
			w.(http.Flusher).Flush()
		}
	})
	headersFor := map[string]map[string]string{
		"authorization":   {"Authorization": "Bearer " + key},
		"x-api-key":       {"X-Api-Key": key},
		"api-key":         {"Api-Key": key},
		"--secret-header": {"X-Custom-Token": key},
	}
	reqBody := `{"model":"m","stream":true,"messages":[{"role":"user","content":"my key is ` + key + `"}]}`

	run := func(t *testing.T, env *testEnv, rid, name string, hdr map[string]string) (line string) {
		t.Helper()
		a := cases[name]
		h := map[string]string{"X-Case": name}
		for k, v := range hdr {
			h[k] = v
		}
		resp, body, err := env.post(t, "/ng-rollout/"+rid+"/v1/chat/completions", reqBody, h)
		require.NoError(t, err)
		assert.Equal(t, a.status, resp.StatusCode)
		assert.Equal(t, strings.Join(a.parts, ""), string(body), "the client gets the upstream's bytes")
		for _, v := range hdr {
			assert.Equal(t, v, resp.Header.Get("X-Echo-Key"), "and its headers, the echoed key among them")
		}
		_, lines := env.records(t, rid)
		require.Len(t, lines, 1)
		return lines[0]
	}

	env := newProxyEnv(t, up.URL, nil, WithMessageContent(true), WithSecretHeaders("X-Custom-Token"))
	n := 0
	for hname, hdr := range headersFor {
		for name := range cases {
			if hname != "authorization" && !strings.HasPrefix(name, "sse cut 0") && name != "json" {
				continue // every header with a few answers; every answer with Authorization
			}
			t.Run(hname+"/"+name, func(t *testing.T) {
				n++
				rid := fmt.Sprintf("cred-%d", n)
				line := run(t, env, rid, name, hdr)
				assert.NotContains(t, line, key)
				assert.NotContains(t, line, "Zx81QpLm4nRt7VwYb2Kc", "no part of the key is left")
				assert.Contains(t, line, "my key is [REDACTED]", "the request")
				assert.Contains(t, line, RedactedText, "the response")
				rec := env.record(t, rid)
				if strings.HasPrefix(name, "sse") {
					assert.Nil(t, rec["error_category"])
					assert.Contains(t, rec["response_raw"], `"content":"key=[REDACTED]"`)
				}
			})
		}
	}
	for _, s := range env.spans.GetSpans() {
		for _, kv := range s.Attributes {
			assert.NotContains(t, kv.Value.Emit(), "Zx81QpLm4nRt7VwYb2Kc", "%s", kv.Key)
		}
	}
	assert.NotContains(t, env.logs.String(), "Zx81QpLm4nRt7VwYb2Kc")

	t.Run("off", func(t *testing.T) {
		env := newProxyEnv(t, up.URL, nil, WithCredentialRedaction(false))
		for _, name := range []string{"json", "text", "sse cut 05"} {
			line := run(t, env, "off-"+strings.ReplaceAll(name, " ", "-"), name, headersFor["authorization"])
			assert.Contains(t, line, key, "raw capture holds the echoed key")
		}
	})
	t.Run("placeholder key", func(t *testing.T) {
		env := newProxyEnv(t, up.URL, nil)
		line := run(t, env, "placeholder", "text", map[string]string{"Authorization": "Bearer EMPTY"})
		assert.Contains(t, line, key, "only the request's own credentials are redacted")
		assert.NotContains(t, line, RedactedText)
	})
}

// FuzzCredentialRedaction: any payload and credential never panic; a JSON object stays a strict
// JSON object without the credential in its string values, and text that is not JSON loses every
// literal occurrence of it, keeping its lines.
func FuzzCredentialRedaction(f *testing.F) {
	f.Add([]byte(`{"error":{"message":"bad key sk-0123456789"}}`), "sk-0123456789")
	f.Add([]byte(`{"m":"\u0073k-0123456789","sk-0123456789":1}`), "sk-0123456789")
	f.Add([]byte("data: {\"x\":\"tok/en\\/abc\"}\n\nkey tok/en/abc\n"), "tok/en/abc")
	f.Add([]byte("plain sk-aaaaaaaaaa sk-aaaaaaaaaa\r\n"), "sk-aaaaaaaaaa")
	f.Add([]byte(`{"k":"\u0073k-live-abcdefghijklmnop1234","n":1e400}`), "sk-live-abcdefghijklmnop1234")
	f.Fuzz(func(t *testing.T, payload []byte, secret string) {
		if len(secret) < MinSecretBytes || strings.ContainsAny(secret, "\r\n[]") {
			return // header values hold no line break; "[REDACTED]" itself must not spell the secret
		}
		r := (*Redactor)(nil).withSecrets([]string{secret})
		obj, raw := capture.RequestPayload(payload)
		ex := capture.Exchange{Request: obj, RequestRaw: raw}
		r.redactExchange(&ex)
		if obj != nil {
			v, err := ojson.ParseDepth(ex.Request, capture.PayloadMaxDepth)
			require.NoError(t, err)
			require.Equal(t, ojson.KindObject, v.Kind())
			var strs []string
			collectStrings(v, &strs)
			for _, s := range strs {
				require.NotContains(t, s, secret)
			}
		}
		if raw != nil {
			require.NotNil(t, ex.RequestRaw)
			if v, err := python.Loads([]byte(*ex.RequestRaw)); err == nil {
				var strs []string // JSON as Python reads it: redacted in its decoded strings
				collectStrings(v, &strs)
				for _, s := range strs {
					require.NotContains(t, s, secret)
				}
			} else if _, err := ojson.Parse([]byte(*raw)); err != nil && *ex.RequestRaw != RedactedText { // not withheld whole
				require.Equal(t, strings.Count(*raw, "\n"), strings.Count(*ex.RequestRaw, "\n"), "the line structure of text is kept")
				for _, line := range strings.Split(*ex.RequestRaw, "\n") {
					if !strings.HasPrefix(line, "data:") {
						require.NotContains(t, line, secret)
					}
				}
			}
		}
	})
}

// collectStrings appends every string value under v (member names excluded) to out.
func collectStrings(v ojson.Value, out *[]string) {
	if s, ok := v.AsString(); ok {
		*out = append(*out, s)
		return
	}
	eachChild(v, func(_ string, _ int, child *ojson.Value) { collectStrings(*child, out) })
}

// TestEscapedCredentialInTextNoReadingParses: a raw text that starts like JSON but that neither
// strict JSON nor json.loads reads cannot have its escapes decoded; when one of them could spell
// the call's credential the text is replaced whole, else it is kept (credentials in it as they are
// replaced). From a trial: an upstream's 401 body with trailing bytes kept the key written as
// `\u0061…`.
func TestEscapedCredentialInTextNoReadingParses(t *testing.T) {
	const key = "sk-abcdefghijklmnopqrstuvwx"
	r := (*Redactor)(nil).withSecrets([]string{key})
	for _, c := range []struct{ name, in, want string }{
		{"escaped key, trailing bytes", `{"error":"bad key sk-\u0061\u0062\u0063defghijklmnopqrstuvwx"} trailing`, RedactedText},
		{"escaped key, cut body", `{"error":"bad key sk-\u0061bcdefghijklmnopqrstuvwx"`, RedactedText},
		{"escaped key in an SSE data line", "data: {\"e\":\"sk-\\u0061bcdefghijklmnopqrstuvwx\"} x\n\ndata: [DONE]\n\n", "data: [REDACTED]\n\ndata: [DONE]\n\n"},
		{"plain key, trailing bytes: the key replaced, the rest kept", `{"error":"bad key ` + key + `"} trailing`, `{"error":"bad key [REDACTED]"} trailing`},
		{"no escape that could spell it: kept", `{"error":"line\nbreak"} trailing`, `{"error":"line\nbreak"} trailing`},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			ex := capture.Exchange{ResponseRaw: &in}
			r.redactExchange(&ex)
			require.NotNil(t, ex.ResponseRaw)
			assert.Equal(t, c.want, *ex.ResponseRaw)
		})
	}
}
