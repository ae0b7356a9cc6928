package proxy

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Handler not built by New or CaptureHandler answers 500 and forwards nothing, and its Shutdown
// says why (from a fresh-user trial of the library: both panicked with a nil pointer dereference).
func TestZeroHandler(t *testing.T) {
	for name, h := range map[string]*Handler{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/ng-rollout/r-1/v1/chat/completions", strings.NewReader(`{}`)))
			assert.Equal(t, http.StatusInternalServerError, rec.Code)
			assert.Contains(t, rec.Body.String(), "proxy.Handler used without proxy.New or proxy.CaptureHandler")
			require.ErrorIs(t, h.Shutdown(t.Context()), ErrHandlerNotBuilt)
			assert.Nil(t, h.Store())
			assert.Nil(t, h.TracerProvider())
		})
	}
}
