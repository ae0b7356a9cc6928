package gymcaptureexporter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/capturetest"
	"github.com/gymtrace/gymtrace/collectorext/gymcaptureexporter/internal/metadata"
	"github.com/gymtrace/gymtrace/semconv"
)

// newStarted builds and starts a captureExporter over a fresh directory, counting on a meter
// provider that the returned reader reads (capturetest.Counts); edit may change the configuration and add
// store options (for example a sync hook) before Start.
func newStarted(t testing.TB, edit func(*Config, *captureExporter)) (*captureExporter, string, *sdkmetric.ManualReader) {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.CaptureDir = t.TempDir()
	e, err := newCaptureExporter(cfg, meteredSettings(t))
	require.NoError(t, err)
	if edit != nil {
		edit(cfg, e)
		e.includePayloads, e.skipRecorded = cfg.IncludePayloads, cfg.SkipRecorded
	}
	require.NoError(t, e.start(t.Context(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, e.shutdown(context.Background())) })
	return e, cfg.CaptureDir, e.meterProvider.(*meteredProvider).reader
}

// inRollout returns c's span moved to rollout rid with span id sid.
func inRollout(c capturetest.Case, rid string, sid byte) capturetest.Span {
	s := c.Span
	s.SpanID = trace.SpanID{0, 0, 0, 0, 0, 0, 0xee, sid}
	s.Attributes = make([]attribute.KeyValue, 0, len(c.Span.Attributes))
	for _, kv := range c.Span.Attributes {
		if kv.Key == semconv.GymtraceRolloutIDKey {
			kv = semconv.GymtraceRolloutID(rid)
		}
		s.Attributes = append(s.Attributes, kv)
	}
	return s
}

// with returns s with attributes kvs added.
func with(s capturetest.Span, kvs ...attribute.KeyValue) capturetest.Span {
	out := s
	out.Attributes = append(append([]attribute.KeyValue(nil), s.Attributes...), kvs...)
	return out
}

// without returns s without attribute k.
func without(s capturetest.Span, k attribute.Key) capturetest.Span {
	out := s
	out.Attributes = nil
	for _, kv := range s.Attributes {
		if kv.Key != k {
			out.Attributes = append(out.Attributes, kv)
		}
	}
	return out
}

func TestPushTraces(t *testing.T) {
	cases := capturetest.Cases(t)
	c := cases[0]
	good := inRollout(c, "good", 1)
	other := capturetest.Span{Name: "invoke_agent", Kind: trace.SpanKindInternal, Start: c.Span.Start, End: c.Span.End,
		Attributes: []attribute.KeyValue{semconv.GymtraceRolloutID("good")}}
	bad := without(inRollout(c, "bad", 2), semconv.GymtraceDialectKey)
	unknownBound := with(inRollout(c, "bound", 3), semconv.GymtraceCaptureBoundKindKey.String("zzz"),
		semconv.GymtraceCaptureBoundLimitKey.Int64(5), semconv.GymtraceCaptureBoundSeenKey.Int64(5))

	tests := []struct {
		name          string
		spans         []capturetest.Span
		wantFiles     map[string]string
		wantCounts    map[string]int64
		wantPermanent bool
		wantErr       string
	}{
		{
			name:       "model-call span written",
			spans:      []capturetest.Span{good},
			wantFiles:  map[string]string{"good.capture.jsonl": c.Want(good.TraceID, good.SpanID)},
			wantCounts: map[string]int64{"model_call/written": 1, "observation/ignored": 1},
		},
		{
			name:       "span that is not a model call ignored and counted",
			spans:      []capturetest.Span{other, other},
			wantFiles:  map[string]string{},
			wantCounts: map[string]int64{"model_call/ignored": 2, "observation/ignored": 2},
		},
		{
			name:  "missing required attribute: permanent for that span only",
			spans: []capturetest.Span{bad, good},
			wantFiles: map[string]string{
				"good.capture.jsonl":     c.Want(good.TraceID, good.SpanID),
				"bad.capture.incomplete": "",
			},
			wantCounts:    map[string]int64{"model_call/written": 1, "model_call/rejected": 1, "observation/ignored": 2},
			wantPermanent: true,
			wantErr:       "gymtrace.dialect is required",
		},
		{
			name:  "capture bound kind outside SPEC D15's list: permanent for that span only",
			spans: []capturetest.Span{unknownBound, good},
			wantFiles: map[string]string{
				"good.capture.jsonl":       c.Want(good.TraceID, good.SpanID),
				"bound.capture.incomplete": "",
			},
			wantCounts:    map[string]int64{"model_call/written": 1, "model_call/rejected": 1, "observation/ignored": 2},
			wantPermanent: true,
			wantErr:       `gymtrace.capture_bound.kind "zzz" is not a capture bound kind: want one of response_bytes, decoded_bytes, decode_ratio, in_flight_budget`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, dir, m := newStarted(t, nil)
			err := e.pushTraces(t.Context(), toTraces(tt.spans))
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.ErrorContains(t, err, tt.wantErr)
				assert.Equal(t, tt.wantPermanent, consumererror.IsPermanent(err))
			}
			assert.Equal(t, tt.wantFiles, capturetest.DirContents(t, dir))
			assert.Equal(t, tt.wantCounts, capturetest.Counts(t, m))
		})
	}
}

