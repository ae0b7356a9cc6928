package proxy

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCaptureHandlerWarnsNearMisses: a call whose path is almost the capture contract (an empty
// rollout id, a doubled or trailing slash) is forwarded uncaptured as SPEC §1.6 says, and logged, so
// a careless URL join never looks like a quiet run.
func TestCaptureHandlerWarnsNearMisses(t *testing.T) {
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	})
	tests := []struct {
		name     string
		path     string
		wantWarn string
	}{
		{name: "empty rollout id", path: "/ng-rollout//v1/chat/completions", wantWarn: "names no rollout id"},
		{name: "doubled slash after the id", path: "/ng-rollout/r1//v1/chat/completions", wantWarn: "not exactly a captured endpoint"},
		{name: "trailing slash", path: "/ng-rollout/r1/v1/responses/", wantWarn: "not exactly a captured endpoint"},
		{name: "other endpoint: no warning", path: "/ng-rollout/r1/v1/models"},
		{name: "captured: no warning", path: "/ng-rollout/r1/v1/chat/completions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newCaptureEnv(t, upstream, nil)
			resp, body, err := env.post(t, tt.path, `{"model":"m"}`, nil)
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.JSONEq(t, `{"ok":true}`, string(body), "forwarded")
			if tt.wantWarn == "" {
				assert.NotContains(t, env.logs.String(), "call not captured")
				return
			}
			assert.Contains(t, env.logs.String(), "call not captured")
			assert.Contains(t, env.logs.String(), tt.wantWarn)
			recs, _ := env.records(t, "r1")
			assert.Empty(t, recs, "not captured (SPEC §1.6)")
		})
	}
}
