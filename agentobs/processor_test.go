package agentobs_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/capturetest"
)

// processorMetrics returns a meter provider option for an ObservationProcessor and a function
// reading what it counted (capturetest.Counts: "observation/<outcome>", "observation/duplicates",
// "observation/unattributed/<reason>").
func processorMetrics(t *testing.T) (agentobs.ProcessorOption, func() map[string]int64) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	opt := agentobs.WithProcessorMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	return opt, func() map[string]int64 { return capturetest.Counts(t, reader) }
}

// newLoggedProcessor returns an ObservationProcessor over a new store in a temporary directory,
// with the buffer its logs go to and its counters (processorMetrics).
func newLoggedProcessor(t *testing.T) (*capture.Store, *agentobs.ObservationProcessor, *bytes.Buffer, func() map[string]int64) {
	t.Helper()
	store, err := capture.NewStore(t.TempDir())
	require.NoError(t, err)
	var logs bytes.Buffer
	metered, counts := processorMetrics(t)
	proc, err := agentobs.NewObservationProcessor(store, metered, agentobs.WithProcessorLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	require.NoError(t, err)
	return store, proc, &logs, counts
}

func TestObservationProcessor(t *testing.T) {
	store, proc, logs, counts := newLoggedProcessor(t)
	// Spans recorded but not sampled (the export sampler's decision) are written all the same.
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(proc), sdktrace.WithSampler(recordOnly{})).Tracer("test")
	tool := []attribute.KeyValue{attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.call.id", "t1")}
	end := func(name string, attrs ...attribute.KeyValue) {
		_, s := tracer.Start(t.Context(), name, trace.WithAttributes(attrs...))
		require.False(t, s.SpanContext().IsSampled())
		s.End()
	}

	end("chat m", attribute.String("gen_ai.operation.name", "chat"), attribute.String("gymtrace.rollout.id", "r-1"))
	end("plain")
	end("execute_tool x", tool...)
	end("execute_tool x", append(tool, attribute.String("gymtrace.rollout.id", "../bad"))...)
	end("execute_tool x", append(tool, attribute.String("gymtrace.rollout.id", "r-1"))...)
	end("execute_tool y", append(tool, attribute.String("gymtrace.rollout.id", "r-2"))...)
	assert.Equal(t, map[string]int64{"observation/ignored": 2, "observation/rejected": 1, "observation/written": 2}, counts(),
		"two spans of other kinds are ignored; the tool span without a rollout id (alone in its trace) is held, not counted yet")
	for _, rid := range []string{"r-1", "r-2"} {
		lines, damaged, exists, err := agentobs.ReadObservations(store, rid)
		require.NoError(t, err)
		assert.True(t, exists)
		assert.Zero(t, damaged)
		assert.Len(t, lines, 1, rid)
	}
	assert.Contains(t, logs.String(), "observation span rejected (retrying cannot help); not written")
	assert.Contains(t, logs.String(), "Invalid rollout id: '../bad'")

	// A refused file is counted and logged: the observations path is a directory (rejected:
	// retrying cannot help until it is replaced).
	path, err := store.ObservationsPath("r-3")
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(path, 0o700))
	end("execute_tool z", append(tool, attribute.String("gymtrace.rollout.id", "r-3"))...)
	assert.Equal(t, int64(2), counts()["observation/rejected"])
	assert.Contains(t, logs.String(), "rollout file refused, retrying cannot help until it is replaced")

	require.NoError(t, proc.ForceFlush(t.Context()))
	assert.Equal(t, int64(1), counts()["observation/unattributed/flushed"], "ForceFlush writes the held span to the unattributed file")
	assert.Contains(t, logs.String(), "no span of the trace named a rollout")
	assert.Contains(t, logs.String(), "reason=flushed")
	un, err := agentobs.ReadUnattributed(store)
	require.NoError(t, err)
	assert.Equal(t, agentobs.UnattributedSummary{Exists: true, Spans: 1, Traces: 1, Reasons: map[string]int{"flushed": 1}}, un)
	require.NoError(t, proc.Shutdown(t.Context()))
	require.NoError(t, proc.Shutdown(t.Context()), "Shutdown is idempotent")
	end("execute_tool x", append(tool, attribute.String("gymtrace.rollout.id", "r-1"))...)
	end("plain after shutdown")
	end("execute_tool after shutdown", tool...)
	assert.Equal(t, map[string]int64{"observation/ignored": 3, "observation/rejected": 2, "observation/written": 3, "observation/failed": 2, "observation/unattributed/flushed": 1}, counts(),
		"after Shutdown an observation span fails, with or without a rollout id")
	lines, _, _, err := agentobs.ReadObservations(store, "r-1")
	require.NoError(t, err)
	assert.Len(t, lines, 1, "nothing written after Shutdown")

	_, err = agentobs.NewObservationProcessor(nil)
	assert.Error(t, err)
}

