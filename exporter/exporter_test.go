package exporter

import (
	"context"
	"errors"
	"fmt"
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
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/sdkspan"
	"github.com/gymtrace/gymtrace/internal/testkit/syncbuf"
	"github.com/gymtrace/gymtrace/semconv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	testTraceID = trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	testStart   = time.Unix(1786032154, 123456641).UTC()
	testEnd     = time.Unix(1786032154, 966123137).UTC()
)

func strp(s string) *string { return &s }

// testExchange is a complete record with every optional field set.
func testExchange(id string) *capture.Exchange {
	status := 200
	ttft := 213.4
	return &capture.Exchange{
		ModelCallID:   id,
		Dialect:       "chat",
		ModelRef:      &capture.ModelRef{Type: capture.ModelRefType, Name: "policy_model"},
		LatencyMS:     842.7,
		LatencyTTFTMS: &ttft,
		StatusCode:    &status,
		Request:       []byte(`{"model":"policy","stream":true,"temperature":1.50}`),
		Response:      []byte(`{"object":"chat.completion","model":"policy","choices":[{"index":0,"message":{"role":"assistant","content":"Hi é"},"finish_reason":"stop"}],"usage":{"prompt_tokens":8,"completion_tokens":2,"total_tokens":10}}`),
		ResponseRaw:   strp("data: {\"choices\":[]}\n\ndata: [DONE]\n\n"),
	}
}

// modelCallStub returns a span stub for ex in rollout rid, with span id sid.
func modelCallStub(rid string, ex *capture.Exchange, sid byte) tracetest.SpanStub {
	attrs := append(capture.ExchangeAttributes(ex), semconv.GymtraceRolloutIDKey.String(rid))
	return tracetest.SpanStub{
		Name: "chat policy",
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: testTraceID, SpanID: trace.SpanID{0, 0, 0, 0, 0, 0, 0, sid}, TraceFlags: trace.FlagsSampled,
		}),
		SpanKind:   trace.SpanKindClient,
		StartTime:  testStart,
		EndTime:    testEnd,
		Attributes: attrs,
	}
}

// wantLine is the line the exporter must write for ex with span id sid.
func wantLine(ex *capture.Exchange, sid byte) string {
	e := *ex
	e.StartedAt = capture.UnixSeconds(testStart)
	e.CompletedAt = capture.UnixSeconds(testEnd)
	e.TraceID = testTraceID.String()
	e.SpanID = trace.SpanID{0, 0, 0, 0, 0, 0, 0, sid}.String()
	return string(e.AppendJSON(nil))
}

func newStore(t testing.TB, opts ...capture.StoreOption) *capture.Store {
	t.Helper()
	s, err := capture.NewStore(t.TempDir(), opts...)
	require.NoError(t, err)
	return s
}

func readFile(t testing.TB, s *capture.Store, rid string) string {
	t.Helper()
	p, err := s.CapturePath(rid)
	require.NoError(t, err)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	require.NoError(t, err)
	return string(b)
}

func incomplete(t testing.TB, s *capture.Store, rid string) bool {
	t.Helper()
	ok, err := s.IsIncomplete(rid)
	require.NoError(t, err)
	return ok
}

// newLogger returns a logger writing text to a buffer, and the buffer.
func newLogger() (*slog.Logger, *syncbuf.Buffer) {
	lb := &syncbuf.Buffer{}
	return slog.New(slog.NewTextHandler(lb, nil)), lb
}

