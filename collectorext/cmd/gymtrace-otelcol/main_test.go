package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/capturetest"
	"github.com/gymtrace/gymtrace/exporter"
	"github.com/gymtrace/gymtrace/semconv"
)

// exampleConfig is the distribution's example configuration.
var exampleConfig = filepath.Join("..", "..", "config", "gymtrace-otelcol.yaml")

var (
	binDir   string
	buildMu  sync.Mutex
	binPath  string
	buildErr error
)

func TestMain(m *testing.M) {
	var err error
	binDir, err = os.MkdirTemp("", "gymtrace-otelcol-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := os.RemoveAll(binDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// binary builds the distribution once per test binary (go build, the ordinary build cache) and
// returns its path.
func binary(t *testing.T) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if binPath == "" && buildErr == nil {
		out := filepath.Join(binDir, "gymtrace-otelcol")
		start := time.Now()
		cmd := exec.Command("go", "build", "-o", out, ".")
		var b bytes.Buffer
		cmd.Stdout, cmd.Stderr = &b, &b
		if err := cmd.Run(); err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, b.String())
		} else {
			binPath = out
			t.Logf("built gymtrace-otelcol in %s", time.Since(start).Round(time.Millisecond))
		}
	}
	require.NoError(t, buildErr)
	return binPath
}

// lockedBuffer is an io.Writer safe for the concurrent writes of a child's stdout and stderr.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// collector runs the distribution with config file cfg until the test ends: SIGTERM, then a
// kill after 20 s. It returns when the OTLP/HTTP and gRPC ports accept connections.
func collector(t *testing.T, cfg string, ports ...int) *lockedBuffer {
	t.Helper()
	logs := &lockedBuffer{}
	cmd := exec.Command(binary(t), "--config="+cfg)
	cmd.Stdout, cmd.Stderr = logs, logs
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			return err
		}
		select {
		case err := <-exited:
			return err
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("collector did not stop within 20s of SIGTERM")
		}
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("collector: %v\n%s", err, logs.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for _, p := range ports {
		addr := fmt.Sprintf("127.0.0.1:%d", p)
		for {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				require.NoError(t, c.Close())
				break
			}
			select {
			case err := <-exited:
				stopped = true
				t.Fatalf("collector exited before listening on %s: %v\n%s", addr, err, logs.String())
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("collector not listening on %s after 60s\n%s", addr, logs.String())
			}
		}
	}
	return logs
}

// readOnlySpans converts the suite's spans to SDK spans with a resource and scope, as a model
// server's tracer would hand them to its OTLP exporter.
func readOnlySpans(spans []capturetest.Span) []sdktrace.ReadOnlySpan {
	res := resource.NewSchemaless(attribute.String("service.name", "model-server"))
	stubs := make(tracetest.SpanStubs, len(spans))
	for i, s := range spans {
		stubs[i] = tracetest.SpanStub{
			Name:                 s.Name,
			SpanContext:          trace.NewSpanContext(trace.SpanContextConfig{TraceID: s.TraceID, SpanID: s.SpanID, TraceFlags: trace.FlagsSampled}),
			SpanKind:             s.Kind,
			StartTime:            s.Start,
			EndTime:              s.End,
			Attributes:           s.Attributes,
			DroppedAttributes:    s.DroppedAttributes,
			Resource:             res,
			InstrumentationScope: instrumentation.Scope{Name: "github.com/gymtrace/gymtrace/proxy"},
		}
	}
	return stubs.Snapshots()
}

// inRollout returns s moved to rollout rid with span id sid, without the attributes in drop.
func inRollout(s capturetest.Span, rid string, sid byte, drop ...attribute.Key) capturetest.Span {
	out := s
	out.SpanID = trace.SpanID{0, 0, 0, 0, 0, 0, 0xe2, sid}
	out.Attributes = nil
	for _, kv := range s.Attributes {
		switch {
		case kv.Key == semconv.GymtraceRolloutIDKey:
			kv = semconv.GymtraceRolloutID(rid)
		case containsKey(drop, kv.Key):
			continue
		}
		out.Attributes = append(out.Attributes, kv)
	}
	return out
}