func TestObservationProcessorShutdownWaits(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	store, err := capture.NewStore(t.TempDir(), capture.WithSyncHook(func(path string) error {
		if strings.HasSuffix(path, capture.ObservationsFileSuffix) {
			once.Do(func() { close(entered) })
			<-release
		}
		return nil
	}))
	require.NoError(t, err)
	metered, counts := processorMetrics(t)
	proc, err := agentobs.NewObservationProcessor(store, metered)
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(proc))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, s := tp.Tracer("t").Start(context.Background(), "execute_tool",
			trace.WithAttributes(attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gymtrace.rollout.id", "r-1")))
		s.End()
	}()
	<-entered
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, proc.Shutdown(ctx), context.Canceled, "a write in progress: Shutdown gives up with ctx")
	close(release)
	<-done
	assert.Equal(t, map[string]int64{"observation/written": 1}, counts(), "the write in progress still completes")
	assert.ErrorIs(t, tp.Shutdown(context.Background()), context.Canceled, "later Shutdowns return the first result")
}

// recordOnly records every span without sampling it.
type recordOnly struct{}

func (recordOnly) ShouldSample(sdktrace.SamplingParameters) sdktrace.SamplingResult {
	return sdktrace.SamplingResult{Decision: sdktrace.RecordOnly}
}

func (recordOnly) Description() string { return "recordOnly" }

// An observation span whose line is already in the file (the same span again, or through a second
// processor on the same directory) is not appended again.
func TestObservationProcessorIdempotent(t *testing.T) {
	dir := t.TempDir()
	var spans []sdktrace.ReadOnlySpan
	rec := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spanCollector{&spans}))
	_, s := rec.Tracer("t").Start(t.Context(), "execute_tool x", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gymtrace.rollout.id", "r-1")))
	s.End()
	require.Len(t, spans, 1)
	for i := range 2 {
		store, err := capture.NewStore(dir)
		require.NoError(t, err)
		metered, counts := processorMetrics(t)
		proc, err := agentobs.NewObservationProcessor(store, metered)
		require.NoError(t, err)
		proc.OnEnd(spans[0])
		proc.OnEnd(spans[0])
		want := map[string]int64{"observation/written": 2, "observation/duplicates": int64(1 + i)}
		assert.Equal(t, want, counts(), "a line already in the file (from this processor or the first) counts as written, and as a duplicate")
		require.NoError(t, proc.Shutdown(t.Context()))
	}
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	lines, _, _, err := agentobs.ReadObservations(store, "r-1")
	require.NoError(t, err)
	assert.Len(t, lines, 1)
	assert.Equal(t, "", agentobs.ObservationLines{}.KeyOf([]byte(`{"trace_id":"a"}`)))
	assert.Equal(t, "", agentobs.ObservationLines{}.KeyOf([]byte(`{"trace_id":"a","span_id":"b"`)))
}

// spanCollector keeps every ended span.
type spanCollector struct{ spans *[]sdktrace.ReadOnlySpan }

func (c spanCollector) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (c spanCollector) OnEnd(s sdktrace.ReadOnlySpan)                   { *c.spans = append(*c.spans, s) }
func (c spanCollector) Shutdown(context.Context) error                  { return nil }
func (c spanCollector) ForceFlush(context.Context) error                { return nil }