// TestPushTracesIOErrors: records not written for an I/O reason give a retryable error that
// carries exactly the failed spans; the others are written once and never handed back.
func TestPushTracesIOErrors(t *testing.T) {
	cases := capturetest.Cases(t)
	c, c2 := cases[1], cases[2]
	ok1, fails, ok2 := inRollout(c, "ok", 1), inRollout(c, "fails", 2), inRollout(c2, "ok", 3)

	failingSync := func(_ *Config, e *captureExporter) {
		e.storeOpts = append(e.storeOpts, capture.WithSyncHook(func(path string) error {
			if strings.HasSuffix(path, "fails.capture.jsonl") {
				return errors.New("input/output error")
			}
			return nil
		}))
	}
	t.Run("capture file refused: permanent, the others written", func(t *testing.T) {
		e, dir, m := newStarted(t, nil)
		// A directory where the capture file must go: the store never writes through it, and a
		// retry cannot change that, so the push is answered at once (from a user trial whose
		// sender retried for its whole timeout).
		require.NoError(t, os.Mkdir(filepath.Join(dir, "fails.capture.jsonl"), 0o700))
		err := e.pushTraces(t.Context(), toTraces([]capturetest.Span{ok1, fails, ok2}))
		require.Error(t, err)
		assert.True(t, consumererror.IsPermanent(err), "a refused file is not retried")
		assert.ErrorContains(t, err, "rollout file refused, retrying cannot help until it is replaced")
		assert.ErrorContains(t, err, "not a regular file (a directory)")
		got, err := os.ReadFile(filepath.Join(dir, "ok.capture.jsonl"))
		require.NoError(t, err)
		assert.Equal(t, c.Want(ok1.TraceID, ok1.SpanID)+c2.Want(ok2.TraceID, ok2.SpanID), string(got))
		assert.FileExists(t, filepath.Join(dir, "fails.capture.incomplete"))
		assert.Equal(t, map[string]int64{"model_call/written": 2, "model_call/rejected": 1, "observation/ignored": 3}, capturetest.Counts(t, m))
	})
	t.Run("capture directory replaced by a file", func(t *testing.T) {
		e, dir, m := newStarted(t, nil)
		require.NoError(t, os.Remove(dir))
		require.NoError(t, os.WriteFile(dir, nil, 0o600))
		err := e.pushTraces(t.Context(), toTraces([]capturetest.Span{fails}))
		require.Error(t, err)
		assert.False(t, consumererror.IsPermanent(err))
		assert.ErrorContains(t, err, dir)
		assertRetryOnly(t, err, fails.SpanID)
		assert.Equal(t, map[string]int64{"model_call/failed": 1, "observation/ignored": 1}, capturetest.Counts(t, m))
	})
	t.Run("fsync fails", func(t *testing.T) {
		e, dir, m := newStarted(t, failingSync)
		err := e.pushTraces(t.Context(), toTraces([]capturetest.Span{ok1, fails, ok2}))
		require.Error(t, err)
		assert.False(t, consumererror.IsPermanent(err), "I/O errors are retryable")
		assert.ErrorContains(t, err, "input/output error")
		assertRetryOnly(t, err, fails.SpanID)
		got, err := os.ReadFile(filepath.Join(dir, "ok.capture.jsonl"))
		require.NoError(t, err)
		assert.Equal(t, c.Want(ok1.TraceID, ok1.SpanID)+c2.Want(ok2.TraceID, ok2.SpanID), string(got))
		assert.Contains(t, capturetest.DirContents(t, dir), "fails.capture.incomplete")
		assert.Equal(t, map[string]int64{"model_call/written": 2, "model_call/failed": 1, "observation/ignored": 3}, capturetest.Counts(t, m))
	})
	t.Run("failed and rejected in one batch: retryable, only the failed span", func(t *testing.T) {
		e, _, m := newStarted(t, failingSync)
		bad := without(inRollout(c, "bad", 4), semconv.GymtraceLatencyMSKey)
		err := e.pushTraces(t.Context(), toTraces([]capturetest.Span{bad, fails, ok1}))
		require.Error(t, err)
		assert.False(t, consumererror.IsPermanent(err), "the failed span must still be retried")
		assert.ErrorContains(t, err, "1 model-call spans rejected (not retried)")
		assert.ErrorContains(t, err, "gymtrace.latency_ms is required")
		assertRetryOnly(t, err, fails.SpanID)
		assert.Equal(t, map[string]int64{"model_call/written": 1, "model_call/rejected": 1, "model_call/failed": 1, "observation/ignored": 3}, capturetest.Counts(t, m))
	})
	t.Run("context done before the record", func(t *testing.T) {
		e, dir, _ := newStarted(t, nil)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		err := e.pushTraces(ctx, toTraces([]capturetest.Span{ok1}))
		require.ErrorIs(t, err, context.Canceled)
		assertRetryOnly(t, err, ok1.SpanID)
		assert.Equal(t, map[string]string{"ok.capture.incomplete": ""}, capturetest.DirContents(t, dir))
	})
}

