package proxy

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/sdk/stream"
)

// TestCaptureBufferPreallocation checks that a response declaring its Content-Length is captured
// into one buffer of that size, never more than rawPreallocMax up front, and that other responses
// start empty.
func TestCaptureBufferPreallocation(t *testing.T) {
	clock := func() (time.Time, time.Duration) { return time.Unix(0, 0), 0 }
	tests := []struct {
		name    string
		length  string // Content-Length header, "" for none
		sse     bool
		wantCap int
	}{
		{name: "sized body", length: "20480", wantCap: 20480},
		{name: "lying huge length is capped", length: strconv.Itoa(1 << 40), wantCap: rawPreallocMax},
		{name: "no length", length: "", wantCap: 0},
		{name: "empty body", length: "0", wantCap: 0},
		{name: "stream", sse: true, wantCap: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			cw := newCaptureWriter(rec, &callState{}, stream.DialectChat, "id", clock, 1<<20, newTestCallBudget())
			if tt.length != "" {
				cw.Header().Set("Content-Length", tt.length)
			}
			if tt.sse {
				cw.Header().Set("Content-Type", "text/event-stream")
			}
			cw.WriteHeader(http.StatusOK)
			assert.Equal(t, tt.wantCap, cap(cw.raw))
			if tt.wantCap > 0 {
				_, err := cw.Write([]byte("{}"))
				require.NoError(t, err)
				assert.Equal(t, "{}", string(cw.raw), "the captured bytes land in the preallocated buffer")
				assert.Equal(t, tt.wantCap, cap(cw.raw))
			}
		})
	}
}
