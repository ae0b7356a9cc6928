package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/capturetest"
)

// The forwarding pipelines of the example configurations (traces/jaeger) are best effort: a slow
// or absent Jaeger must never hold unbounded memory nor fail a sender's export, which the otlp
// receiver answers with the error of any pipeline it fans the request out to.

// maxForwardQueueBytes is the largest sending queue, in bytes, a forwarding exporter of the
// example configurations may hold (the configurations' comments: 64 MiB).
const maxForwardQueueBytes = 64 << 20

// TestExampleConfigsForwardingBounded reads both example configurations and checks every traces
// pipeline that does not export to gymcapture: no memory_limiter (its refusal would fail the
// sender's export although the capture pipeline wrote the records), a batch processor (it keeps
// the exporter's errors from the receiver), and exporters whose sending queue is enabled, sized in
// bytes, at most 64 MiB and dropping when full (block_on_overflow false).
func TestExampleConfigsForwardingBounded(t *testing.T) {
	for _, cfg := range []string{exampleConfig, gatewayConfig} {
		t.Run(filepath.Base(cfg), func(t *testing.T) {
			cm, err := confmaptest.LoadConf(cfg)
			require.NoError(t, err)
			pipelines, err := cm.Sub("service::pipelines")
			require.NoError(t, err)
			forwarding := 0
			for name, p := range pipelines.ToStringMap() {
				if componentType(name) != "traces" {
					continue
				}
				pm := p.(map[string]any)
				if containsAny(pm["exporters"], "gymcapture") {
					continue
				}
				forwarding++
				processors, _ := pm["processors"].([]any)
				hasBatch := false
				for _, proc := range processors {
					switch componentType(proc.(string)) {
					case "memory_limiter":
						t.Errorf("pipeline %s: %s in a pipeline that does not export to gymcapture", name, proc)
					case "batch":
						hasBatch = true
					}
				}
				assert.True(t, hasBatch, "pipeline %s: a batch processor keeps the exporter's errors from the receiver", name)
				exporters, _ := pm["exporters"].([]any)
				require.NotEmpty(t, exporters, name)
				for _, e := range exporters {
					q := "exporters::" + e.(string) + "::sending_queue::"
					assert.NotEqual(t, false, cm.Get(q+"enabled"), "pipeline %s: %s's queue enabled", name, e)
					assert.Equal(t, "bytes", cm.Get(q+"sizer"), "pipeline %s: %s's queue sized in bytes", name, e)
					size, ok := cm.Get(q + "queue_size").(int)
					if assert.True(t, ok, "pipeline %s: %s's queue_size set: %v", name, e, cm.Get(q+"queue_size")) {
						assert.True(t, size > 0 && size <= maxForwardQueueBytes, "pipeline %s: %s's queue_size %d in (0, %d]", name, e, size, maxForwardQueueBytes)
					}
					assert.Equal(t, false, cm.Get(q+"block_on_overflow"), "pipeline %s: %s's full queue drops", name, e)
				}
			}
			assert.NotZero(t, forwarding, "the configuration has a forwarding traces pipeline")
		})
	}
}

// componentType is the type part of a component or pipeline id ("memory_limiter/x" →
// "memory_limiter").
func componentType(id string) string {
	typ, _, _ := strings.Cut(id, "/")
	return typ
}

// hangingServer accepts TCP connections on 127.0.0.1, reads whatever they send and never
// answers: a Jaeger that is up and stuck. close ends every connection and waits for them.
type hangingServer struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
	once  sync.Once
}

func newHangingServer(t *testing.T) *hangingServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &hangingServer{ln: ln}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Go(func() { _, _ = io.Copy(io.Discard, c) })
		}
	})
	t.Cleanup(s.close)
	return s
}

func (s *hangingServer) url() string { return "http://" + s.ln.Addr().String() }

func (s *hangingServer) accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

func (s *hangingServer) close() {
	s.once.Do(func() {
		_ = s.ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
}

// TestExampleConfigStuckJaeger runs the example configuration as shipped with a Jaeger that
// accepts connections and never answers, and pushes more forwarded bytes (each push a model-call
// span and a 4 MiB span that only the forwarding pipeline keeps) than the Jaeger exporter's
// queue holds: every push is answered without error with its record already written, and the
// Collector rejects the batches that no longer fit the queue (the queue is bounded in bytes, not
// in requests) instead of holding them.
func TestExampleConfigStuckJaeger(t *testing.T) {
	jaeger := newHangingServer(t)
	captureDir := filepath.Join(t.TempDir(), "captures")
	col, ports := startExampleCollector(t, captureDir, jaeger.url())
	t.Cleanup(jaeger.close) // before the Collector's stop (cleanups run last first)
	logs := func() string { return col.stderr.String() + col.stdout.String() }

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(fmt.Sprintf("127.0.0.1:%d", ports.http)),
		otlptracehttp.WithInsecure(), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	require.NoError(t, err)
	defer func() { require.NoError(t, exp.Shutdown(context.Background())) }()

	const (
		fillerBytes = 4 << 20
		pushes      = 2 * maxForwardQueueBytes / fillerBytes // twice the queue
	)
	filler := attribute.String("filler", strings.Repeat("x", fillerBytes))
	c := capturetest.Cases(t)[0]
	for i := range pushes {
		rid := fmt.Sprintf("stuck-jaeger-%d", i)
		call := inRollout(c.Span, rid, byte(i+1))
		other := capturetest.Span{
			Name: "filler", TraceID: call.TraceID, SpanID: trace.SpanID{0, 0, 0, 0, 0, 0, 0xf1, byte(i + 1)},
			Kind: trace.SpanKindInternal, Start: call.Start, End: call.End, Attributes: []attribute.KeyValue{filler},
		}
		spans := readOnlySpans([]capturetest.Span{call, other})
		require.NoError(t, exp.ExportSpans(ctx, spans), "push %d\n%s", i, tail(logs(), 8192))
		// No waiting: the export was answered, so the record is on disk.
		got := capturetest.DirContents(t, captureDir)
		require.Equal(t, c.Want(call.TraceID, call.SpanID), got[rid+capture.CaptureFileSuffix], "push %d", i)
	}

	// The queue overflowed: a batch that did not fit was rejected (dropped), not held. The batch
	// processor flushes within 200ms; the bound below only keeps a broken build from hanging.
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(logs(), "Rejecting data") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	all := logs()
	assert.Regexp(t, `(?m)^.*Exporting failed\. Rejecting data\..*otlp_http/jaeger.*(sending queue is full|element size too large)`, all)
	assert.NotZero(t, jaeger.accepted(), "the exporter reached the stuck Jaeger")
	for _, line := range collectorNoise.FindAllString(all, -1) {
		assert.True(t, strings.Contains(line, "otlp_http/jaeger") || strings.Contains(line, "batch"),
			"only the forwarding pipeline reports errors: %s", line)
	}

	// Unstick the exporter's requests (their connections end), then stop the Collector.
	jaeger.close()
	require.NoError(t, col.stop(), tail(logs(), 8192))
}