func TestDurableProcessorOnEnd(t *testing.T) {
	ex := testExchange("863410a8d52e4be6a31efc5c6e9d4629")
	otherSpan := tracetest.SpanStub{Name: "other", Attributes: []attribute.KeyValue{semconv.GymtraceRolloutIDKey.String("r1")}}
	cut := modelCallStub("r1", ex, 2)
	for i, kv := range cut.Attributes {
		if kv.Key == semconv.GymtraceRequestBodyKey {
			cut.Attributes[i] = semconv.GymtraceRequestBodyKey.String(`{"model":"pol`)
		}
	}
	cutEx := *ex
	cutEx.Request = nil
	dropped := modelCallStub("r1", ex, 3)
	dropped.DroppedAttributes = 2

	tests := []struct {
		name           string
		span           tracetest.SpanStub
		want           string
		wantIncomplete bool
		wantLog        string
		wantStats      outcomes
	}{
		{name: "model call", span: modelCallStub("r1", ex, 1), want: wantLine(ex, 1), wantStats: outcomes{"written": 1}},
		{name: "other span ignored", span: otherSpan, want: "", wantStats: outcomes{}},
		{name: "cut payload written as null", span: cut, want: wantLine(&cutEx, 2), wantIncomplete: true,
			wantLog: string(semconv.GymtraceRequestBodyKey) + ": cut by an attribute limit", wantStats: outcomes{"partial": 1}},
		{name: "dropped attributes: written, rollout incomplete", span: dropped, want: wantLine(ex, 3), wantIncomplete: true,
			wantLog: "2 attributes dropped by a span attribute count limit", wantStats: outcomes{"partial": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := newStore(t)
			logger, logs := newLogger()
			mopt, stats := meter(t)
			p, err := NewDurableProcessor(store, WithLogger(logger), mopt)
			require.NoError(t, err)
			p.OnEnd(tt.span.Snapshot())
			assert.Equal(t, tt.want, readFile(t, store, "r1"))
			assert.Equal(t, tt.wantIncomplete, incomplete(t, store, "r1"))
			assert.Equal(t, tt.wantStats, stats())
			if tt.wantLog != "" {
				assert.Contains(t, logs.String(), tt.wantLog)
			}
			require.NoError(t, p.Shutdown(t.Context()))
		})
	}
}

func TestDurableProcessorInTracerProvider(t *testing.T) {
	store := newStore(t)
	p, err := NewDurableProcessor(store)
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	ex := testExchange("0f1e2d3c4b5a69788796a5b4c3d2e1f0")
	_, span := tp.Tracer("test").Start(t.Context(), "chat policy", trace.WithTimestamp(testStart),
		trace.WithAttributes(append(capture.ExchangeAttributes(ex), semconv.GymtraceRolloutIDKey.String("3-1"))...))
	span.End(trace.WithTimestamp(testEnd))
	// End returned: the record must be in the file already (synchronous write).
	got := readFile(t, store, "3-1")
	e := *ex
	e.StartedAt, e.CompletedAt = capture.UnixSeconds(testStart), capture.UnixSeconds(testEnd)
	e.TraceID, e.SpanID = span.SpanContext().TraceID().String(), span.SpanContext().SpanID().String()
	assert.Equal(t, string(e.AppendJSON(nil)), got)
	require.NoError(t, tp.Shutdown(t.Context()))
}

// TestDurableProcessorEnvLimits: in a pipeline whose provider takes its span limits from the
// environment, a payload cut by OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT or lost to
// OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT is never written as if whole: the record is written with the
// payload null (or as it is), the rollout is marked incomplete and the writer counts it as partial.
func TestDurableProcessorEnvLimits(t *testing.T) {
	tests := []struct {
		name, env, value string
		wantRequestNull  bool
	}{
		{name: "value length limit 10", env: "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", value: "10", wantRequestNull: true},
		{name: "span value length limit 10", env: "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", value: "10", wantRequestNull: true},
		{name: "span attribute count limit 8", env: "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", value: "8", wantRequestNull: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(tt.env, tt.value)
			store := newStore(t)
			logger, _ := newLogger()
			mopt, stats := meter(t)
			p, err := NewDurableProcessor(store, WithLogger(logger), mopt)
			require.NoError(t, err)
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p))
			ex := testExchange("0f1e2d3c4b5a69788796a5b4c3d2e1f0")
			attrs := append([]attribute.KeyValue{semconv.GymtraceRolloutIDKey.String("lim")}, capture.ExchangeAttributes(ex)...)
			_, span := tp.Tracer("test").Start(t.Context(), "chat policy", trace.WithTimestamp(testStart), trace.WithAttributes(attrs...))
			span.End(trace.WithTimestamp(testEnd))
			require.NoError(t, tp.Shutdown(t.Context()))

			line := readFile(t, store, "lim")
			if tt.wantRequestNull {
				assert.Contains(t, line, `"request":null`, "a cut or dropped request is never written as if whole")
			}
			assert.NotContains(t, line, `"request":{"model":"po`, "no cut request text")
			assert.True(t, incomplete(t, store, "lim"))
			assert.Equal(t, outcomes{"partial": 1}, stats())
		})
	}
}

