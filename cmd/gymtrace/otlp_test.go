package main

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/rollout"
)

func TestPlanSignal(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		name      string
		o         otlpOptions
		getenv    func(string) string
		signal    string
		want      otlpSignal
		wantErr   string
		wantUsage bool
	}{
		{name: "off without endpoint", getenv: env(), signal: "TRACES", want: otlpSignal{protocol: "http/protobuf"}},
		{name: "flag enables, default http", o: otlpOptions{endpoint: "http://h:4318"}, getenv: env(), signal: "METRICS", want: otlpSignal{true, "http/protobuf"}},
		{name: "generic env enables", getenv: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318"), signal: "METRICS", want: otlpSignal{true, "http/protobuf"}},
		{name: "signal env enables its signal", getenv: env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://h:4318/v1/traces"), signal: "TRACES", want: otlpSignal{true, "http/protobuf"}},
		{name: "signal env leaves the other off", getenv: env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://h:4318/v1/traces"), signal: "METRICS", want: otlpSignal{false, "http/protobuf"}},
		{name: "exporter none disables", o: otlpOptions{endpoint: "http://h:4318"}, getenv: env("OTEL_METRICS_EXPORTER", " None "), signal: "METRICS", want: otlpSignal{false, "http/protobuf"}},
		{name: "generic protocol env", getenv: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4317", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"), signal: "TRACES", want: otlpSignal{true, "grpc"}},
		{name: "signal protocol env beats generic", getenv: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf"), signal: "METRICS", want: otlpSignal{true, "http/protobuf"}},
		{name: "flag protocol beats env", o: otlpOptions{protocol: "grpc"}, getenv: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"), signal: "TRACES", want: otlpSignal{true, "grpc"}},
		{name: "bad flag protocol", o: otlpOptions{protocol: "http/json"}, getenv: env(), signal: "TRACES", wantErr: `--otlp-protocol "http/json" must be "grpc" or "http/protobuf"`, wantUsage: true},
		{name: "bad env protocol", getenv: env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"), signal: "METRICS", wantErr: `OTEL_EXPORTER_OTLP_PROTOCOL="http/json": the OTLP protocol must be "grpc" or "http/protobuf"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := planSignal(tt.o, tt.signal, tt.getenv)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.Equal(t, tt.wantUsage, exitCode(err) == 2, "usage error")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestSignalURL(t *testing.T) {
	tests := []struct {
		name, endpoint, protocol, path string
		want, wantErr                  string
	}{
		{name: "http base", endpoint: "http://127.0.0.1:4318", protocol: "http/protobuf", path: "/v1/metrics", want: "http://127.0.0.1:4318/v1/metrics"},
		{name: "http base slash", endpoint: "http://h:4318/", protocol: "http/protobuf", path: "/v1/traces", want: "http://h:4318/v1/traces"},
		{name: "http base path", endpoint: "https://h/otlp", protocol: "http/protobuf", path: "/v1/metrics", want: "https://h/otlp/v1/metrics"},
		{name: "earlier traces form", endpoint: "http://h:4318/v1/traces", protocol: "http/protobuf", path: "/v1/metrics", want: "http://h:4318/v1/metrics"},
		{name: "grpc", endpoint: "http://127.0.0.1:4317", protocol: "grpc", want: "http://127.0.0.1:4317"},
		{name: "grpc with path", endpoint: "http://h:4317/x", protocol: "grpc", wantErr: "a gRPC endpoint is http(s)://HOST:PORT without a path"},
		{name: "not a URL", endpoint: "localhost:4318", protocol: "http/protobuf", wantErr: `--otlp-endpoint "localhost:4318" must be an absolute http:// or https:// URL`},
		{name: "query", endpoint: "http://h/?a=b", protocol: "http/protobuf", wantErr: "must not carry a query"},
		{name: "port out of range", endpoint: "http://127.0.0.1:99999", protocol: "http/protobuf", path: "/v1/traces",
			wantErr: `--otlp-endpoint "http://127.0.0.1:99999": port 99999 must be a number from 1 to 65535`},
		{name: "grpc port 0", endpoint: "http://127.0.0.1:0", protocol: "grpc", wantErr: "port 0 must be a number from 1 to 65535"},
		{name: "highest port", endpoint: "http://127.0.0.1:65535", protocol: "grpc", want: "http://127.0.0.1:65535"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := signalURL(tt.endpoint, tt.protocol, tt.path)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.Equal(t, 2, exitCode(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// otlpReceiver is a fake OTLP collector (HTTP and/or gRPC) keeping the decoded export requests and
// the x-gymtrace-test header of each.
type otlpReceiver struct {
	coltracepb.UnimplementedTraceServiceServer

	mu      sync.Mutex
	traces  []*coltracepb.ExportTraceServiceRequest
	metrics []*colmetricpb.ExportMetricsServiceRequest
	headers []string
	errs    []string
}

func (r *otlpReceiver) fail(format string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, format)
}

// ServeHTTP is the OTLP/HTTP protobuf receiver.
func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			r.fail("gzip: " + err.Error())
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil || req.Header.Get("Content-Type") != "application/x-protobuf" {
		r.fail("bad request to " + req.URL.Path)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var resp proto.Message
	r.mu.Lock()
	r.headers = append(r.headers, req.Header.Get("X-Gymtrace-Test"))
	switch req.URL.Path {
	case "/v1/traces":
		m := &coltracepb.ExportTraceServiceRequest{}
		err = proto.Unmarshal(b, m)
		r.traces = append(r.traces, m)
		resp = &coltracepb.ExportTraceServiceResponse{}
	case "/v1/metrics":
		m := &colmetricpb.ExportMetricsServiceRequest{}
		err = proto.Unmarshal(b, m)
		r.metrics = append(r.metrics, m)
		resp = &colmetricpb.ExportMetricsServiceResponse{}
	default:
		r.errs = append(r.errs, "unexpected path "+req.URL.Path)
	}
	r.mu.Unlock()
	if err != nil || resp == nil {
		r.fail("undecodable export to " + req.URL.Path)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	out, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func grpcHeader(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	return strings.Join(md.Get("x-gymtrace-test"), ",")
}

// Export implements the gRPC trace service.
func (r *otlpReceiver) Export(ctx context.Context, m *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.traces = append(r.traces, m)
	r.headers = append(r.headers, grpcHeader(ctx))
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// metricsService adapts the receiver to the gRPC metrics service (both services name their method Export).
type metricsService struct {
	colmetricpb.UnimplementedMetricsServiceServer
	r *otlpReceiver
}

func (s metricsService) Export(ctx context.Context, m *colmetricpb.ExportMetricsServiceRequest) (*colmetricpb.ExportMetricsServiceResponse, error) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	s.r.metrics = append(s.r.metrics, m)
	s.r.headers = append(s.r.headers, grpcHeader(ctx))
	return &colmetricpb.ExportMetricsServiceResponse{}, nil
}

// snapshot returns what the receiver got so far.
func (r *otlpReceiver) snapshot() ([]*coltracepb.ExportTraceServiceRequest, []*colmetricpb.ExportMetricsServiceRequest, []string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*coltracepb.ExportTraceServiceRequest(nil), r.traces...),
		append([]*colmetricpb.ExportMetricsServiceRequest(nil), r.metrics...),
		append([]string(nil), r.headers...), append([]string(nil), r.errs...)
}

// startHTTPReceiver serves an OTLP/HTTP receiver on 127.0.0.1 until the test ends.
func startHTTPReceiver(t *testing.T) (*otlpReceiver, string) {
	r := &otlpReceiver{}
	s := httptest.NewServer(r)
	t.Cleanup(s.Close)
	return r, s.URL
}

// startGRPCReceiver serves an OTLP/gRPC receiver on 127.0.0.1 until the test ends.
func startGRPCReceiver(t *testing.T) (*otlpReceiver, string) {
	r := &otlpReceiver{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(s, r)
	colmetricpb.RegisterMetricsServiceServer(s, metricsService{r: r})
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = s.Serve(ln)
	}()
	t.Cleanup(func() {
		s.Stop()
		<-served
	})
	return r, "http://" + ln.Addr().String()
}

func attrString(attrs []*commonpb.KeyValue, key string) (string, bool) {
	for _, kv := range attrs {
		if kv.Key == key {
			return kv.Value.GetStringValue(), true
		}
	}
	return "", false
}

// otlpEnvVars are the variables each case starts from (empty: unset for the exporters).
var otlpEnvVars = []string{
	"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
	"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
	"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
	"OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_SDK_DISABLED",
}

// TestProxyCmdOTLPTracesAndMetrics runs the real binary against fake OTLP receivers over HTTP and
// gRPC, configured by flags or by the standard variables, and checks both signals arrive decoded.
func TestProxyCmdOTLPTracesAndMetrics(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) }) // registered first: runs after every other cleanup
	bin := buildGymtrace(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/v1/responses" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"error":{"message":"slow down","type":"rate_limit"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"policy-2\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n")
		_, _ = io.WriteString(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"policy-2\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":2,\"total_tokens\":10}}\n\n")
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(up.Close)

	type recv struct {
		r   *otlpReceiver
		url string
	}
	tests := []struct {
		name        string
		grpc        bool                             // the receiver under test speaks gRPC
		args        func(url string) []string        // flags
		env         func(url, decoy string) []string // variable pairs
		wantHeader  string
		wantMetrics bool
		payloads    bool
	}{
		{name: "http by flag", args: func(u string) []string { return []string{"--otlp-endpoint", u} }, wantMetrics: true},
		{name: "grpc by flag with payloads", grpc: true, args: func(u string) []string {
			return []string{"--otlp-endpoint", u, "--otlp-protocol", "grpc", "--otlp-payloads"}
		}, wantMetrics: true, payloads: true},
		{name: "http by env", env: func(u, _ string) []string {
			return []string{"OTEL_EXPORTER_OTLP_ENDPOINT", u, "OTEL_EXPORTER_OTLP_HEADERS", "x-gymtrace-test=env-http"}
		}, wantHeader: "env-http", wantMetrics: true},
		{name: "grpc by env", grpc: true, env: func(u, _ string) []string {
			return []string{"OTEL_EXPORTER_OTLP_ENDPOINT", u, "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_HEADERS", "x-gymtrace-test=env-grpc"}
		}, wantHeader: "env-grpc", wantMetrics: true},
		{name: "flags win over env", grpc: true,
			args: func(u string) []string { return []string{"--otlp-endpoint", u, "--otlp-protocol", "grpc"} },
			env: func(_, decoy string) []string {
				return []string{"OTEL_EXPORTER_OTLP_ENDPOINT", decoy, "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"}
			}, wantMetrics: true},
		{name: "per-signal traces endpoint only", env: func(u, _ string) []string {
			return []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", u + "/v1/traces"}
		}},
		{name: "metrics exporter none", args: func(u string) []string { return []string{"--otlp-endpoint", u} }, env: func(string, string) []string {
			return []string{"OTEL_METRICS_EXPORTER", "none"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var target recv
			if tt.grpc {
				target.r, target.url = startGRPCReceiver(t)
			} else {
				target.r, target.url = startHTTPReceiver(t)
			}
			decoy, decoyURL := startHTTPReceiver(t)
			for _, k := range otlpEnvVars {
				t.Setenv(k, "")
			}
			if tt.env != nil {
				kv := tt.env(target.url, decoyURL)
				for i := 0; i+1 < len(kv); i += 2 {
					t.Setenv(kv[i], kv[i+1])
				}
			}
			var args []string
			if tt.args != nil {
				args = tt.args(target.url)
			}
			dir := filepath.Join(t.TempDir(), "caps")
			p := startProxy(t, bin, up.URL, dir, args...)
			client := &http.Client{Transport: &http.Transport{}}
			for _, c := range []struct{ rollout, path, body string }{
				{"otlp-chat", "/v1/chat/completions", `{"model":"policy","stream":true,"messages":[{"role":"user","content":"PAYLOAD-MARKER"}]}`},
				{"otlp-resp", "/v1/responses", `{"model":"policy","input":"PAYLOAD-MARKER"}`},
			} {
				resp, err := client.Post(p.url+"/ng-rollout/"+c.rollout+c.path, "application/json", strings.NewReader(c.body))
				require.NoError(t, err)
				_, _ = io.ReadAll(resp.Body)
				require.NoError(t, resp.Body.Close())
			}
			client.CloseIdleConnections()
			require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
			require.NoError(t, p.wait(), "stderr: %s", p.stderr)

			traces, metrics, headers, errs := target.r.snapshot()
			assert.Empty(t, errs)
			dt, dm, _, _ := decoy.snapshot()
			assert.Empty(t, dt, "the decoy endpoint from the environment gets no spans")
			assert.Empty(t, dm, "the decoy endpoint from the environment gets no metrics")
			if tt.wantHeader != "" {
				require.NotEmpty(t, headers)
				for _, h := range headers {
					assert.Equal(t, tt.wantHeader, h, "OTEL_EXPORTER_OTLP_HEADERS applied by the exporter")
				}
			}

			checkExportedSpans(t, traces, dir, tt.payloads)
			if !tt.wantMetrics {
				assert.Empty(t, metrics, "metrics not exported")
				return
			}
			checkExportedMetrics(t, metrics)
		})
	}
}

// checkExportedSpans: one model-call span per call, in the rollout's trace, with the record's ids,
// payload attributes only when kept.
func checkExportedSpans(t *testing.T, reqs []*coltracepb.ExportTraceServiceRequest, dir string, payloads bool) {
	t.Helper()
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	var spans []*tracepb.Span
	for _, req := range reqs {
		for _, rs := range req.ResourceSpans {
			svc, _ := attrString(rs.GetResource().GetAttributes(), "service.name")
			assert.Equal(t, "gymtrace-proxy", svc)
			for _, ss := range rs.ScopeSpans {
				assert.Equal(t, "github.com/gymtrace/gymtrace/proxy", ss.GetScope().GetName())
				spans = append(spans, ss.Spans...)
			}
		}
	}
	byRollout := map[string]*tracepb.Span{}
	for _, s := range spans {
		if rid, ok := attrString(s.Attributes, "gymtrace.rollout.id"); ok {
			byRollout[rid] = s
		}
	}
	require.Len(t, byRollout, 2, "one model-call span per call")
	for rid, s := range byRollout {
		want := rollout.ID{Rollout: rid}.TraceID()
		assert.Equal(t, want[:], s.TraceId, "trace id derived from %s", rid)
		lines, _, err := store.ReadAvailable(rid)
		require.NoError(t, err)
		require.Len(t, lines, 1)
		assert.Contains(t, string(lines[0].Line), `"trace_id":"`+hex.EncodeToString(s.TraceId)+`","span_id":"`+hex.EncodeToString(s.SpanId)+`"`)
		assert.True(t, hasIntAttr(s.Attributes, "gymtrace.request.body.size"), "payload sizes are always kept")
		body, hasBody := attrString(s.Attributes, "gymtrace.request.body")
		assert.Equal(t, payloads, hasBody, "payload attribute exported only with --otlp-payloads")
		if payloads {
			assert.Contains(t, body, "PAYLOAD-MARKER")
		}
	}
}

func hasIntAttr(attrs []*commonpb.KeyValue, key string) bool {
	for _, kv := range attrs {
		if kv.Key == key {
			_, ok := kv.Value.Value.(*commonpb.AnyValue_IntValue)
			return ok
		}
	}
	return false
}

// checkExportedMetrics: the GenAI histograms with the conventions' bounds and the project counters,
// as cumulative totals in the last export.
func checkExportedMetrics(t *testing.T, reqs []*colmetricpb.ExportMetricsServiceRequest) {
	t.Helper()
	require.NotEmpty(t, reqs, "metrics exported at shutdown")
	last := map[string]*metricpb.Metric{}
	for _, req := range reqs {
		for _, rm := range req.ResourceMetrics {
			svc, _ := attrString(rm.GetResource().GetAttributes(), "service.name")
			assert.Equal(t, "gymtrace-proxy", svc)
			for _, sm := range rm.ScopeMetrics {
				assert.Contains(t, []string{"github.com/gymtrace/gymtrace/proxy", "github.com/gymtrace/gymtrace/capture"}, sm.GetScope().GetName(),
					"the handler's metrics and its span writer's")
				for _, m := range sm.Metrics {
					last[m.Name] = m
				}
			}
		}
	}
	durationBounds := []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	dur := last["gen_ai.client.operation.duration"]
	require.NotNil(t, dur)
	assert.Equal(t, "s", dur.Unit)
	counts := map[string]uint64{}
	for _, dp := range dur.GetHistogram().GetDataPoints() {
		assert.Equal(t, durationBounds, dp.ExplicitBounds)
		et, _ := attrString(dp.Attributes, "error.type")
		counts[et] += dp.Count
		addr, _ := attrString(dp.Attributes, "server.address")
		assert.Equal(t, "127.0.0.1", addr)
	}
	assert.Equal(t, map[string]uint64{"": 1, "rate_limit": 1}, counts, "one success, one rate-limited call")

	ttfc := last["gen_ai.client.operation.time_to_first_chunk"]
	require.NotNil(t, ttfc)
	require.Len(t, ttfc.GetHistogram().GetDataPoints(), 1, "only the streaming call")
	assert.Equal(t, uint64(1), ttfc.GetHistogram().GetDataPoints()[0].Count)

	tok := last["gen_ai.client.token.usage"]
	require.NotNil(t, tok)
	assert.Equal(t, "{token}", tok.Unit)
	sums := map[string]float64{}
	for _, dp := range tok.GetHistogram().GetDataPoints() {
		assert.Equal(t, []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}, dp.ExplicitBounds)
		typ, _ := attrString(dp.Attributes, "gen_ai.token.type")
		sums[typ] += dp.GetSum()
		model, _ := attrString(dp.Attributes, "gen_ai.response.model")
		assert.Equal(t, "policy-2", model)
	}
	assert.Equal(t, map[string]float64{"input": 8, "output": 2}, sums)

	total := func(name string) int64 {
		m := last[name]
		require.NotNil(t, m, name)
		var n int64
		for _, dp := range m.GetSum().GetDataPoints() {
			n += dp.GetAsInt()
		}
		return n
	}
	assert.Equal(t, int64(2), total("gymtrace.capture.calls"))
	assert.Positive(t, total("gymtrace.capture.bytes"))
	outcomes := map[string]int64{}
	for _, dp := range last["gymtrace.capture.writer.spans"].GetSum().GetDataPoints() {
		kind, _ := attrString(dp.Attributes, "gymtrace.capture.line_kind")
		o, _ := attrString(dp.Attributes, "gymtrace.capture.outcome")
		outcomes[kind+"/"+o] += dp.GetAsInt()
	}
	assert.Equal(t, int64(2), outcomes["model_call/written"], "both records written: %v", outcomes)
	assert.Zero(t, outcomes["model_call/failed"])
}
