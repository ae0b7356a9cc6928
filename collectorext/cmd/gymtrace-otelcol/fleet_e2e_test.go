package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/gymtrace/gymtrace/fleet"
)

// The fleet end-to-end test of issue #17: three capture proxies export every call's span to three
// gateway Collectors (gymtrace-otelcol with config/gymtrace-otelcol-gateway.yaml) that write one
// shared capture directory; each rollout must be written by the gateway that owns it under the
// proxies' rendezvous routing, once; a gateway killed mid-run loses no acknowledged call (its
// rollouts fail over to their second choice) and owns its rollouts again once restarted.

// gatewayConfig is the example configuration of one gateway of a fleet.
var gatewayConfig = filepath.Join("..", "..", "config", "gymtrace-otelcol-gateway.yaml")

// startGateway runs gymtrace-otelcol with the gateway configuration on the given ports, logging
// one JSON line per record written (debug level, unsampled).
func startGateway(t *testing.T, captureDir, jaegerHTTP string, ports collectorPorts) *proc {
	t.Helper()
	env := childEnv(
		fmt.Sprintf("GYMTRACE_OTLP_GRPC_ENDPOINT=127.0.0.1:%d", ports.grpc),
		fmt.Sprintf("GYMTRACE_OTLP_HTTP_ENDPOINT=127.0.0.1:%d", ports.http),
		"GYMTRACE_CAPTURE_DIR="+captureDir,
		"GYMTRACE_JAEGER_OTLP_HTTP_ENDPOINT="+jaegerHTTP,
		"GYMTRACE_LOG_LEVEL=debug", "GYMTRACE_LOG_ENCODING=json", "GYMTRACE_LOG_SAMPLING=false",
	)
	p := startProc(t, "gymtrace-otelcol gateway", binary(t), env, "--config="+gatewayConfig)
	p.waitListening(t, ports.grpc, ports.http)
	return p
}