func TestDurableProcessorWriteFailure(t *testing.T) {
	boom := errors.New("disk on fire")
	store := newStore(t, capture.WithSyncHook(func(string) error { return boom }))
	logger, logs := newLogger()
	mopt, stats := meter(t)
	p, err := NewDurableProcessor(store, WithLogger(logger), mopt)
	require.NoError(t, err)
	p.OnEnd(modelCallStub("r9", testExchange("aa"), 1).Snapshot())
	assert.True(t, incomplete(t, store, "r9"), "a failed write marks the rollout incomplete")
	assert.Equal(t, outcomes{"failed": 1}, stats())
	assert.Contains(t, logs.String(), "disk on fire")
	require.NoError(t, p.Shutdown(t.Context()))
}

func TestDurableProcessorShutdown(t *testing.T) {
	t.Run("OnEnd after Shutdown drops and marks", func(t *testing.T) {
		store := newStore(t)
		mopt, stats := meter(t)
		p, err := NewDurableProcessor(store, mopt)
		require.NoError(t, err)
		require.NoError(t, p.Shutdown(t.Context()))
		require.NoError(t, p.Shutdown(t.Context()), "second Shutdown is a no-op")
		p.OnEnd(modelCallStub("r2", testExchange("bb"), 1).Snapshot())
		assert.Equal(t, "", readFile(t, store, "r2"))
		assert.True(t, incomplete(t, store, "r2"))
		assert.Equal(t, outcomes{"failed": 1}, stats())
		require.NoError(t, p.ForceFlush(t.Context()))
	})
	t.Run("Shutdown waits for in-flight writes and honours ctx", func(t *testing.T) {
		release := make(chan struct{})
		entered := make(chan struct{}, 1)
		store := newStore(t, capture.WithSyncHook(func(string) error {
			entered <- struct{}{}
			<-release
			return nil
		}))
		p, err := NewDurableProcessor(store)
		require.NoError(t, err)
		done := make(chan struct{})
		go func() {
			defer close(done)
			p.OnEnd(modelCallStub("r3", testExchange("cc"), 1).Snapshot())
		}()
		<-entered
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		err = p.Shutdown(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorIs(t, p.Shutdown(t.Context()), context.DeadlineExceeded, "later calls return the first result")
		close(release)
		<-done
		assert.NotEmpty(t, readFile(t, store, "r3"), "the in-flight write still completes")
		cancelled, cancel2 := context.WithCancel(t.Context())
		cancel2()
		assert.ErrorIs(t, p.ForceFlush(cancelled), context.Canceled)
	})
}

func TestDurableProcessorConcurrentSafe(t *testing.T) {
	store := newStore(t)
	mopt, stats := meter(t)
	p, err := NewDurableProcessor(store, mopt)
	require.NoError(t, err)
	const goroutines, perG = 16, 10
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perG {
				rid := fmt.Sprintf("r%d", (g+i)%3)
				p.OnEnd(modelCallStub(rid, testExchange(fmt.Sprintf("%02d%02d", g, i)), byte(i)).Snapshot())
			}
		}()
	}
	wg.Wait()
	total := 0
	for r := range 3 {
		lines, invalid, err := store.ReadAvailable(fmt.Sprintf("r%d", r))
		require.NoError(t, err)
		assert.Zero(t, invalid)
		total += len(lines)
	}
	assert.Equal(t, goroutines*perG, total)
	assert.Equal(t, outcomes{"written": goroutines * perG}, stats())
	require.NoError(t, p.Shutdown(t.Context()))
}

