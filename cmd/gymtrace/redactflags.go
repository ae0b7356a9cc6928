package main

import (
	"github.com/spf13/cobra"
	"golang.org/x/net/http/httpguts"

	"github.com/gymtrace/gymtrace/proxy"
)

// Flag names of the proxy's payload redaction (proxy.WithRedaction).
const (
	redactJSONPathFlag = "redact-json-path"
	redactRegexFlag    = "redact-regex"
	// The request's own credentials (proxy.WithCredentialRedaction, proxy.WithSecretHeaders).
	secretHeaderFlag        = "secret-header"
	noRedactCredentialsFlag = "no-redact-credentials"
)

// redactOptions are the proxy's --redact-json-path and --redact-regex, each repeatable.
type redactOptions struct {
	jsonPaths []string
	regexes   []string

	secretHeaders       []string
	noRedactCredentials bool
}

// addRedactFlags registers the redaction flags on the proxy command. They are string arrays (one
// value per flag, never split on commas), so a pattern such as `\d{3,4}` stays whole.
func addRedactFlags(cmd *cobra.Command, o *redactOptions) {
	fl := cmd.Flags()
	fl.StringArrayVar(&o.jsonPaths, redactJSONPathFlag, nil,
		`JSON path of a payload value to replace with "[REDACTED]" before the span and the capture file, e.g. '$.metadata.user_id', '$.messages[*].content', '$..api_key' (repeatable; applies to the request, the response and every SSE data line)`)
	fl.StringArrayVar(&o.regexes, redactRegexFlag, nil,
		`regular expression (Go RE2 syntax) whose matches in payload strings and raw text are replaced with [REDACTED] before the span and the capture file, e.g. 'sk-[A-Za-z0-9_-]{20,}' (repeatable)`)
	fl.StringArrayVar(&o.secretHeaders, secretHeaderFlag, nil,
		`request header whose value, like the Authorization token, x-api-key and api-key, is replaced with [REDACTED] wherever the call's captured request or response holds it (repeatable)`)
	fl.BoolVar(&o.noRedactCredentials, noRedactCredentialsFlag, false,
		`DANGEROUS: capture the request's credentials (Authorization token, x-api-key, api-key, --secret-header) where the payloads hold them, e.g. an upstream that echoes the API key, instead of replacing them with [REDACTED]`)
}

// appendTo validates the flags and appends their redaction option to opts (if any); an invalid path
// or pattern is a usage error naming the flag, the value and the rule.
func (o redactOptions) appendTo(opts []proxy.Option) ([]proxy.Option, error) {
	if o.noRedactCredentials && len(o.secretHeaders) > 0 {
		return nil, usageErrorf("--%s and --%s: a secret header is not redacted when credential redaction is off; give one of them", secretHeaderFlag, noRedactCredentialsFlag)
	}
	for _, h := range o.secretHeaders {
		if !httpguts.ValidHeaderFieldName(h) {
			return nil, usageErrorf("--%s %q: not an HTTP header name (RFC 9110 §5.1: letters, digits and !#$%%&'*+-.^_`|~)", secretHeaderFlag, h)
		}
	}
	opts = append(opts, proxy.WithCredentialRedaction(!o.noRedactCredentials), proxy.WithSecretHeaders(o.secretHeaders...))
	if len(o.jsonPaths) == 0 && len(o.regexes) == 0 {
		return opts, nil
	}
	for _, p := range o.jsonPaths {
		if _, err := proxy.NewRedactor([]string{p}, nil); err != nil {
			return nil, usageErrorf("--%s %q: %v", redactJSONPathFlag, p, err)
		}
	}
	for _, p := range o.regexes {
		if _, err := proxy.NewRedactor(nil, []string{p}); err != nil {
			return nil, usageErrorf("--%s %q: %v", redactRegexFlag, p, err)
		}
	}
	r, err := proxy.NewRedactor(o.jsonPaths, o.regexes)
	if err != nil {
		return nil, usageErrorf("redaction flags: %v", err)
	}
	return append(opts, proxy.WithRedaction(r)), nil
}