// assertRetryOnly checks that err hands exactly the spans with ids want back for retry.
func assertRetryOnly(t *testing.T, err error, want ...trace.SpanID) {
	t.Helper()
	var te consumererror.Traces
	require.ErrorAs(t, err, &te)
	var got []trace.SpanID
	rss := te.Data().ResourceSpans()
	for i := range rss.Len() {
		rs := rss.At(i)
		svc, ok := rs.Resource().Attributes().Get("service.name")
		require.True(t, ok, "the resource is kept")
		assert.Equal(t, "model-server", svc.Str())
		for j := range rs.ScopeSpans().Len() {
			spans := rs.ScopeSpans().At(j).Spans()
			for k := range spans.Len() {
				got = append(got, trace.SpanID(spans.At(k).SpanID()))
			}
		}
	}
	assert.Equal(t, want, got)
}

// TestRetryWritesFailedSpansOnce: through exporterhelper with retries on, a batch whose first
// attempt fails for one rollout after its write reached the file (the fsync fails) ends with every
// record written exactly once: the retry carries only the failed span, and the writer's
// idempotency by model_call_id keeps the retried record from being appended again.
func TestRetryWritesFailedSpansOnce(t *testing.T) {
	c := capturetest.Cases(t)[2]
	a, b := inRollout(c, "a", 1), inRollout(c, "b", 2)
	var failures atomic.Int32
	cfg := createDefaultConfig().(*Config)
	cfg.CaptureDir = t.TempDir()
	cfg.RetryConfig = configretry.BackOffConfig{Enabled: true, InitialInterval: time.Millisecond, MaxInterval: 5 * time.Millisecond,
		MaxElapsedTime: 5 * time.Second, Multiplier: 1.5}
	set := meteredSettings(t)
	e, err := newCaptureExporter(cfg, set)
	require.NoError(t, err)
	e.storeOpts = append(e.storeOpts, capture.WithSyncHook(func(path string) error {
		if strings.HasSuffix(path, "b.capture.jsonl") && failures.Add(1) == 1 {
			// Fails after the write, before the fsync: the line may be in the file.
			return errors.New("transient input/output error")
		}
		return nil
	}))
	exp, err := newTraces(t.Context(), set, cfg, e)
	require.NoError(t, err)
	require.NoError(t, exp.Start(t.Context(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, exp.Shutdown(context.Background())) }()

	require.NoError(t, exp.ConsumeTraces(t.Context(), toTraces([]capturetest.Span{a, b})))
	files := capturetest.DirContents(t, cfg.CaptureDir)
	assert.Equal(t, c.Want(a.TraceID, a.SpanID), files["a.capture.jsonl"], "a written once, not rewritten by the retry")
	assert.Contains(t, files, "b.capture.incomplete", "a failed write marks the rollout (SPEC §2.6), even when a retry succeeds")
	assert.Equal(t, map[string]int64{"model_call/written": 2, "model_call/failed": 1, "model_call/duplicates": 1, "observation/ignored": 3},
		capturetest.Counts(t, e.meterProvider.(*meteredProvider).reader), "the retry of b found its record in the file: written, as a duplicate")
	// The failed commit reached the file before its fsync failed; the retry finds b's
	// model_call_id there and appends nothing: b is in the file once.
	assert.Equal(t, c.Want(b.TraceID, b.SpanID), files["b.capture.jsonl"], "b written once, by the first attempt")
}

func TestPushTracesLifecycle(t *testing.T) {
	c := capturetest.Cases(t)[0]
	span := inRollout(c, "late", 1)
	t.Run("before start", func(t *testing.T) {
		cfg := createDefaultConfig().(*Config)
		cfg.CaptureDir = t.TempDir()
		e, err := newCaptureExporter(cfg, exportertest.NewNopSettings(metadata.Type))
		require.NoError(t, err)
		require.ErrorIs(t, e.pushTraces(t.Context(), toTraces([]capturetest.Span{span})), errNotStarted)
		require.NoError(t, e.shutdown(t.Context()))
		require.NoError(t, e.shutdown(t.Context()))
	})
	t.Run("after shutdown: not written, rollout marked, error", func(t *testing.T) {
		e, dir, m := newStarted(t, nil)
		require.NoError(t, e.shutdown(t.Context()))
		err := e.pushTraces(t.Context(), toTraces([]capturetest.Span{span}))
		require.ErrorIs(t, err, errShutdown)
		assert.Equal(t, map[string]string{"late.capture.incomplete": ""}, capturetest.DirContents(t, dir))
		assert.Equal(t, map[string]int64{"model_call/failed": 1, "observation/ignored": 1}, capturetest.Counts(t, m), "a span received after shutdown fails")
	})
}

// TestIncludePayloadsFalse: without payloads the record keeps everything else, payloads are null
// or absent, and nothing is marked.
func TestIncludePayloadsFalse(t *testing.T) {
	for _, c := range capturetest.Cases(t) {
		t.Run(c.Name, func(t *testing.T) {
			e, dir, _ := newStarted(t, func(cfg *Config, _ *captureExporter) { cfg.IncludePayloads = false })
			sp := inRollout(c, "lean", 1)
			require.NoError(t, e.pushTraces(t.Context(), toTraces([]capturetest.Span{sp})))
			files := capturetest.DirContents(t, dir)
			require.Equal(t, []string{"lean.capture.jsonl"}, keys(files))
			line := files["lean.capture.jsonl"]
			assert.Contains(t, line, `"request":null,"response":null,"trace_id"`)
			assert.NotContains(t, line, "request_raw")
			assert.NotContains(t, line, "response_raw")
			full := c.Want(sp.TraceID, sp.SpanID)
			head := full[:strings.Index(full, `,"request":`)]
			assert.True(t, strings.HasPrefix(line, head+`,"request":null`), "every other key as in the full record")
		})
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestTelemetry: the span writers count on the Collector's own telemetry (componenttest), under
// the names the SDK uses: gymtrace.capture.writer.spans by line kind and outcome, .bytes, and
// .unattributed by line kind and reason (the stray tool span has no trace id, so no trace to
// inherit a rollout from: it goes to the unattributed file at once); the exporter has no counter
// of its own.
func TestTelemetry(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := exportertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	cfg := createDefaultConfig().(*Config)
	cfg.CaptureDir = t.TempDir()
	exp, err := NewFactory().CreateTraces(t.Context(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(t.Context(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, exp.Shutdown(context.Background())) }()

	c := capturetest.Cases(t)[0]
	good := inRollout(c, "m", 1)
	ignored := capturetest.Span{Name: "x", Start: c.Span.Start, End: c.Span.End}
	bad := without(inRollout(c, "m", 2), semconv.GymtraceDialectKey)
	partial := inRollout(c, "p", 3)
	partial.DroppedAttributes = 1
	stray := capturetest.Span{Name: "execute_tool x", Start: c.Span.Start, End: c.Span.End, SpanID: trace.SpanID{9},
		Attributes: []attribute.KeyValue{attribute.String("gen_ai.operation.name", "execute_tool")}}
	err = exp.ConsumeTraces(t.Context(), toTraces([]capturetest.Span{good, ignored, ignored, bad, partial, stray}))
	require.True(t, consumererror.IsPermanent(err))

	byAttrs := func(name string, keys ...attribute.Key) map[string]int64 {
		t.Helper()
		m, err := tel.GetMetric(name)
		require.NoError(t, err)
		sum, ok := m.Data.(metricdata.Sum[int64])
		require.True(t, ok, "%T", m.Data)
		assert.True(t, sum.IsMonotonic)
		got := map[string]int64{}
		for _, dp := range sum.DataPoints {
			var vals []string
			for _, k := range keys {
				v, ok := dp.Attributes.Value(k)
				require.True(t, ok, "%s has %s", name, k)
				vals = append(vals, v.AsString())
			}
			got[strings.Join(vals, "/")] = dp.Value
		}
		return got
	}
	assert.Equal(t, map[string]int64{"model_call/written": 1, "model_call/ignored": 2, "model_call/rejected": 1, "model_call/partial": 1,
		"observation/ignored": 5, "observation/written": 1},
		byAttrs(semconv.GymtraceCaptureWriterSpansName, semconv.GymtraceCaptureLineKindKey, semconv.GymtraceCaptureOutcomeKey))
	assert.Equal(t, map[string]int64{"observation/no_trace_id": 1},
		byAttrs(semconv.GymtraceCaptureWriterUnattributedName, semconv.GymtraceCaptureLineKindKey, semconv.GymtraceCaptureUnattributedReasonKey))
	written := byAttrs(semconv.GymtraceCaptureWriterBytesName, semconv.GymtraceCaptureLineKindKey)
	assert.Positive(t, written["model_call"])
	_, err = tel.GetMetric("otelcol_exporter_gymcapture_spans")
	assert.Error(t, err, "the exporter's former counter is gone")
}

// BenchmarkPushTraces measures the per-span path: pdata attributes -> record -> durable append
// (one fsync per push).
func BenchmarkPushTraces(b *testing.B) {
	c := capturetest.Cases(b)[1]
	td := toTraces([]capturetest.Span{inRollout(c, "bench", 1)})
	e, _, m := newStarted(b, nil)
	attrs := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
	b.ReportAllocs()
	b.SetBytes(int64(len(c.Line)))
	i := 0
	for b.Loop() {
		i++
		attrs.PutStr(string(semconv.GymtraceModelCallIDKey), fmt.Sprintf("%032x", i)) // a new call each time
		if err := e.pushTraces(b.Context(), td); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	require.Equal(b, int64(b.N), capturetest.Counts(b, m)["model_call/written"])
}

// BenchmarkEncode measures building one capture line from a pdata span, without the write.
func BenchmarkEncode(b *testing.B) {
	c := capturetest.Cases(b)[1]
	sp := toTraces([]capturetest.Span{c.Span}).ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		v := spanView(sp)
		line, err := capture.ModelCallLines{}.NewLine("golden", &v)
		if err != nil {
			b.Fatal(err)
		}
		buf = line.AppendTo(buf[:0])
	}
	require.Equal(b, c.Line, string(buf))
}