func containsKey(ks []attribute.Key, k attribute.Key) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// TestDistributionEndToEnd builds gymtrace-otelcol, runs it on free 127.0.0.1 ports with a
// temporary configuration, exports spans to it with the official OTLP/HTTP and OTLP/gRPC span
// exporters, and checks that the capture files exist as soon as each export returns (the
// receiver answers after the fsync) and are byte-identical to the SDK exporter's for the same
// spans; a span that cannot be rebuilt is refused while the other span of its request is written.
func TestDistributionEndToEnd(t *testing.T) {
	captureDir := filepath.Join(t.TempDir(), "captures")
	httpPort, grpcPort := freePort(t), freePort(t)
	cfg := filepath.Join(t.TempDir(), "otelcol.yaml")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
      http:
        endpoint: 127.0.0.1:%d
exporters:
  gymcapture:
    capture_dir: %s
    sending_queue:
      enabled: false
  debug:
    verbosity: basic
service:
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
  pipelines:
    traces/capture:
      receivers: [otlp]
      exporters: [gymcapture]
    traces/debug:
      receivers: [otlp]
      exporters: [debug]
`, grpcPort, httpPort, captureDir), 0o600))
	logs := collector(t, cfg, httpPort, grpcPort)

	cases := capturetest.Cases(t)
	tests := []struct {
		name string
		new  func(ctx context.Context) (sdktrace.SpanExporter, error)
	}{
		{name: "otlp_http", new: func(ctx context.Context) (sdktrace.SpanExporter, error) {
			return otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(fmt.Sprintf("127.0.0.1:%d", httpPort)),
				otlptracehttp.WithInsecure(), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
		}},
		{name: "otlp_grpc", new: func(ctx context.Context) (sdktrace.SpanExporter, error) {
			return otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(fmt.Sprintf("127.0.0.1:%d", grpcPort)),
				otlptracegrpc.WithInsecure(), otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
		}},
	}
	for ti, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			exp, err := tt.new(ctx)
			require.NoError(t, err)
			defer func() { require.NoError(t, exp.Shutdown(context.Background())) }()

			// The direct path: the SDK exporter writes the same spans to its own directory.
			directDir := t.TempDir()
			store, err := capture.NewStore(directDir)
			require.NoError(t, err)
			direct, err := exporter.New(store, exporter.WithLogger(slog.New(slog.DiscardHandler)))
			require.NoError(t, err)
			defer func() { require.NoError(t, direct.Shutdown(context.Background())) }()

			rid := tt.name
			var batch []capturetest.Span
			for i, c := range cases {
				batch = append(batch, inRollout(c.Span, rid, byte(ti*64+i)))
			}
			require.NoError(t, exp.ExportSpans(ctx, readOnlySpans(batch)), logs.String())
			require.NoError(t, direct.ExportSpans(ctx, readOnlySpans(batch)))
			// No waiting: the export returned, so the records are on disk.
			got := capturetest.DirContents(t, captureDir)
			want := capturetest.DirContents(t, directDir)
			require.Len(t, want, 1)
			assert.Equal(t, want[rid+capture.CaptureFileSuffix], got[rid+capture.CaptureFileSuffix], "identical to the direct path")
			var wantLines strings.Builder
			for i, c := range cases {
				wantLines.WriteString(c.Want(batch[i].TraceID, batch[i].SpanID))
			}
			assert.Equal(t, wantLines.String(), got[rid+capture.CaptureFileSuffix])
			st, err := os.Stat(filepath.Join(captureDir, rid+capture.CaptureFileSuffix))
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())

			// A span that cannot be rebuilt is refused (a permanent error reaches the sender);
			// the other span of the same request is written; the bad rollout is marked.
			okRID, badRID := rid+"-ok", rid+"-bad"
			good := inRollout(cases[0].Span, okRID, byte(ti*64+40))
			bad := inRollout(cases[0].Span, badRID, byte(ti*64+41), semconv.GymtraceDialectKey)
			require.Error(t, exp.ExportSpans(ctx, readOnlySpans([]capturetest.Span{bad, good})))
			got = capturetest.DirContents(t, captureDir)
			assert.Equal(t, cases[0].Want(good.TraceID, good.SpanID), got[okRID+capture.CaptureFileSuffix])
			assert.Contains(t, got, badRID+capture.MarkerFileSuffix)
			assert.NotContains(t, got, badRID+capture.CaptureFileSuffix)
		})
	}
	assert.NotContains(t, logs.String(), "panic")
}

// TestExampleConfigValidates runs `gymtrace-otelcol validate` on the example configuration, and
// checks that a bad capture_dir there is refused with the key named.
func TestExampleConfigValidates(t *testing.T) {
	tests := []struct {
		name       string
		captureDir string
		wantErr    string
	}{
		{name: "valid", captureDir: filepath.Join(t.TempDir(), "captures")},
		{name: "relative capture_dir", captureDir: "captures", wantErr: "capture_dir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(binary(t), "validate", "--config="+exampleConfig)
			cmd.Env = append(os.Environ(), "GYMTRACE_CAPTURE_DIR="+tt.captureDir)
			out, err := cmd.CombinedOutput()
			if tt.wantErr == "" {
				require.NoError(t, err, string(out))
				return
			}
			require.Error(t, err)
			assert.Contains(t, string(out), tt.wantErr)
		})
	}
}

// TestExampleConfigDurable reads the example configuration and checks the properties its
// comments promise: loopback receivers, internal metrics off, and every pipeline that ends in
// gymcapture free of the batch processor, with gymcapture's queue disabled.
func TestExampleConfigDurable(t *testing.T) {
	cm, err := confmaptest.LoadConf(exampleConfig)
	require.NoError(t, err)
	for _, proto := range []string{"grpc", "http"} {
		ep, ok := cm.Get("receivers::otlp::protocols::" + proto + "::endpoint").(string)
		require.True(t, ok, proto)
		assert.Contains(t, ep, ":-127.0.0.1:", "%s receiver defaults to loopback: %s", proto, ep)
	}
	assert.Equal(t, "none", cm.Get("service::telemetry::metrics::level"))
	assert.Equal(t, false, cm.Get("exporters::gymcapture::sending_queue::enabled"))
	pipelines, err := cm.Sub("service::pipelines")
	require.NoError(t, err)
	capturing := 0
	for name, p := range pipelines.ToStringMap() {
		pm := p.(map[string]any)
		if !containsAny(pm["exporters"], "gymcapture") {
			continue
		}
		capturing++
		assert.False(t, containsAny(pm["processors"], "batch"), "pipeline %s: no batch processor before gymcapture", name)
		assert.Equal(t, []any{"gymcapture"}, pm["exporters"], "pipeline %s: gymcapture alone, so a slow exporter never shares its acknowledgement", name)
	}
	assert.Equal(t, 1, capturing)
}

func containsAny(list any, s string) bool {
	l, _ := list.([]any)
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
