package proxy

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/gymtrace/gymtrace/rollout"
	"github.com/gymtrace/gymtrace/semconv"
)

// TestCaptureHandlerWarnsNearMisses (#16 part 3): a call whose path is almost the capture contract
// is forwarded exactly as SPEC §1.6 says (uncaptured, or for an encoded separator captured under
// the decoded path and forwarded as sent), logged once per shape with the likely fix, and counted
// in gymtrace.capture.near_miss_calls, so a careless base URL never looks like a quiet run.
func TestCaptureHandlerWarnsNearMisses(t *testing.T) {
	var mu sync.Mutex
	var upstreamPaths []string
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		upstreamPaths = append(upstreamPaths, r.URL.EscapedPath())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	})
	tests := []struct {
		name, path   string // path has "ID" where each call puts its rollout id
		kind         string // "" means no near miss
		wantUpstream string // the path the upstream sees
		wantWarn     string
		captured     bool
	}{
		{name: "doubled /v1", path: "/ng-rollout/ID/v1/v1/messages", kind: rollout.NearMissDoubledV1, wantUpstream: "/v1/v1/messages",
			wantWarn: "the Anthropic SDK adds /v1 itself: use .../ng-rollout/<id> as its base URL"},
		{name: "missing /v1 (messages)", path: "/ng-rollout/ID/messages", kind: rollout.NearMissMissingV1, wantUpstream: "/messages", wantWarn: "/v1/messages"},
		{name: "missing /v1 (chat)", path: "/ng-rollout/ID/chat/completions", kind: rollout.NearMissMissingV1, wantUpstream: "/chat/completions",
			wantWarn: "the OpenAI SDK's base URL must end in /v1"},
		{name: "doubled prefix", path: "/ng-rollout/ID/ng-rollout/ID/v1/responses", kind: rollout.NearMissDoubledPrefix, wantUpstream: "/ng-rollout/ID/v1/responses", wantWarn: "appears twice"},
		{name: "trailing slash", path: "/ng-rollout/ID/v1/responses/", kind: rollout.NearMissSlashes, wantUpstream: "/v1/responses/", wantWarn: "trailing slash"},
		{name: "doubled slash", path: "/ng-rollout/ID//v1/chat/completions", kind: rollout.NearMissSlashes, wantUpstream: "//v1/chat/completions", wantWarn: "doubled"},
		{name: "empty rollout id", path: "/ng-rollout//v1/chat/completions", kind: rollout.NearMissEmptyID, wantUpstream: "/ng-rollout//v1/chat/completions", wantWarn: "rollout id segment is empty"},
		{name: "encoded separator", path: "/ng-rollout/ID/v1%2Fresponses", kind: rollout.NearMissEncodedSeparator, wantUpstream: "/v1%2Fresponses",
			wantWarn: "call captured under another path than forwarded", captured: true},
		{name: "other endpoint: no warning", path: "/ng-rollout/ID/v1/models", wantUpstream: "/v1/models"},
		{name: "captured: no warning", path: "/ng-rollout/ID/v1/chat/completions", wantUpstream: "/v1/chat/completions", captured: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			t.Cleanup(func() { _ = mp.Shutdown(t.Context()) })
			env := newCaptureEnv(t, upstream, nil, WithMeterProvider(mp))
			mu.Lock()
			upstreamPaths = nil
			mu.Unlock()
			for _, id := range []string{"r1", "r2", "r1"} { // one shape, three calls
				resp, body, err := env.post(t, strings.ReplaceAll(tt.path, "ID", id), `{"model":"m"}`, nil)
				require.NoError(t, err)
				assert.Equal(t, http.StatusOK, resp.StatusCode)
				assert.JSONEq(t, `{"ok":true}`, string(body), "forwarded")
			}
			mu.Lock()
			assert.Equal(t, strings.ReplaceAll(tt.wantUpstream, "ID", "r1"), upstreamPaths[0], "forwarded as sent")
			mu.Unlock()
			recs, _ := env.records(t, "r2")
			assert.Equal(t, tt.captured, len(recs) == 1, "captured as SPEC §1.6 says")

			logs := env.logs.String()
			var counted int64
			var rm metricdata.ResourceMetrics
			require.NoError(t, reader.Collect(t.Context(), &rm))
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if m.Name == semconv.GymtraceCaptureNearMissCallsName {
						for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
							kind, _ := dp.Attributes.Value(semconv.GymtraceCaptureNearMissKindKey)
							assert.Equal(t, tt.kind, kind.AsString())
							counted += dp.Value
						}
					}
				}
			}
			if tt.kind == "" {
				assert.NotContains(t, logs, "likely fix")
				assert.Zero(t, counted)
				return
			}
			assert.Equal(t, 1, strings.Count(logs, "likely fix"), "logged once per shape: %s", logs)
			assert.Contains(t, logs, tt.wantWarn)
			assert.Contains(t, logs, "kind="+tt.kind)
			assert.Equal(t, int64(3), counted, "every call counted")
		})
	}
}

// A client sending ever new paths gets its shapes logged up to a bound, then one line, then only
// the counter.
func TestCaptureHandlerNearMissShapesBounded(t *testing.T) {
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotFound) })
	env := newCaptureEnv(t, upstream, nil)
	for i := range maxNearMissShapes + 10 {
		_, _, err := env.post(t, "/ng-rollout/r1/x"+strings.Repeat("y", i)+"/v1/messages", `{}`, nil)
		require.NoError(t, err)
	}
	logs := env.logs.String()
	assert.Equal(t, maxNearMissShapes, strings.Count(logs, "likely fix"))
	assert.Equal(t, 1, strings.Count(logs, "further shapes are counted"))
}
