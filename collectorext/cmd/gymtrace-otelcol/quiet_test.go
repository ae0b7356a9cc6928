package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// collectorNoise matches a Collector log line at level warn or above (its console encoding:
// time, tab, level, tab).
var collectorNoise = regexp.MustCompile(`(?m)^\S+\t(warn|error|dpanic|panic|fatal)\t.*$`)

// proxyNoise matches a proxy log line at level WARN or above, and the OTLP SDK's own export
// failures (printed by the standard logger).
var proxyNoise = regexp.MustCompile(`(?m)^.*(level=(WARN|ERROR)|failed to upload|failed to export).*$`)

// TestExampleConfigQuietAlone (#16 part 5): the example configuration with nothing else running
// (no Jaeger on its forwarding endpoint) and a proxy exporting traces and metrics to it for 20 s
// logs no warning or error on either side: the Jaeger exporter (OTLP/HTTP) holds no connection to
// retry, and the metrics pipeline accepts the proxy's metric exports (without it the receiver
// answers 404 and the proxy logs a failed upload every interval). Only the Collector's stop may
// report the spans it could not forward to the absent Jaeger ("Dropping data"), which is true.
func TestExampleConfigQuietAlone(t *testing.T) {
	up := newUpstream(t)
	client := newClient(t)
	tmp := t.TempDir()
	col, ports := startExampleCollector(t, filepath.Join(tmp, "collector"), fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
	proxyEnv := childEnv("OTEL_METRIC_EXPORT_INTERVAL=1000")
	proxy, base := startProxy(t, up.srv.URL, proxyEnv, "--capture-dir", filepath.Join(tmp, "proxy"),
		"--otlp-endpoint", fmt.Sprintf("http://127.0.0.1:%d", ports.http))

	calls := []e2eCall{{dialect: dialectChat}, {dialect: dialectResponses, stream: true}, {dialect: dialectMessages}}
	deadline := time.Now().Add(20 * time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		res := doCall(t.Context(), client, base, "quiet-r1", calls[n%len(calls)], fmt.Sprintf("call %d", n))
		require.NoError(t, res.err)
		time.Sleep(2 * time.Second)
	}
	running := col.stderr.String() + col.stdout.String()
	require.NoError(t, proxy.stop(), proxy.stderr.String())

	proxyLogs := proxy.stderr.String() + proxy.stdout.String()
	assert.Empty(t, proxyNoise.FindAllString(proxyLogs, -1), "proxy log:\n%s", proxyLogs)
	assert.Empty(t, collectorNoise.FindAllString(running, -1), "collector log while running:\n%s", running)
	assert.Contains(t, running, "\tMetrics\t", "the metrics pipeline received the proxy's metrics")
	entries, err := os.ReadDir(filepath.Join(tmp, "proxy"))
	require.NoError(t, err)
	assert.NotEmpty(t, entries, "the proxy captured its calls")

	require.NoError(t, col.stop())
	all := col.stderr.String() + col.stdout.String()
	for _, line := range collectorNoise.FindAllString(all, -1) {
		assert.True(t, strings.Contains(line, "Dropping data") && strings.Contains(line, "otlp_http/jaeger"),
			"at stop only the spans for the absent Jaeger may be reported: %s", line)
	}
}