func TestExporterExportSpans(t *testing.T) {
	t.Run("batch continues past a failing record", func(t *testing.T) {
		store := newStore(t)
		mopt, stats := meter(t)
		e, err := New(store, mopt)
		require.NoError(t, err)
		ex, ex2 := testExchange("dd"), testExchange("ee")
		spans := tracetest.SpanStubs{
			modelCallStub("r1", ex, 1),
			modelCallStub("bad/id", ex, 2),
			{Name: "not a model call"},
			modelCallStub("r1", ex2, 3),
		}.Snapshots()
		err = e.ExportSpans(t.Context(), spans)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "Invalid rollout id")
		assert.Equal(t, wantLine(ex, 1)+wantLine(ex2, 3), readFile(t, store, "r1"))
		assert.Equal(t, outcomes{"written": 2, "rejected": 1}, stats())
	})
	t.Run("record without required attributes fails", func(t *testing.T) {
		store := newStore(t)
		e, err := New(store)
		require.NoError(t, err)
		span := tracetest.SpanStub{Attributes: []attribute.KeyValue{
			semconv.GymtraceRolloutIDKey.String("r5"), semconv.GymtraceModelCallIDKey.String("x"),
		}}
		err = e.ExportSpans(t.Context(), []sdktrace.ReadOnlySpan{span.Snapshot()})
		require.ErrorContains(t, err, string(semconv.GymtraceDialectKey)+" is required")
		assert.True(t, incomplete(t, store, "r5"))
	})
	t.Run("cancelled ctx writes nothing and marks", func(t *testing.T) {
		store := newStore(t)
		e, err := New(store)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		err = e.ExportSpans(ctx, []sdktrace.ReadOnlySpan{modelCallStub("r6", testExchange("ee"), 1).Snapshot()})
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, "", readFile(t, store, "r6"))
		assert.True(t, incomplete(t, store, "r6"))
	})
	t.Run("after Shutdown", func(t *testing.T) {
		store := newStore(t)
		e, err := New(store)
		require.NoError(t, err)
		require.NoError(t, e.Shutdown(t.Context()))
		require.NoError(t, e.Shutdown(t.Context()))
		err = e.ExportSpans(t.Context(), []sdktrace.ReadOnlySpan{modelCallStub("r7", testExchange("ff"), 1).Snapshot()})
		require.ErrorIs(t, err, errShutdown)
		assert.True(t, incomplete(t, store, "r7"))
		assert.Equal(t, "", readFile(t, store, "r7"))
		require.NoError(t, e.ExportSpans(t.Context(), tracetest.SpanStubs{{Name: "x"}}.Snapshots()),
			"spans that are not model calls are no loss")
	})
	t.Run("nil store", func(t *testing.T) {
		_, err := New(nil)
		require.Error(t, err)
		_, err = NewDurableProcessor(nil)
		require.Error(t, err)
	})
}

