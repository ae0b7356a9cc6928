package proxy

import (
	"net/http"
	"slices"
	"strings"
)

// CredentialHeaders are the request headers whose values the proxy redacts from every captured
// payload by default ([WithCredentialRedaction]): the credentials of the OpenAI and Anthropic APIs
// and of Azure OpenAI. [WithSecretHeaders] adds more.
var CredentialHeaders = []string{"Authorization", "X-Api-Key", "Api-Key"}

// MinSecretBytes is the length below which a credential header's value is not redacted: shorter
// values are placeholders (the "EMPTY" or "dummy" keys local model servers take), and replacing
// them wherever they appear would rewrite ordinary words of the captured text.
const MinSecretBytes = 8

// credentialConfig is the resolved configuration of credential redaction.
type credentialConfig struct {
	off     bool     // WithCredentialRedaction(false)
	headers []string // WithSecretHeaders, after CredentialHeaders
}

// WithCredentialRedaction turns the redaction of the request's own credentials on (the default)
// or off. When on, the value of every credential header of a captured call's request — the token
// after the scheme of Authorization ("Bearer sk-…" → "sk-…"; likewise of Proxy-Authorization when
// [WithSecretHeaders] names it), the whole value of X-Api-Key, Api-Key and every other header of
// [WithSecretHeaders], each at least [MinSecretBytes] long — is replaced by [RedactedText] wherever
// it appears in the call's captured request, response, request_raw and response_raw, as a
// [Redactor] pattern would be (in JSON string values, escaped or not, and in raw text, before the
// span and the capture file see them), so an upstream that echoes the key in an error body or a
// stream does not put it into the capture. The client and the upstream still exchange the exact
// bytes. Off is dangerous: a capture file and every exported span may then hold API keys. Request
// headers themselves are never captured either way. Source: issue #14 finding 10, README "Security".
func WithCredentialRedaction(on bool) Option {
	return optionFunc(func(c *config) { c.creds.off = !on })
}

// WithSecretHeaders adds request headers (names in any case) whose values are redacted like the
// [CredentialHeaders] ([WithCredentialRedaction]); it may be given several times. Empty and blank
// names name no header and are skipped.
func WithSecretHeaders(names ...string) Option {
	return optionFunc(func(c *config) {
		for _, n := range names {
			if n = http.CanonicalHeaderKey(strings.TrimSpace(n)); n != "" && !slices.Contains(c.creds.headers, n) {
				c.creds.headers = append(c.creds.headers, n)
			}
		}
	})
}

// secrets returns the credential values of a request's headers to redact (see
// [WithCredentialRedaction]), or nil when the redaction is off or there is none.
func (c credentialConfig) secrets(h http.Header) []string {
	if c.off {
		return nil
	}
	var out []string
	add := func(name string) {
		for _, v := range h.Values(name) {
			v = strings.TrimSpace(v)
			if name == "Authorization" || name == "Proxy-Authorization" {
				// RFC 9110 §11.4: credentials = auth-scheme [ 1*SP token68 / params ].
				if _, token, ok := strings.Cut(v, " "); ok {
					v = strings.TrimSpace(token)
				}
			}
			if len(v) >= MinSecretBytes && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	for _, name := range CredentialHeaders {
		add(name)
	}
	for _, name := range c.headers {
		if !slices.Contains(CredentialHeaders, name) {
			add(name)
		}
	}
	return out
}
