package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"

	"github.com/gymtrace/gymtrace/fleet"
	"github.com/gymtrace/gymtrace/rollout"
	"github.com/gymtrace/gymtrace/semconv"
)

// TestProxyCmdCaptureViaOTLPFleet runs the real binary with three --capture-via-otlp gateways (a
// repeated flag and a comma-separated list), one of them down: every rollout's model-call span
// reaches exactly one gateway, the first live one of its rendezvous order, so the rollouts the dead
// gateway owns fail over to their second choice and nothing is marked incomplete. The attempts are
// counted in gymtrace.capture.gateway.exports, exported with the proxy's other metrics.
func TestProxyCmdCaptureViaOTLPFleet(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) })
	bin := buildGymtrace(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"c1","object":"chat.completion","model":"policy","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
	}))
	t.Cleanup(up.Close)
	for _, k := range otlpEnvVars {
		t.Setenv(k, "")
	}

	a, aURL := startHTTPReceiver(t)
	b, bURL := startHTTPReceiver(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	deadURL := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close()) // nobody listens there: connection refused

	metrics, metricsURL := startHTTPReceiver(t) // the proxy's own metrics (--otlp-endpoint)

	dir := filepath.Join(t.TempDir(), "markers")
	p := startProxy(t, bin, up.URL, dir, "--capture-via-otlp", aURL+","+deadURL, "--capture-via-otlp", bURL,
		"--capture-export-timeout", "5s", "--otlp-endpoint", metricsURL)
	client := &http.Client{Transport: &http.Transport{}}
	const n = 30
	for i := range n {
		resp, err := client.Post(fmt.Sprintf("%s/ng-rollout/fleet-%d/v1/chat/completions", p.url, i), "application/json",
			strings.NewReader(`{"model":"policy","messages":[{"role":"user","content":"hi"}]}`))
		require.NoError(t, err)
		_, _ = io.ReadAll(resp.Body)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	client.CloseIdleConnections()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, p.wait(), "stderr: %s", p.stderr)

	eps, err := fleet.ParseEndpoints([]string{aURL, deadURL, bURL}, fleet.ProtocolHTTPProtobuf)
	require.NoError(t, err)
	keys := []string{eps[0].Key, eps[1].Key, eps[2].Key}
	receivers := map[string]*otlpReceiver{keys[0]: a, keys[2]: b}
	got := map[string][]string{} // rollout → the gateways that received its span
	for key, r := range receivers {
		traces, _, _, errs := r.snapshot()
		assert.Empty(t, errs)
		for _, req := range traces {
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					for _, s := range ss.Spans {
						if rid, ok := attrString(s.Attributes, "gymtrace.rollout.id"); ok {
							got[rid] = append(got[rid], key)
						}
					}
				}
			}
		}
	}
	failedOver := 0
	for i := range n {
		rid := fmt.Sprintf("fleet-%d", i)
		order := fleet.Rank(rollout.ID{Rollout: rid}.TraceID(), keys)
		want := keys[order[0]]
		if want == keys[1] {
			want = keys[order[1]]
			failedOver++
		}
		assert.Equal(t, []string{want}, got[rid], "rollout %s: its first live gateway, once", rid)
	}
	assert.Positive(t, failedOver, "some rollouts were the dead gateway's")
	_, mreqs, _, errs := metrics.snapshot()
	assert.Empty(t, errs)
	attempts := gatewayExports(t, mreqs)
	unanswered, ok := "/"+semconv.GymtraceCaptureGatewayOutcomeUnanswered, "/"+semconv.GymtraceCaptureGatewayOutcomeOK
	assert.Positive(t, attempts[keys[1]+unanswered], "the dead gateway's attempts counted: %v", attempts)
	assert.Zero(t, attempts[keys[1]+ok], "%v", attempts)
	assert.Equal(t, int64(n), attempts[keys[0]+ok]+attempts[keys[2]+ok], "every call acknowledged once: %v", attempts)
	assert.Contains(t, p.stderr.String(), "capture gateway did not answer")
	assert.Contains(t, p.stderr.String(), keys[1])
	entries, err := os.ReadDir(dir)
	if !os.IsNotExist(err) {
		require.NoError(t, err)
		for _, e := range entries {
			assert.NotContains(t, e.Name(), ".capture.incomplete", "no call lost its record")
		}
	}
}

// The flags that configure the export to --capture-via-otlp are refused without it (exit 2, naming
// the flag and its parent), as --vllm-token-ids-from-logprobs is without --token-source vllm:
// alone they would do nothing. A default value given explicitly is refused too; nothing is created.
func TestProxyCmdCaptureViaOTLPDependents(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "protocol", args: []string{"--capture-via-otlp-protocol", "grpc"},
			want: "--capture-via-otlp-protocol applies only with --capture-via-otlp"},
		{name: "protocol at its default", args: []string{"--capture-via-otlp-protocol", "http/protobuf"},
			want: "--capture-via-otlp-protocol applies only with --capture-via-otlp"},
		{name: "export timeout", args: []string{"--capture-export-timeout", "0s"},
			want: "--capture-export-timeout applies only with --capture-via-otlp"},
		{name: "attempt timeout", args: []string{"--capture-export-attempt-timeout", "3s"},
			want: "--capture-export-attempt-timeout applies only with --capture-via-otlp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "new", "caps")
			r := runGymtraceBounded(t, append([]string{"proxy", "--upstream", "http://127.0.0.1:9", "--capture-dir", dir, "--listen", "127.0.0.1:0"}, tt.args...)...)
			require.Error(t, r.err)
			assert.Equal(t, 2, r.code, r.err.Error())
			assert.Contains(t, r.err.Error(), tt.want)
			assert.NotContains(t, r.stdout, "listening on")
			assert.NoDirExists(t, filepath.Dir(dir), "nothing created")
		})
	}
}

// gatewayExports sums the last export of gymtrace.capture.gateway.exports by "gateway/outcome".
func gatewayExports(t *testing.T, reqs []*colmetricpb.ExportMetricsServiceRequest) map[string]int64 {
	t.Helper()
	var last *metricpb.Metric
	for _, req := range reqs {
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if m.Name == semconv.GymtraceCaptureGatewayExportsName {
						assert.Equal(t, "github.com/gymtrace/gymtrace/fleet", sm.GetScope().GetName())
						last = m
					}
				}
			}
		}
	}
	require.NotNil(t, last, "%s exported", semconv.GymtraceCaptureGatewayExportsName)
	got := map[string]int64{}
	for _, dp := range last.GetSum().GetDataPoints() {
		gw, _ := attrString(dp.Attributes, string(semconv.GymtraceCaptureGatewayKey))
		outcome, _ := attrString(dp.Attributes, string(semconv.GymtraceCaptureGatewayOutcomeKey))
		got[gw+"/"+outcome] += dp.GetAsInt()
	}
	return got
}