// TestObservationProcessorRolloutIDRefused: an observation span whose gymtrace.rollout.id is present
// but names no rollout (another type or the empty string, on the span, or on its resource when the
// span has none) is rejected with the model-call path's message, not filed under its trace's or
// resource's rollout (SPEC §0 D18: span, then resource; the span's wins).
func TestObservationProcessorRolloutIDRefused(t *testing.T) {
	rid := func(v attribute.Value) []attribute.KeyValue {
		return []attribute.KeyValue{{Key: "gymtrace.rollout.id", Value: v}}
	}
	tests := []struct {
		name           string
		span, resource []attribute.KeyValue
		wantLog        string
		wantFile       string // the rollout file the span goes to; "" for none
	}{
		{name: "int on the span", span: rid(attribute.Int64Value(5)),
			wantLog: "capture attributes: gymtrace.rollout.id must be a string, got int64"},
		{name: "int on the span, a valid id on the resource", span: rid(attribute.Int64Value(5)), resource: rid(attribute.StringValue("o-res")),
			wantLog: "capture attributes: gymtrace.rollout.id must be a string, got int64"},
		{name: "empty string on the span", span: rid(attribute.StringValue("")), resource: rid(attribute.StringValue("o-res")),
			wantLog: "Invalid rollout id: ''"},
		{name: "int on the resource", resource: rid(attribute.Int64Value(5)),
			wantLog: "capture attributes: gymtrace.rollout.id must be a string, got int64 (the span's resource attribute; the span has none)"},
		{name: "empty string on the resource", resource: rid(attribute.StringValue("")),
			wantLog: "Invalid rollout id: ''"},
		{name: "invalid string on the span", span: rid(attribute.StringValue("../../etc/x")),
			wantLog: "Invalid rollout id: '../../etc/x'"},
		{name: "a valid id on the span wins over a mistyped resource one", span: rid(attribute.StringValue("o-span")), resource: rid(attribute.Int64Value(5)),
			wantFile: "o-span"},
		{name: "none: the trace's rollout", wantFile: "o-good"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, proc, logs, counts := newLoggedProcessor(t)
			dir := store.Dir()
			tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(proc),
				sdktrace.WithResource(resource.NewSchemaless(tt.resource...))).Tracer("test")
			// The trace names o-good on an earlier span (a model call, as the proxy's carry it).
			ctx, root := tracer.Start(t.Context(), "chat m", trace.WithAttributes(
				attribute.String("gen_ai.operation.name", "chat"), attribute.String("gymtrace.rollout.id", "o-good")))
			root.End()
			_, s := tracer.Start(ctx, "execute_tool x", trace.WithAttributes(append([]attribute.KeyValue{
				attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.call.id", "t1")}, tt.span...)...))
			s.End()
			require.NoError(t, proc.ForceFlush(t.Context()))
			require.NoError(t, proc.Shutdown(t.Context()))

			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			var files []string
			for _, e := range entries {
				files = append(files, e.Name())
			}
			if tt.wantFile == "" {
				assert.Equal(t, map[string]int64{"observation/ignored": 1, "observation/rejected": 1}, counts())
				assert.Empty(t, files, "no rollout file, no unattributed file")
				assert.Contains(t, logs.String(), "observation span rejected (retrying cannot help); not written")
				assert.Contains(t, logs.String(), tt.wantLog)
				return
			}
			assert.Equal(t, map[string]int64{"observation/ignored": 1, "observation/written": 1}, counts())
			assert.Equal(t, []string{tt.wantFile + capture.ObservationsFileSuffix}, files)
		})
	}
}

// TestObservationProcessorSpanTimes: an SDK span's times go into its observation line as exact
// nanoseconds since the epoch, read back the same (an unset start, the zero time.Time the OTLP
// exporters send as 0, is 0; a time past the int64 nanoseconds, up to OTLP's 2^64-1, its exact
// count), and a time no line can hold (after 2554) rejects the span naming it.
func TestObservationProcessorSpanTimes(t *testing.T) {
	valid := time.Unix(1796411786, 191516600)
	tests := []struct {
		name       string
		start, end time.Time
		wantLine   string // "" when rejected
		wantLog    string
	}{
		{name: "valid", start: valid, end: valid.Add(time.Second),
			wantLine: `"start_time_unix_nano":1796411786191516600,"end_time_unix_nano":1796411787191516600,`},
		{name: "start unset", end: valid, wantLine: `"start_time_unix_nano":0,"end_time_unix_nano":1796411786191516600,`},
		{name: "2^64-1 ns", start: valid, end: time.Unix(18446744073, 709551615),
			wantLine: `"start_time_unix_nano":1796411786191516600,"end_time_unix_nano":18446744073709551615,`},
		{name: "year 3000", start: valid, end: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC),
			wantLog: `end time 3000-01-01T00:00:00Z is outside what an observation line holds`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, proc, logs, counts := newLoggedProcessor(t)
			stub := tracetest.SpanStub{
				Name: "execute_tool x", SpanKind: trace.SpanKindInternal, StartTime: tt.start, EndTime: tt.end,
				SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}}),
				Attributes: []attribute.KeyValue{attribute.String("gen_ai.operation.name", "execute_tool"),
					attribute.String("gen_ai.tool.call.id", "t1"), attribute.String("gymtrace.rollout.id", "o-1")},
			}
			proc.OnEnd(stub.Snapshot())
			require.NoError(t, proc.Shutdown(t.Context()))
			lines, damaged, _, err := agentobs.ReadObservations(store, "o-1")
			require.NoError(t, err)
			if tt.wantLine == "" {
				assert.Equal(t, map[string]int64{"observation/rejected": 1}, counts())
				assert.Empty(t, lines)
				assert.Contains(t, logs.String(), tt.wantLog)
				return
			}
			assert.Zero(t, damaged, "the line reads back")
			require.Len(t, lines, 1)
			assert.Contains(t, string(lines[0].AppendJSON(nil)), tt.wantLine)
		})
	}
}
