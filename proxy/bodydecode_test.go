package proxy

import (
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
)

// TestProxyUndecodableBody: a body the capture cannot decode (corrupt coding, unknown coding) is
// recorded as received, categorised capture_parse_error, and the rollout is not marked incomplete
// (SPEC §0 D4; the record holds every byte).
func TestProxyUndecodableBody(t *testing.T) {
	garbage := []byte("\x1f\x8b garbage \xff\xfe not gzip")
	const garbageText = "\x1f\ufffd garbage \ufffd\ufffd not gzip" // UTF-8 with U+FFFD replacement
	truncated := compressWith(func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) })([]byte(`{"id":"x"}`))[:12]
	tests := []struct {
		name, encoding, contentType, path string
		status                            int
		body                              []byte
		wantCategory                      any    // nil for JSON null
		wantRaw                           string // "": no response_raw key
	}{
		{name: "corrupt gzip JSON", encoding: "gzip", contentType: "application/json", path: "/v1/responses", status: 200,
			body: garbage, wantCategory: "capture_parse_error", wantRaw: garbageText},
		{name: "corrupt gzip SSE", encoding: "gzip", contentType: "text/event-stream", path: "/v1/chat/completions", status: 200,
			body: garbage, wantCategory: "capture_parse_error", wantRaw: garbageText},
		{name: "truncated gzip", encoding: "gzip", contentType: "application/json", path: "/v1/responses", status: 200,
			body: truncated, wantCategory: "capture_parse_error", wantRaw: *capture.RawText(truncated)},
		{name: "corrupt gzip with an error status", encoding: "gzip", contentType: "application/json", path: "/v1/messages", status: 500,
			body: garbage, wantCategory: "upstream_error", wantRaw: garbageText},
		{name: "unknown coding JSON", encoding: "x-custom", contentType: "application/json", path: "/v1/responses", status: 200,
			body: []byte(`{"id":"resp_1"}`), wantCategory: "capture_parse_error", wantRaw: `{"id":"resp_1"}`},
		{name: "unknown coding SSE", encoding: "gzip, x-custom", contentType: "text/event-stream", path: "/v1/chat/completions", status: 200,
			body: []byte(chatEvent1 + chatDone), wantCategory: "capture_parse_error", wantRaw: chatEvent1 + chatDone},
		{name: "unknown coding, empty body", encoding: "x-custom", contentType: "application/json", path: "/v1/responses", status: 200,
			body: nil, wantCategory: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				w.Header().Set("Content-Encoding", tt.encoding)
				w.WriteHeader(tt.status)
				_, _ = w.Write(tt.body)
			})
			env := newProxyEnv(t, up.URL, nil)
			resp, body, err := env.post(t, "/ng-rollout/undec"+tt.path, chatRequest, nil)
			require.NoError(t, err)
			assert.Equal(t, tt.status, resp.StatusCode)
			assert.Equal(t, string(tt.body), string(body), "the client gets the exact bytes")
			rec := env.record(t, "undec")
			assert.Equal(t, tt.wantCategory, rec["error_category"])
			assert.Nil(t, rec["response"])
			if tt.wantRaw == "" {
				assert.NotContains(t, rec, "response_raw")
			} else {
				assert.Equal(t, tt.wantRaw, rec["response_raw"], "the bytes as received")
			}
			incomplete, err := env.store.IsIncomplete("undec")
			require.NoError(t, err)
			assert.False(t, incomplete, "no incomplete marker: the record holds every byte")
			assert.Equal(t, len(tt.body) > 0, strings.Contains(env.logs.String(), "could not be decoded"), "a non-empty raw-kept body is logged")
		})
	}
}
