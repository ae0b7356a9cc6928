package gymcaptureexporter

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture/capturetest"
)

// TestObservationSpanFields: every field the line keeps comes through OTLP as the SDK processor
// sees it — each span kind and status, events and links the span limits dropped, remote parents,
// values of every scalar and slice type — so the files are byte-identical.
func TestObservationSpanFields(t *testing.T) {
	side := newSDKSide(t, sdktrace.WithSpanLimits(sdktrace.SpanLimits{
		AttributeValueLengthLimit: -1, AttributeCountLimit: 128, EventCountLimit: 2, LinkCountLimit: 1,
		AttributePerEventCountLimit: 128, AttributePerLinkCountLimit: 128,
	}))
	tracer := side.tp.Tracer("agent")
	remote := trace.ContextWithRemoteSpanContext(t.Context(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0x11, 15: 1}, SpanID: trace.SpanID{0x22, 7: 2}, TraceFlags: trace.FlagsSampled, Remote: true}))
	ref := func(id string) trace.EventOption {
		return trace.WithAttributes(attribute.String("gymtrace.model_call.id", id), attribute.String("other", "not kept"))
	}
	kinds := []trace.SpanKind{trace.SpanKindInternal, trace.SpanKindServer, trace.SpanKindClient, trace.SpanKindProducer, trace.SpanKindConsumer}
	statuses := []codes.Code{codes.Unset, codes.Ok, codes.Error}
	for i, k := range kinds {
		links := []trace.Link{
			{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{byte(i + 1)}}),
				Attributes: []attribute.KeyValue{attribute.String("gymtrace.model_call.id", fmt.Sprintf("linked-%d", i))}},
			{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{2}, SpanID: trace.SpanID{9}})},
		}
		_, s := tracer.Start(remote, fmt.Sprintf("invoke_agent a%d", i), trace.WithSpanKind(k), trace.WithLinks(links...),
			trace.WithAttributes(
				attribute.String("gymtrace.rollout.id", "fields"),
				attribute.String("gen_ai.operation.name", "invoke_agent"),
				attribute.String("gymtrace.agent.invocation.id", fmt.Sprintf("inv-%d", i)),
				attribute.StringSlice("gymtrace.model_call.ids", []string{"a", "b\u2028"}),
				attribute.Int64Slice("gymtrace.sandbox.exit_code", []int64{1, -2}),
				attribute.Float64Slice("gymtrace.sandbox.wall_time_s", []float64{1, 2.5}),
				attribute.BoolSlice("gymtrace.sandbox.provider", []bool{true}),
				attribute.Float64("gymtrace.sandbox.cpu_time_s", 3),
				attribute.Bool("gen_ai.conversation.compacted", false),
				attribute.String("gen_ai.input.messages", "[not kept]"),
			))
		for j := range 3 {
			s.AddEvent("gymtrace.model_call", ref(fmt.Sprintf("ev-%d-%d", i, j)))
		}
		s.SetStatus(statuses[i%len(statuses)], "why")
		s.End()
	}

	spans := side.spans()
	require.Len(t, spans, len(kinds))
	require.Equal(t, 1, spans[0].DroppedEvents())
	require.Equal(t, 1, spans[0].DroppedLinks())
	colDir := t.TempDir()
	col := newCollector(t, colDir, nil)
	require.NoError(t, col.ConsumeTraces(t.Context(), otlpTraces(t, spans)))
	want := capturetest.DirContents(t, side.dir)
	require.Len(t, want, 1)
	assert.Equal(t, want, capturetest.DirContents(t, colDir))
	file := want["fields.observations.jsonl"]
	for _, s := range []string{`"kind":"server"`, `"kind":"consumer"`, `"status_code":"ok"`, `"status_code":"error"`,
		`"dropped_events":1,"dropped_links":1`, `"parent_span_id":"2200000000000002"`, `"gymtrace.sandbox.exit_code":[1,-2]`,
		`"gymtrace.sandbox.wall_time_s":[1.0,2.5]`, `"gymtrace.sandbox.cpu_time_s":3.0`} {
		assert.Contains(t, file, s)
	}
	assert.NotContains(t, file, "not kept")
}