func TestWithoutPayloads(t *testing.T) {
	mem := tracetest.NewInMemoryExporter()
	exp := WithoutPayloads(mem)
	ex := testExchange("ab")
	ex.RequestRaw = strp("raw")
	with := modelCallStub("r1", ex, 1)
	with.Attributes = append(capture.ExchangeAttributes(ex, capture.WithMessageContent(true)), semconv.GymtraceRolloutIDKey.String("r1"))
	without := tracetest.SpanStub{Name: "plain", Attributes: []attribute.KeyValue{attribute.String("k", "v")}}
	in := tracetest.SpanStubs{with, without}.Snapshots()
	require.NoError(t, exp.ExportSpans(t.Context(), in))
	got := mem.GetSpans()
	require.Len(t, got, 2)
	keys := map[attribute.Key]attribute.Value{}
	for _, kv := range got[0].Attributes {
		keys[kv.Key] = kv.Value
	}
	for _, k := range semconv.PayloadKeys {
		assert.NotContains(t, keys, k, "payload %s stripped", k)
		sk, ok := semconv.PayloadSizeKey(k)
		require.True(t, ok)
		assert.Contains(t, keys, sk, "size of %s kept", k)
	}
	assert.Contains(t, keys, semconv.GenAIOutputMessagesKey, "opt-in message content is not a payload: kept")
	assert.Equal(t, "policy", keys[semconv.GenAIRequestModelKey].AsString())
	assert.Equal(t, without.Attributes, got[1].Attributes)
	assert.Len(t, in[0].Attributes(), len(with.Attributes), "the input span is not modified")
	require.NoError(t, exp.Shutdown(t.Context()))

	// A nil next exporter is an error of each export, not a panic (from a fresh-user trial).
	nilNext := WithoutPayloads(nil)
	require.ErrorIs(t, nilNext.ExportSpans(t.Context(), in), ErrNilExporter)
	require.NoError(t, nilNext.Shutdown(t.Context()))
}

func BenchmarkEncodeRecord(b *testing.B) {
	ex := testExchange("863410a8d52e4be6a31efc5c6e9d4629")
	big := strings.Repeat(`{"role":"user","content":"hello world, this is a message"},`, 200)
	ex.Request = []byte(`{"model":"policy","messages":[` + big + `{"role":"user","content":"end"}]}`)
	span := modelCallStub("r1", ex, 1).Snapshot()
	// unchecked: the line checks the payloads; checked: their producer did (WithCheckedBodies).
	for _, checked := range []bool{false, true} {
		b.Run(map[bool]string{false: "unchecked", true: "checked"}[checked], func(b *testing.B) {
			var set capture.CheckedBodies
			if checked {
				set.Add(span.SpanContext().SpanID(), ex.Request, ex.Response)
			}
			var buf []byte
			b.ReportAllocs()
			b.SetBytes(int64(len(ex.Request)))
			for b.Loop() {
				v := sdkspan.FromReadOnly(span)
				set.SetChecked(&v)
				line, err := capture.ModelCallLines{}.NewLine("r1", &v)
				if err != nil {
					b.Fatal(err)
				}
				buf = line.AppendTo(buf[:0])
			}
		})
	}
}

func BenchmarkDurableProcessorOnEnd(b *testing.B) {
	store := newStore(b)
	mopt, stats := meter(b)
	p, err := NewDurableProcessor(store, mopt)
	require.NoError(b, err)
	span := modelCallStub("bench", testExchange("863410a8d52e4be6a31efc5c6e9d4629"), 1).Snapshot()
	b.ReportAllocs()
	for b.Loop() {
		p.OnEnd(span)
	}
	b.StopTimer()
	require.Equal(b, int64(b.N), stats()["written"])
}

// outcomes is what the capture writer counted for model-call spans
// (gymtrace.capture.writer.spans, line kind model_call), by outcome, ignored spans left out.
type outcomes map[string]int64

// meter returns an option giving a constructor a meter provider read by a ManualReader, and the
// function that collects its span counts.
func meter(t testing.TB) (Option, func() outcomes) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	return WithMeterProvider(mp), func() outcomes {
		var rm metricdata.ResourceMetrics
		require.NoError(t, reader.Collect(context.Background(), &rm))
		out := outcomes{}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name != semconv.GymtraceCaptureWriterSpansName {
					continue
				}
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					kind, _ := dp.Attributes.Value(semconv.GymtraceCaptureLineKindKey)
					require.Equal(t, semconv.GymtraceCaptureLineKindModelCall, kind.AsString())
					o, _ := dp.Attributes.Value(semconv.GymtraceCaptureOutcomeKey)
					if o.AsString() != "ignored" {
						out[o.AsString()] += dp.Value
					}
				}
			}
		}
		return out
	}
}