// written returns the model_call_id → rollout_id of every "gymcapture: record written" line a
// gateway logged.
func written(t *testing.T, p *proc) map[string]string {
	t.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(p.stderr.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l struct {
			Msg         string `json:"msg"`
			RolloutID   string `json:"rollout_id"`
			ModelCallID string `json:"model_call_id"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Msg != "gymcapture: record written" {
			continue
		}
		out[l.ModelCallID] = l.RolloutID
	}
	return out
}

func traceIDBytes(t *testing.T, rid string) [16]byte {
	b, err := hex.DecodeString(rolloutTraceID(rid))
	require.NoError(t, err)
	return [16]byte(b)
}

func TestGatewayConfigDurable(t *testing.T) {
	cm, err := confmaptest.LoadConf(gatewayConfig)
	require.NoError(t, err)
	assert.Equal(t, false, cm.Get("exporters::gymcapture::sending_queue::enabled"), "no queue on the capture path")
	assert.Equal(t, []any{"memory_limiter"}, cm.Get("service::pipelines::traces/capture::processors"), "no batch processor on the capture path")
	assert.Equal(t, 400, cm.Get("receivers::otlp::protocols::grpc::max_recv_msg_size_mib"), "a call up to D15's default bounds fits")
	assert.Equal(t, 419430400, cm.Get("receivers::otlp::protocols::http::max_request_body_size"))
}

func TestE2EFleet(t *testing.T) {
	started := time.Now()
	defer func() { t.Logf("wall time %s", time.Since(started).Round(time.Millisecond)) }()
	up := newUpstream(t)
	client := newClient(t)
	jaeger := jaegerFromEnv(t)
	dir := filepath.Join(t.TempDir(), "shared")
	tag := runTag(t)

	ports := make([]collectorPorts, 3)
	gws := make([]*proc, 3)
	urls := make([]string, 3)
	for i := range gws {
		ports[i] = collectorPorts{grpc: freePort(t), http: freePort(t)}
		gws[i] = startGateway(t, dir, jaeger.otlpHTTP, ports[i])
		urls[i] = fmt.Sprintf("http://127.0.0.1:%d", ports[i].http)
	}
	eps, err := fleet.ParseEndpoints(urls, fleet.ProtocolHTTPProtobuf)
	require.NoError(t, err)
	keys := []string{eps[0].Key, eps[1].Key, eps[2].Key}
	rank := func(rid string) []int { return fleet.Rank(traceIDBytes(t, rid), keys) }

	// Each proxy lists the gateways in another order: ownership must not depend on it.
	bases := make([]string, 3)
	proxies := make([]*proc, 3)
	for i := range proxies {
		list := strings.Join([]string{urls[i%3], urls[(i+1)%3], urls[(i+2)%3]}, ",")
		proxies[i], bases[i] = startProxy(t, up.srv.URL, childEnv("OTEL_TRACES_EXPORTER=none", "OTEL_METRICS_EXPORTER=none"),
			"--capture-dir", dir, "--capture-via-otlp", list,
			"--capture-export-timeout", "10s", "--capture-export-attempt-timeout", "1s")
	}
	mix := []e2eCall{{dialect: dialectChat}, {dialect: dialectResponses, stream: true}, {dialect: dialectMessages},
		{dialect: dialectChat, stream: true}, {dialect: dialectResponses}, {dialect: dialectMessages, stream: true}}

	// Phase 1: 64 rollouts of 3 calls each, a rollout's calls through different proxies.
	const nRollouts, nCalls = 64, 3
	results := make([][]callResult, nRollouts)
	var wg sync.WaitGroup
	for r := range nRollouts {
		wg.Go(func() {
			rid := fmt.Sprintf("fleet-%s-%d", tag, r)
			for k := range nCalls {
				results[r] = append(results[r], doCall(t.Context(), client, bases[(r+k)%3], rid, mix[(r+k)%len(mix)], fmt.Sprintf("call %d", k)))
			}
		})
	}
	wg.Wait()
	records, markers := readCaptureDir(t, dir)
	assert.Empty(t, markers, "no call lost its record")
	ownerOf := map[string]int{} // model_call_id → the owner gateway's index
	owned := make([]int, 3)
	for r := range nRollouts {
		rid := fmt.Sprintf("fleet-%s-%d", tag, r)
		owner := rank(rid)[0]
		owned[owner]++
		var ids []string
		for _, cr := range results[r] {
			checkClientSawAnswer(t, cr)
			ids = append(ids, cr.modelCallID)
			ownerOf[cr.modelCallID] = owner
		}
		var got []string
		for _, rec := range records[rid] {
			got = append(got, stringValue(rec, "model_call_id"))
		}
		assert.ElementsMatch(t, ids, got, "%s: every call recorded exactly once", rid)
	}
	t.Logf("rollouts owned per gateway: %v", owned)
	for i := range gws {
		assert.Positive(t, owned[i], "gateway %d owns rollouts", i)
	}
	wrote := map[string]int{} // model_call_id → the gateway that logged writing it
	for i, g := range gws {
		for id, rid := range written(t, g) {
			if strings.HasPrefix(rid, "fleet-") {
				_, dup := wrote[id]
				assert.False(t, dup, "%s written by two gateways", id)
				wrote[id] = i
			}
		}
	}
	assert.Equal(t, ownerOf, wrote, "each call was written by its rollout's owner (golden table: fleet.Rank)")
	for _, r := range []int{0, 1, 2} {
		rid := fmt.Sprintf("fleet-%s-%d", tag, r)
		tr := waitForJaegerSpans(t, jaeger, rolloutTraceID(rid), nCalls)
		assert.GreaterOrEqual(t, len(tr.Spans), nCalls, "%s: the calls' spans reach Jaeger through the gateways", rid)
	}

	// Phase 2: kill -9 one gateway under load, then restart it on the same ports.
	victim := 1
	var (
		stop  atomic.Bool
		phase atomic.Int32 // 0 before the kill, 1 while dead, 2 after the restart
		mu    sync.Mutex
		load  []struct {
			callResult
			phase int32
		}
	)
	var lwg sync.WaitGroup
	for w := range 24 {
		lwg.Go(func() {
			rid := fmt.Sprintf("kill-%s-%d", tag, w)
			for n := 0; !stop.Load(); n++ {
				ph := phase.Load()
				cr := doCall(t.Context(), client, bases[(w+n)%3], rid, mix[(w+n)%len(mix)], fmt.Sprintf("load %d", n))
				mu.Lock()
				load = append(load, struct {
					callResult
					phase int32
				}{cr, ph})
				mu.Unlock()
			}
		})
	}
	time.Sleep(1500 * time.Millisecond)
	phase.Store(1)
	gws[victim].kill(t)
	time.Sleep(2 * time.Second)
	restarted := startGateway(t, dir, jaeger.otlpHTTP, ports[victim])
	phase.Store(2)
	deadline := time.Now().Add(40 * time.Second)
	for len(written(t, restarted)) < 5 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	stop.Store(true)
	lwg.Wait()

	records, markers = readCaptureDir(t, dir)
	seen := map[string]int{}
	for _, recs := range records {
		for _, rec := range recs {
			seen[stringValue(rec, "model_call_id")]++
		}
	}
	for id, n := range seen {
		assert.Equal(t, 1, n, "model_call_id %s recorded %d times", id, n)
	}
	acked, recorded := 0, 0
	for _, c := range load {
		checkClientSawAnswer(t, c.callResult)
		acked++
		if seen[c.modelCallID] == 1 {
			recorded++
			continue
		}
		assert.Contains(t, markers, c.rollout, "call %s of %s (phase %d): not recorded, so its rollout must be marked incomplete", c.modelCallID, c.rollout, c.phase)
	}
	t.Logf("phase 2: %d calls answered, %d recorded, markers %v", acked, recorded, markers)
	assert.Positive(t, acked)

	// While the victim was dead its rollouts went to their second choice; after the restart it
	// writes its own rollouts again, and only those.
	after := written(t, restarted)
	assert.GreaterOrEqual(t, len(after), 5, "routing returned to the restarted gateway")
	for id, rid := range after {
		assert.Equal(t, victim, rank(rid)[0], "the restarted gateway wrote %s of %s, a rollout it does not own", id, rid)
	}
	failedOver := 0
	for i, g := range gws {
		if i == victim {
			continue
		}
		for _, rid := range written(t, g) {
			if r := rank(rid); r[0] == victim {
				assert.Equal(t, i, r[1], "%s: the dead owner's rollout went to its second choice", rid)
				failedOver++
			}
		}
	}
	assert.Positive(t, failedOver, "some of the victim's rollouts were written elsewhere while it was dead")
	var proxyLogs strings.Builder
	for _, p := range proxies {
		proxyLogs.WriteString(p.stderr.String())
	}
	assert.Contains(t, proxyLogs.String(), "capture gateway did not answer")
	assert.Contains(t, proxyLogs.String(), "capture gateway answers again")
}