// TestObservationSpanAdapter covers what OTLP can carry but the otel-go SDK never sends: unset
// times, an unspecified kind, values the mapping must see in their own type.
func TestObservationSpanAdapter(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 5, time.UTC)
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{1, 15: 1})
	sp.SetSpanID(pcommon.SpanID{2, 7: 2})
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(t0))
	sp.Status().SetCode(ptrace.StatusCodeError)
	m := sp.Attributes()
	m.PutStr("gen_ai.operation.name", "invoke_agent")
	m.PutEmptySlice("gymtrace.model_call.ids")
	m.PutEmptySlice("gymtrace.sandbox.id").AppendEmpty().SetStr("mixed")
	ids, _ := m.Get("gymtrace.sandbox.id")
	ids.Slice().AppendEmpty().SetInt(1)
	ev := sp.Events().AppendEmpty()
	ev.SetName("gymtrace.model_call")
	ev.Attributes().PutStr("gymtrace.model_call.id", "c-1")

	v := spanView(sp)
	attrs := v.Attributes
	assert.Equal(t, trace.SpanKindUnspecified, v.Kind)
	assert.Equal(t, codes.Error, v.StatusCode)
	assert.Equal(t, t0, v.StartTime)
	assert.True(t, v.EndTime.IsZero(), "an unset end is a span that has not ended")
	assert.False(t, v.ParentSpanID.IsValid())
	require.Len(t, v.Events, 1)
	assert.True(t, v.Events[0].Time.IsZero(), "an unset event time stays unset")
	empty, ok := attrs.Lookup("gymtrace.model_call.ids")
	require.True(t, ok)
	assert.Equal(t, attribute.STRINGSLICE, empty.Type(), "an empty array is an empty string slice")
	assert.Empty(t, empty.AsStringSlice())
	mixed, ok := attrs.Lookup("gymtrace.sandbox.id")
	require.True(t, ok)
	assert.Equal(t, attribute.SLICE, mixed.Type(), "a mixed array stays what it is")
	_, ok = attrs.Lookup("absent")
	assert.False(t, ok)
	kind, ok := agentobs.ObservationKind(attrs)
	require.True(t, ok)
	assert.Equal(t, agentobs.KindAgentInvocation, kind)

	line := string(agentobs.NewObservationLine("r", v).AppendJSON(nil))
	assert.Contains(t, line, `"kind":"unspecified","start_time_unix_nano":1767225600000000005,"end_time_unix_nano":null,"status_code":"error"`)
	assert.Contains(t, line, `"gymtrace.model_call.ids":[]`)
	assert.True(t, strings.HasSuffix(line, "}\n"))

	for _, k := range []struct {
		in   ptrace.SpanKind
		want trace.SpanKind
	}{
		{ptrace.SpanKindInternal, trace.SpanKindInternal}, {ptrace.SpanKindServer, trace.SpanKindServer},
		{ptrace.SpanKindClient, trace.SpanKindClient}, {ptrace.SpanKindProducer, trace.SpanKindProducer},
		{ptrace.SpanKindConsumer, trace.SpanKindConsumer}, {ptrace.SpanKindUnspecified, trace.SpanKindUnspecified},
		{ptrace.SpanKind(42), trace.SpanKindUnspecified},
	} {
		assert.Equal(t, k.want, otelSpanKinds[k.in], k.in.String())
	}
	for _, c := range []struct {
		in   ptrace.StatusCode
		want codes.Code
	}{
		{ptrace.StatusCodeUnset, codes.Unset}, {ptrace.StatusCodeOk, codes.Ok}, {ptrace.StatusCodeError, codes.Error}, {ptrace.StatusCode(9), codes.Unset},
	} {
		assert.Equal(t, c.want, otelStatusCodes[c.in], c.in.String())
	}
}

// BenchmarkPushObservation measures the per-span path of an observation span: pdata -> line ->
// durable append (one fsync per push).
func BenchmarkPushObservation(b *testing.B) {
	side := newSDKSide(b)
	rec, err := agentobs.NewRecorder(side.tp, "bench")
	require.NoError(b, err)
	ctx, inv := rec.StartInvocation(b.Context(), "solver")
	for i := range 8 {
		require.NoError(b, agentobs.RecordModelCall(ctx, fmt.Sprintf("mc-%d", i)))
	}
	inv.End(nil)
	td := otlpTraces(b, side.spans())
	e, _, m := newStarted(b, nil)
	b.ReportAllocs()
	for b.Loop() {
		if err := e.pushTraces(b.Context(), td); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	require.Equal(b, int64(b.N), capturetest.Counts(b, m)["observation/written"])
}

// BenchmarkObservationLine measures building one observation line from a pdata span, without the
// write.
func BenchmarkObservationLine(b *testing.B) {
	side := newSDKSide(b)
	rec, err := agentobs.NewRecorder(side.tp, "bench")
	require.NoError(b, err)
	ctx, inv := rec.StartInvocation(b.Context(), "solver")
	for i := range 8 {
		require.NoError(b, agentobs.RecordModelCall(ctx, fmt.Sprintf("mc-%d", i)))
	}
	inv.End(nil)
	sp := otlpTraces(b, side.spans()).ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = agentobs.NewObservationLine("bench", spanView(sp)).AppendJSON(buf[:0])
	}
	require.NotEmpty(b, buf)
}