// #14 finding 9: only the directory fsync of a new capture file fails. The record is there, so
// the rollout is not marked and ExportSpans (the proxy's durability wait) reports no error; the
// outcome and a warning say that the file's directory entry may not survive a power loss.
func TestDurableProcessorDirSyncFailure(t *testing.T) {
	store := newStore(t, capture.WithDirSyncHook(func(string) error { return errors.New("dir fsync EIO") }))
	logger, logs := newLogger()
	mopt, stats := meter(t)
	p, err := NewDurableProcessor(store, WithLogger(logger), mopt)
	require.NoError(t, err)
	ex := testExchange("dd")
	p.OnEnd(modelCallStub("r8", ex, 1).Snapshot())
	assert.Equal(t, wantLine(ex, 1), readFile(t, store, "r8"))
	assert.False(t, incomplete(t, store, "r8"), "the record is there: not marked")
	assert.Equal(t, outcomes{"written_dir_unsynced": 1}, stats())
	assert.Contains(t, logs.String(), "directory entry may not survive a power loss")
	assert.Contains(t, logs.String(), "dir fsync EIO")
	assert.NotContains(t, logs.String(), "record not written")
	require.NoError(t, p.Shutdown(t.Context()))
}

func TestDurableProcessorCheckedBodies(t *testing.T) {
	// A spaced request object: the line compacts it unless its producer registered it as checked,
	// in which case it goes in as it is (the check is skipped, which this difference shows).
	ex := testExchange("863410a8d52e4be6a31efc5c6e9d4629")
	ex.Request = []byte(`{"model": "policy"}`)
	compacted := *ex
	compacted.Request = []byte(`{"model":"policy"}`)
	for _, c := range []struct {
		name     string
		register bool
		want     *capture.Exchange
	}{
		{name: "registered: taken as checked", register: true, want: ex},
		{name: "not registered: checked and compacted", want: &compacted},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := newStore(t)
			var checked capture.CheckedBodies
			p, err := NewDurableProcessor(store, WithCheckedBodies(&checked))
			require.NoError(t, err)
			stub := modelCallStub("r1", ex, 1)
			if c.register {
				checked.Add(stub.SpanContext.SpanID(), ex.Request, nil)
			}
			p.OnEnd(stub.Snapshot())
			assert.Equal(t, wantLine(c.want, 1), readFile(t, store, "r1"))
			require.NoError(t, p.Shutdown(t.Context()))
		})
	}
}

// TestExporterSpanTimes: an SDK span's start and end become the record's started_at and
// completed_at exactly (SPEC §0 "Durability contract": seconds = UnixNano / 1e9): an unset time
// (the zero time.Time, which the OTLP exporters send as 0) is 0.0, and a time past the int64
// nanoseconds (year 2262) its seconds, never the year-1 or wrapped value of time.Time.UnixNano.
func TestExporterSpanTimes(t *testing.T) {
	maxOTLP := time.Unix(18446744073, 709551615)
	tests := []struct {
		name       string
		start, end time.Time
		want       string
	}{
		{"end unset", testStart, time.Time{}, `"started_at":1786032154.1234567,"completed_at":0.0,`},
		{"start unset", time.Time{}, testEnd, `"started_at":0.0,"completed_at":1786032154.966123,`},
		{"2^64-1 ns", maxOTLP, maxOTLP, `"started_at":18446744073.709553,"completed_at":18446744073.709553,`},
		{"year 3000", testStart, time.Date(3000, 1, 1, 0, 0, 0, 500_000_000, time.UTC), `"completed_at":32503680000.5,`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := newStore(t)
			e, err := New(store)
			require.NoError(t, err)
			stub := modelCallStub("r1", testExchange("aa"), 1)
			stub.StartTime, stub.EndTime = tt.start, tt.end
			require.NoError(t, e.ExportSpans(t.Context(), tracetest.SpanStubs{stub}.Snapshots()))
			assert.Contains(t, readFile(t, store, "r1"), tt.want)
			require.NoError(t, e.Shutdown(t.Context()))
		})
	}
}
