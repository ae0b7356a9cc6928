package main

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
)

// End-to-end tests of issue 5: the real `gymtrace proxy --capture-via-otlp` in front of an
// in-test model server, exporting to the real gymtrace-otelcol running the shipped example
// configuration, compared with the real `gymtrace proxy --capture-dir` (the direct path); the
// traces reach Jaeger through the Collector; and a Collector killed mid-run loses no acknowledged
// record while the proxy reports the calls it could not get acknowledged.

// e2eRollout is one rollout of the comparison run: its calls are made in order.
type e2eRollout struct {
	id    string
	calls []e2eCall
}

// timingKeys are the record keys whose values depend on timing or on per-call randomness, left
// out of the record-for-record comparison (their presence and position still count).
var timingKeys = []string{"started_at", "completed_at", "latency_ms", "latency_ttft_ms", "model_call_id", "trace_id", "span_id"}

var hex16 = regexp.MustCompile(`^"[0-9a-f]{16}"$`)

// runTag returns a random tag that keeps this run's rollout ids (and so trace ids) apart from
// any other run's in a shared Jaeger.
func runTag(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

// runRollouts makes the calls of every rollout through the proxy at base, rollouts concurrently and
// each rollout's calls in order, and checks that each client got the upstream's answer unchanged.
func runRollouts(t *testing.T, client *http.Client, base string, rollouts []e2eRollout) map[string][]callResult {
	t.Helper()
	out := make([][]callResult, len(rollouts))
	var wg sync.WaitGroup
	for i, r := range rollouts {
		wg.Go(func() {
			for k, c := range r.calls {
				out[i] = append(out[i], doCall(t.Context(), client, base, r.id, c, fmt.Sprintf("Step %d of %s: what is the capital of France?", k, r.id)))
			}
		})
	}
	wg.Wait()
	res := map[string][]callResult{}
	for i, r := range rollouts {
		res[r.id] = out[i]
		for _, cr := range out[i] {
			checkClientSawAnswer(t, cr)
		}
	}
	return res
}

// checkClientSawAnswer checks that the client received the upstream's complete answer and a model
// call id.
func checkClientSawAnswer(t *testing.T, cr callResult) {
	t.Helper()
	require.NoError(t, cr.err, "%s %+v", cr.rollout, cr.call)
	a := answerFor(t, cr.call)
	assert.Equal(t, a.status, cr.status, "%s %+v", cr.rollout, cr.call)
	assert.Equal(t, string(a.bytes()), string(cr.body), "%s %+v: the client gets the upstream's full answer", cr.rollout, cr.call)
	assert.Regexp(t, `^[0-9a-f]{32}$`, cr.modelCallID, "%s %+v", cr.rollout, cr.call)
}

// normalized returns the record as one "key: value" line per key in file order, with the values
// of timingKeys replaced by a placeholder after checking their form: times and latencies are
// numbers (the TTFT too: every call had a body), model_call_id is the client's, trace_id is the
// rollout's trace, span_id is 16 hex digits.
func normalized(t *testing.T, r []field, rid string, cr callResult) string {
	t.Helper()
	var out strings.Builder
	for _, f := range r {
		if !slices.Contains(timingKeys, f.key) {
			fmt.Fprintf(&out, "%s: %s\n", f.key, f.val)
			continue
		}
		switch f.key {
		case "model_call_id":
			assert.Equal(t, `"`+cr.modelCallID+`"`, string(f.val), "%s: the record of the client's call", rid)
		case "trace_id":
			assert.Equal(t, `"`+rolloutTraceID(rid)+`"`, string(f.val), "%s: the rollout's trace", rid)
		case "span_id":
			assert.Regexp(t, hex16, string(f.val), rid)
		default:
			var n json.Number
			assert.NoError(t, json.Unmarshal(f.val, &n), "%s: %s=%s is a number", rid, f.key, f.val)
		}
		fmt.Fprintf(&out, "%s: <ignored>\n", f.key)
	}
	return out.String()
}

// TestE2ECaptureViaCollector runs the same calls (three rollouts, all three dialects, streamed and
// not, one upstream 429) through `gymtrace proxy --capture-dir d1` and through `gymtrace proxy
// --capture-via-otlp` into gymtrace-otelcol (example config, gymcapture writing d2), and checks that
// d1 and d2 hold the same records (ignoring timings and ids), that the proxy's own --capture-dir
// stays empty, and that every model-call span reached Jaeger through the Collector.
func TestE2ECaptureViaCollector(t *testing.T) {
	started := time.Now()
	defer func() { t.Logf("wall time %s", time.Since(started).Round(time.Millisecond)) }()
	jaeger := jaegerFromEnv(t)
	up := newUpstream(t)
	client := newClient(t)
	tmp := t.TempDir()
	d1, d2, m := filepath.Join(tmp, "direct"), filepath.Join(tmp, "collector"), filepath.Join(tmp, "proxy-markers")
	tag := runTag(t)
	rollouts := []e2eRollout{
		{id: "e2e-" + tag + "-r1", calls: []e2eCall{{dialect: dialectResponses}, {dialect: dialectResponses, stream: true}, {dialect: dialectChat}}},
		{id: "e2e-" + tag + "-r2", calls: []e2eCall{{dialect: dialectChat, stream: true}, {dialect: dialectMessages}, {dialect: dialectMessages, stream: true}}},
		{id: "e2e-" + tag + "-r3", calls: []e2eCall{{dialect: dialectMessages}, {dialect: dialectChat, fail: true}, {dialect: dialectResponses, stream: true}}},
	}

	// (a) The direct path.
	direct, directURL := startProxy(t, up.srv.URL, childEnv(), "--capture-dir", d1)
	directRes := runRollouts(t, client, directURL, rollouts)
	require.NoError(t, direct.stop(), direct.stderr.String())

	// (b) Through the Collector.
	col, ports := startExampleCollector(t, d2, jaeger.otlpHTTP)
	via, viaURL := startProxy(t, up.srv.URL, childEnv(), "--capture-dir", m,
		"--capture-via-otlp", fmt.Sprintf("http://127.0.0.1:%d", ports.http))
	viaRes := runRollouts(t, client, viaURL, rollouts)
	// Read d2 before stopping anything: each client saw its call's end only after the Collector's
	// acknowledgement, which came after the fsync.
	got2, markers2 := readCaptureDir(t, d2)
	require.NoError(t, via.stop(), via.stderr.String())
	got1, markers1 := readCaptureDir(t, d1)
	gotM, markersM := readCaptureDir(t, m)

	assert.Empty(t, markers1, "direct path: no incomplete marker")
	assert.Empty(t, markers2, "collector path: no incomplete marker")
	assert.Empty(t, gotM, "the proxy's --capture-dir gets no capture file with --capture-via-otlp")
	assert.Empty(t, markersM, "the proxy's --capture-dir gets no marker when every export was acknowledged")
	assert.NotContains(t, via.stderr.String(), "level=ERROR", "proxy via the Collector logged an error")
	require.Len(t, got1, len(rollouts))
	require.Len(t, got2, len(rollouts))
	for _, r := range rollouts {
		t.Run(r.id, func(t *testing.T) {
			require.Len(t, got1[r.id], len(r.calls), "direct records")
			require.Len(t, got2[r.id], len(r.calls), "collector records")
			for i := range r.calls {
				want := normalized(t, got1[r.id][i], r.id, directRes[r.id][i])
				got := normalized(t, got2[r.id][i], r.id, viaRes[r.id][i])
				assert.Equal(t, want, got, "record %d (%+v): identical through the Collector", i, r.calls[i])
			}
		})
	}

	// The model-call spans reached Jaeger through the Collector's forwarding pipeline: one trace
	// per rollout, one "chat {model}" span per call, the same span ids as the records.
	for _, r := range rollouts {
		t.Run("jaeger/"+r.id, func(t *testing.T) {
			tr := waitForJaegerSpans(t, jaeger, rolloutTraceID(r.id), len(r.calls))
			var wantNames, gotNames, wantIDs, gotIDs []string
			for i, c := range r.calls {
				wantNames = append(wantNames, "chat "+c.model())
				wantIDs = append(wantIDs, stringValue(got2[r.id][i], "span_id"))
			}
			for _, s := range tr.Spans {
				assert.Equal(t, rolloutTraceID(r.id), s.TraceID)
				gotNames = append(gotNames, s.OperationName)
				gotIDs = append(gotIDs, s.SpanID)
				rid, ok := s.tag("gymtrace.rollout.id")
				assert.True(t, ok, "span %s has gymtrace.rollout.id", s.SpanID)
				assert.Equal(t, r.id, rid)
				assert.Equal(t, "gymtrace-proxy", tr.Processes[s.ProcessID].ServiceName)
			}
			slices.Sort(wantNames)
			slices.Sort(gotNames)
			slices.Sort(wantIDs)
			slices.Sort(gotIDs)
			assert.Equal(t, wantNames, gotNames, "span names")
			assert.Equal(t, wantIDs, gotIDs, "Jaeger's spans are the records' spans")
		})
	}

	require.NoError(t, col.stop(), col.stderr.String())
	assert.NotContains(t, col.stderr.String(), "panic")
}

// metricSink is an OTLP/HTTP metrics endpoint that remembers the last cumulative value of
// gymtrace.capture.writer.spans (outcome failed).
type metricSink struct {
	srv      *httptest.Server
	mu       sync.Mutex
	exports  int
	failures int64
	seen     bool
	errs     []string
}

func newMetricSink(t *testing.T) *metricSink {
	t.Helper()
	s := &metricSink{}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *metricSink) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err == nil && r.Header.Get("Content-Encoding") == "gzip" {
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(bytes.NewReader(body)); err == nil {
			body, err = io.ReadAll(zr)
		}
	}
	req := pmetricotlp.NewExportRequest()
	if err == nil {
		err = req.UnmarshalProto(body)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || r.URL.Path != "/v1/metrics" {
		s.errs = append(s.errs, fmt.Sprintf("%s %s: %v", r.Method, r.URL.Path, err))
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	s.exports++
	rms := req.Metrics().ResourceMetrics()
	for i := range rms.Len() {
		sms := rms.At(i).ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			for k := range ms.Len() {
				m := ms.At(k)
				if m.Name() != "gymtrace.capture.writer.spans" {
					continue
				}
				if m.Type() != pmetric.MetricTypeSum || m.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
					s.errs = append(s.errs, fmt.Sprintf("%s: type %v, want a cumulative sum", m.Name(), m.Type()))
					continue
				}
				var total int64
				dps := m.Sum().DataPoints()
				for d := range dps.Len() {
					if o, ok := dps.At(d).Attributes().Get("gymtrace.capture.outcome"); ok && o.Str() == "failed" {
						total += dps.At(d).IntValue()
					}
				}
				s.seen, s.failures = true, total
			}
		}
	}
	b, _ := pmetricotlp.NewExportResponse().MarshalProto()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

// loadCall is one call of the kill test with whether its client saw the end before the kill.
type loadCall struct {
	callResult
	beforeKill bool
}

// TestE2ECollectorKilled runs `gymtrace proxy --capture-via-otlp` (OTLP/gRPC) into gymtrace-otelcol,
// with two clients calling continuously and four calls held open by the upstream (three streams
// past their first events, one JSON answer before its status line), and SIGKILLs the Collector.
// Then: every call whose end a client saw before the kill has its record in the Collector's
// capture directory (every line intact); the held calls, released after the kill, still reach
// their clients whole, and their failed exports are logged by the proxy with the rollout id and the
// error, marked <rollout>.capture.incomplete in the proxy's --capture-dir, and counted in the
// gymtrace.capture.writer.spans metric (outcome failed) the proxy exports over OTLP.
func TestE2ECollectorKilled(t *testing.T) {
	started := time.Now()
	defer func() { t.Logf("wall time %s", time.Since(started).Round(time.Millisecond)) }()
	up := newUpstream(t)
	client := newClient(t)
	sink := newMetricSink(t)
	tmp := t.TempDir()
	d, m := filepath.Join(tmp, "collector"), filepath.Join(tmp, "proxy-markers")
	tag := runTag(t)

	// Forwarding to a port nobody listens on: the kill test needs no Jaeger.
	col, ports := startExampleCollector(t, d, fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
	proxyEnv := childEnv("OTEL_TRACES_EXPORTER=none", "OTEL_METRIC_EXPORT_INTERVAL=200")
	proxy, base := startProxy(t, up.srv.URL, proxyEnv, "--capture-dir", m,
		"--capture-via-otlp", fmt.Sprintf("http://127.0.0.1:%d", ports.grpc), "--capture-via-otlp-protocol", "grpc",
		"--capture-export-timeout", "2s", "--otlp-endpoint", sink.srv.URL)

	var (
		killing  atomic.Bool // set just before the SIGKILL
		acked    atomic.Int64
		stopLoad = make(chan struct{})
		loadWG   sync.WaitGroup
		mu       sync.Mutex
		calls    []loadCall
	)
	mix := []e2eCall{{dialect: dialectChat}, {dialect: dialectMessages, stream: true}, {dialect: dialectResponses, stream: true}, {dialect: dialectResponses}, {dialect: dialectChat, stream: true}, {dialect: dialectMessages}}
	for w := range 2 {
		rid := fmt.Sprintf("kill-%s-load%d", tag, w)
		loadWG.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stopLoad:
					return
				default:
				}
				cr := doCall(t.Context(), client, base, rid, mix[n%len(mix)], fmt.Sprintf("load call %d", n))
				before := !killing.Load() // read after the client saw the end
				if before && cr.err == nil {
					acked.Add(1)
				}
				mu.Lock()
				calls = append(calls, loadCall{callResult: cr, beforeKill: before})
				mu.Unlock()
			}
		})
	}
	held := []e2eCall{
		{dialect: dialectChat, stream: true, hold: true},
		{dialect: dialectResponses, stream: true, hold: true},
		{dialect: dialectMessages, stream: true, hold: true},
		{dialect: dialectMessages, hold: true},
	}
	heldRes := make([]callResult, len(held))
	var heldWG sync.WaitGroup
	for i, c := range held {
		heldWG.Go(func() {
			heldRes[i] = doCall(t.Context(), client, base, fmt.Sprintf("kill-%s-held%d", tag, i), c, "held call")
		})
	}
	for range held {
		select {
		case <-up.holding:
		case <-time.After(30 * time.Second):
			t.Fatal("the upstream did not hold every held call within 30s")
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for acked.Load() < 8 {
		require.True(t, time.Now().Before(deadline), "fewer than 8 acknowledged calls after 30s\n%s", proxy.stderr.String())
		time.Sleep(10 * time.Millisecond)
	}

	killing.Store(true)
	col.kill(t)
	killedAt := time.Now()

	up.releaseAll()
	heldWG.Wait()
	t.Logf("held calls finished %s after the kill", time.Since(killedAt).Round(time.Millisecond))
	close(stopLoad)
	loadWG.Wait()

	for _, cr := range heldRes {
		checkClientSawAnswer(t, cr)
	}
	afterKill := 0
	for _, c := range calls {
		checkClientSawAnswer(t, c.callResult)
		if !c.beforeKill {
			afterKill++
		}
	}
	require.Positive(t, afterKill, "some load calls ended after the kill")

	// The Collector's capture directory: every line intact; the records are calls of this test,
	// each at most once, in its own rollout's file.
	got, colMarkers := readCaptureDir(t, d)
	assert.Empty(t, colMarkers, "the Collector marked nothing")
	recorded := map[string]string{} // model_call_id -> rollout
	for rid, recs := range got {
		for _, r := range recs {
			id := stringValue(r, "model_call_id")
			_, dup := recorded[id]
			assert.False(t, dup, "model_call_id %s written twice", id)
			recorded[id] = rid
		}
	}
	_, proxyMarkers := readCaptureDir(t, m)
	stderr := proxy.stderr.String()
	all := append([]callResult(nil), heldRes...)
	for _, c := range calls {
		all = append(all, c.callResult)
	}
	known := map[string]bool{}
	notWritten := 0
	for _, cr := range all {
		known[cr.modelCallID] = true
		if _, ok := recorded[cr.modelCallID]; !ok {
			notWritten++
			assert.Contains(t, proxyMarkers, cr.rollout, "call %s not written: its rollout is marked incomplete", cr.modelCallID)
		}
	}
	for id := range recorded {
		assert.True(t, known[id], "record %s is none of this test's calls", id)
	}

	// No acknowledged record lost.
	nBefore := 0
	for _, c := range calls {
		if c.beforeKill {
			nBefore++
			assert.Equal(t, c.rollout, recorded[c.modelCallID], "call %s acknowledged before the kill is in its rollout's file", c.modelCallID)
		}
	}
	assert.GreaterOrEqual(t, len(recorded), nBefore)

	// The held calls ended after the kill: not written, reported by log line and marker.
	for _, cr := range heldRes {
		assert.NotContains(t, recorded, cr.modelCallID)
		assert.Contains(t, proxyMarkers, cr.rollout)
		assert.Regexp(t, `level=ERROR msg="gymtrace capture: record not written[^"]*" rollout_id=`+regexp.QuoteMeta(cr.rollout)+` .*error=`, stderr)
	}

	// The metric: stop the proxy (its shutdown exports the last values) and compare with the log.
	require.NoError(t, proxy.stop(), stderr)
	failuresLogged := strings.Count(proxy.stderr.String(), `msg="gymtrace capture: record not written`)
	sink.mu.Lock()
	defer sink.mu.Unlock()
	assert.Empty(t, sink.errs)
	require.True(t, sink.seen, "gymtrace.capture.writer.spans exported (%d exports)", sink.exports)
	assert.Equal(t, int64(failuresLogged), sink.failures, "outcome failed counts every logged failure")
	assert.GreaterOrEqual(t, sink.failures, int64(notWritten), "every call without a record is counted")
	assert.GreaterOrEqual(t, sink.failures, int64(len(held)))
	assert.LessOrEqual(t, sink.failures, int64(afterKill+len(held)), "only calls that ended after the kill can fail")
	t.Logf("calls: %d acknowledged before the kill, %d load + %d held after; records %d; failures %d",
		nBefore, afterKill, len(held), len(recorded), sink.failures)
}
