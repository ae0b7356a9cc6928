package proxy

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A CaptureHandler handler that declares a Content-Length and writes less breaks the client's read
// (net/http closes the connection), so its record is a broken call, as the built-in forwarder
// records a short upstream body: connection, the bytes the client got in response_raw (from a
// fresh-user trial of the library: the record said success). HEAD and body-less statuses declare
// a length they never send.
func TestCaptureHandlerShortOfContentLength(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		length   string
		body     string
		wantCat  any
		wantResp bool
	}{
		{name: "short body", status: 200, length: "1000", body: `{"id":"x"}`, wantCat: "connection"},
		{name: "whole body", status: 200, length: "10", body: `{"id":"x"}`, wantCat: nil, wantResp: true},
		{name: "no length", status: 200, body: `{"id":"x"}`, wantCat: nil, wantResp: true},
		{name: "304 with the representation's length", status: 304, length: "1000", wantCat: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newCaptureEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				if tt.length != "" {
					w.Header().Set("Content-Length", tt.length)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			}), nil)
			resp, body, err := env.post(t, "/ng-rollout/short-1/v1/chat/completions", `{"model":"m"}`, nil)
			assert.Equal(t, tt.status, resp.StatusCode)
			if tt.wantCat == "connection" {
				require.Error(t, err, "the client's read breaks")
			} else {
				require.NoError(t, err)
			}
			rec := env.record(t, "short-1")
			assert.Equal(t, tt.wantCat, rec["error_category"])
			if tt.wantResp {
				assert.NotNil(t, rec["response"])
			}
			if tt.wantCat == "connection" {
				assert.Nil(t, rec["response"])
				assert.Equal(t, string(body), rec["response_raw"], "exactly the bytes the client got")
			}
		})
	}
}
