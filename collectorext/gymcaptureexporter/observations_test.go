package gymcaptureexporter

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/capturetest"
	"github.com/gymtrace/gymtrace/collectorext/gymcaptureexporter/internal/metadata"
)

// agentService is the service.name of the agent side's spans.
const agentService = "agent"

// sdkSide is an agent's process using the Go SDK: its tracer provider runs the SDK's
// agentobs.ObservationProcessor over its own capture directory (the reference files) and keeps
// every span in memory (what it would export over OTLP).
type sdkSide struct {
	tp      *sdktrace.TracerProvider
	mem     *tracetest.InMemoryExporter
	metrics *sdkmetric.ManualReader // the processor's counters
	dir     string
}

func newSDKSide(t testing.TB, opts ...sdktrace.TracerProviderOption) *sdkSide {
	t.Helper()
	dir := t.TempDir()
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	mp, metrics := meterReader()
	proc, err := agentobs.NewObservationProcessor(store, agentobs.WithProcessorLogger(slog.New(slog.DiscardHandler)),
		agentobs.WithProcessorMeterProvider(mp))
	require.NoError(t, err)
	mem := tracetest.NewInMemoryExporter()
	opts = append([]sdktrace.TracerProviderOption{sdktrace.WithSpanProcessor(proc), sdktrace.WithSyncer(mem),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", agentService)))}, opts...)
	tp := sdktrace.NewTracerProvider(opts...)
	t.Cleanup(func() { require.NoError(t, tp.Shutdown(context.Background())) })
	return &sdkSide{tp: tp, mem: mem, metrics: metrics, dir: dir}
}

// spans returns the ended spans in the order they ended (the order the processor wrote them).
func (s *sdkSide) spans() []sdktrace.ReadOnlySpan { return s.mem.GetSpans().Snapshots() }

// newCollector builds gymcapture through its factory over dir (defaults, then edit), starts it and
// shuts it down when t ends.
func newCollector(t testing.TB, dir string, edit func(*Config)) exporter.Traces {
	t.Helper()
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.CaptureDir = dir
	if edit != nil {
		edit(cfg)
	}
	require.NoError(t, cfg.Validate())
	exp, err := f.CreateTraces(context.Background(), exportertest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, exp.Shutdown(context.Background())) })
	return exp
}

// readBundle reads rid's observations file in dir and builds its bundle; the file must exist.
func readBundle(t testing.TB, dir, rid string) agentobs.AgentObservationBundle {
	t.Helper()
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	b, exists, err := agentobs.ReadBundle(store, rid)
	require.NoError(t, err)
	require.True(t, exists, "%s has an observations file", rid)
	return b
}

// dump is b's JSON text (Gym's ng_agent_observations dump).
func dump(t testing.TB, b agentobs.AgentObservationBundle) string {
	t.Helper()
	out, err := b.AppendJSON(nil)
	require.NoError(t, err)
	return string(out)
}

// roundTripFunc is an http.RoundTripper that never touches the network.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestObservationsFromRecorder: the spans the Go recorder emits, exported over OTLP to gymcapture,
// give the observations file the SDK's ObservationProcessor writes for the same spans, byte for
// byte, and its bundle is the recorder's own.
func TestObservationsFromRecorder(t *testing.T) {
	side := newSDKSide(t)
	rec, err := agentobs.NewRecorder(side.tp, "rec-1")
	require.NoError(t, err)
	// The model client: the capture proxy answers with the model-call id and the traceresponse of
	// its model-call span, which Transport turns into an event and a link.
	proxy := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		h := http.Header{}
		h.Set(agentobs.ModelCallIDHeader, "mc-http")
		h.Set("traceresponse", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
		return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
	})
	client := &http.Client{Transport: agentobs.Transport(proxy)}

	ctx, root := rec.StartInvocation(t.Context(), "planner")
	require.NoError(t, agentobs.RecordModelCall(ctx, "mc-1"))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:9/v1/responses", http.NoBody)
	require.NoError(t, err)
	resp, err := client.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())

	tctx, task := agentobs.StartToolCall(ctx, "task", "call_1", agentobs.WithSandboxID("sb-1"))
	sctx, sub := rec.StartInvocation(tctx, "researcher")
	require.NoError(t, agentobs.RecordModelCallRef(sctx, agentobs.ModelCallRef{
		ModelRef: &agentobs.ModelServerRef{Type: agentobs.ModelRefTypeResponsesAPIModels, Name: "policy"}, ResponseID: agentobs.Ptr("resp-9")}))
	_, grep := agentobs.StartToolCall(sctx, "grep", "call_2")
	grep.End(context.DeadlineExceeded)
	sub.End(errors.New("boom"))
	task.End(nil)

	cctx, comp := agentobs.StartCompaction(ctx, "auto")
	require.NoError(t, agentobs.RecordModelCall(cctx, "mc-sum"))
	comp.End(agentobs.CompactionResult{TokensBefore: agentobs.Ptr(9000), TokensAfter: agentobs.Ptr(400),
		Summary: agentobs.Ptr("so far: \u2028 \"quoted\""), FirstKeptItemID: agentobs.Ptr("msg_7")})
	require.NoError(t, agentobs.RecordModelCall(ctx, "mc-2"))
	end := time.Now()
	require.NoError(t, agentobs.RecordSandbox(ctx, agentobs.SandboxObservation{
		Role: agentobs.SandboxRoleAgent, Provider: agentobs.Ptr("local"), SandboxID: agentobs.Ptr("sb-1"),
		Outcome: agentobs.SandboxOutcomeOOM, ExitCode: agentobs.Ptr(137), WallTimeS: agentobs.Ptr(0.5),
		CPUTimeS: agentobs.Ptr(0.25), PeakMemoryMiB: agentobs.Ptr(64.0), ResourceUsageSource: agentobs.Ptr("rusage"),
	}, end.Add(-500*time.Millisecond), end))
	root.End(nil)

	spans := side.spans()
	require.Len(t, spans, 6, "two invocations, two tool calls, a compaction, a sandbox run")
	require.Equal(t, map[string]int64{"observation/written": 6}, capturetest.Counts(t, side.metrics))

	colDir := t.TempDir()
	require.NoError(t, newCollector(t, colDir, nil).ConsumeTraces(t.Context(), otlpTraces(t, spans)))

	want := capturetest.DirContents(t, side.dir)
	require.Equal(t, []string{"rec-1.observations.jsonl"}, keys(want))
	assert.Equal(t, want, capturetest.DirContents(t, colDir), "byte-identical to the SDK processor's file")
	assert.Contains(t, want["rec-1.observations.jsonl"], `"links":[{"trace_id":"0af7651916cd43dd8448eb211c80319c"`, "the link came through")

	got := readBundle(t, colDir, "rec-1")
	assert.Equal(t, dump(t, rec.Bundle()), dump(t, got))
	require.Len(t, got.Records, 6)
	assert.Empty(t, got.Gaps)
	for _, r := range got.Records {
		if inv, ok := r.(*agentobs.AgentInvocation); ok && inv.InvocationID == root.ID() {
			var ids []string
			for _, ref := range inv.ModelCalls {
				if ref.ModelCallID != nil {
					ids = append(ids, *ref.ModelCallID)
				}
			}
			assert.Equal(t, []string{"mc-1", "mc-http", "mc-sum", "mc-2"}, ids)
		}
	}
}

// TestObservationsFromPlainTracer writes observation spans the way an agent in another language
// does — a plain OpenTelemetry tracer, only the GenAI conventions' attributes plus
// gymtrace.rollout.id, raw keys, no agentobs API — and checks the bundle gymcapture's file builds
// against the records those conventions define, and the file against the SDK processor's.
func TestObservationsFromPlainTracer(t *testing.T) {
	side := newSDKSide(t)
	tracer := side.tp.Tracer("python-agent")
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	rid := attribute.String("gymtrace.rollout.id", "py-1")
	start := func(ctx context.Context, name string, ms int, attrs []attribute.KeyValue, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
		opts = append(opts, trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(at(ms)), trace.WithAttributes(attrs...))
		return tracer.Start(ctx, name, opts...)
	}
	end := func(s trace.Span, ms int) { s.End(trace.WithTimestamp(at(ms))) }
	modelCall := func(s trace.Span, ms int, id string) {
		s.AddEvent("gymtrace.model_call", trace.WithTimestamp(at(ms)), trace.WithAttributes(attribute.String("gymtrace.model_call.id", id)))
	}
	link := trace.Link{
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{0x42, 15: 1}, SpanID: trace.SpanID{0x43, 7: 1}}),
		Attributes: []attribute.KeyValue{attribute.String("gen_ai.response.id", "resp-7"),
			attribute.String("gymtrace.model_ref.type", "responses_api_models"), attribute.String("gymtrace.model_ref.name", "policy")},
	}

	ctx, root := start(t.Context(), "invoke_agent planner", 0, []attribute.KeyValue{rid,
		attribute.String("gen_ai.operation.name", "invoke_agent"), attribute.String("gen_ai.agent.name", "planner"),
		attribute.StringSlice("gymtrace.model_call.ids", []string{"mc-1", "mc-2"})}, trace.WithLinks(link))
	modelCall(root, 5, "mc-1")
	tctx, tool := start(ctx, "execute_tool task", 10, []attribute.KeyValue{rid,
		attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", "task"),
		attribute.String("gen_ai.tool.call.id", "call_A"), attribute.String("gen_ai.tool.type", "function")})
	sctx, sub := start(tctx, "invoke_agent researcher", 20, []attribute.KeyValue{rid,
		attribute.String("gen_ai.operation.name", "invoke_agent"), attribute.String("gen_ai.agent.name", "researcher"),
		attribute.StringSlice("gymtrace.model_call.ids", []string{})}) // empty: an empty OTLP array
	_, box := start(sctx, "sandbox agent", 30, []attribute.KeyValue{rid,
		attribute.String("gymtrace.sandbox.role", "agent"), attribute.String("gymtrace.sandbox.provider", "docker"),
		attribute.String("gymtrace.sandbox.id", "sb-1"), attribute.Int("gymtrace.sandbox.exit_code", 137),
		attribute.Float64("gymtrace.sandbox.wall_time_s", 0.11), attribute.Float64("gymtrace.sandbox.cpu_time_s", 0.05),
		attribute.Float64("gymtrace.sandbox.peak_memory_mib", 64.5), attribute.String("gymtrace.sandbox.resource_usage_source", "cgroup")})
	box.SetAttributes(attribute.String("error.type", "oom"))
	box.SetStatus(codes.Error, "killed")
	end(box, 140)
	sub.SetAttributes(attribute.String("error.type", "RuntimeError"))
	sub.SetStatus(codes.Error, "boom")
	end(sub, 150)
	tool.SetStatus(codes.Ok, "")
	end(tool, 160)
	cctx, compact := start(ctx, "compact history", 170, []attribute.KeyValue{rid,
		attribute.Bool("gen_ai.conversation.compacted", true), attribute.String("gymtrace.compaction.trigger", "auto"),
		attribute.Int("gymtrace.compaction.tokens_before", 9000), attribute.Int("gymtrace.compaction.tokens_after", 400),
		attribute.String("gymtrace.compaction.summary", "the story so far"), attribute.String("gymtrace.compaction.first_kept_item.id", "msg_3")})
	modelCall(compact, 175, "mc-sum")
	end(compact, 180)
	// Not observations: a model call (names its operation), a plain span. A tool without a rollout
	// id inherits its trace's (SPEC §0 D18), in both writers.
	_, chat := start(cctx, "chat gpt", 182, []attribute.KeyValue{rid,
		attribute.String("gen_ai.operation.name", "chat"), attribute.Bool("gen_ai.conversation.compacted", true)})
	end(chat, 185)
	_, step := start(ctx, "plan step", 186, []attribute.KeyValue{rid})
	end(step, 187)
	_, stray := start(ctx, "execute_tool stray", 188, []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.call.id", "call_X")})
	end(stray, 189)
	modelCall(root, 190, "mc-2")
	end(root, 1000)

	colDir := t.TempDir()
	col := newCollector(t, colDir, nil)
	require.NoError(t, col.ConsumeTraces(t.Context(), otlpTraces(t, side.spans())))
	want := capturetest.DirContents(t, side.dir)
	require.Equal(t, []string{"py-1.observations.jsonl"}, keys(want))
	assert.Equal(t, want, capturetest.DirContents(t, colDir), "byte-identical to the SDK processor's file")
	assert.Contains(t, want["py-1.observations.jsonl"], `"gymtrace.model_call.ids":[]`)
	assert.Equal(t, map[string]int64{"observation/written": 6, "observation/ignored": 2}, capturetest.Counts(t, side.metrics))

	rootID, subID := root.SpanContext().SpanID().String(), sub.SpanContext().SpanID().String()
	secs := func(ms int) *float64 { return agentobs.Ptr(float64(at(ms).UnixNano()) / 1e9) }
	policy := &agentobs.ModelServerRef{Type: "responses_api_models", Name: "policy"}
	byID := func(id string) agentobs.ModelCallRef { return agentobs.ModelCallRef{ModelCallID: agentobs.Ptr(id)} }
	expected := agentobs.AgentObservationBundle{
		Source: agentobs.BundleSource,
		Records: []agentobs.Record{
			&agentobs.AgentInvocation{InvocationID: rootID, Status: agentobs.InvocationStatusCompleted, DurationMS: agentobs.Ptr(1000.0),
				ModelCalls: []agentobs.ModelCallRef{byID("mc-1"), byID("mc-2"), {ModelRef: policy, ResponseID: agentobs.Ptr("resp-7")}}},
			&agentobs.ToolCallObservation{InvocationID: rootID, ToolCallID: "call_A", ToolName: agentobs.Ptr("task"),
				StartedAt: secs(10), CompletedAt: secs(160), DurationMS: agentobs.Ptr(150.0),
				TimingSource: agentobs.Ptr(agentobs.TimingSourceExecutor), Status: agentobs.ToolCallStatusCompleted},
			&agentobs.AgentInvocation{InvocationID: subID, ParentInvocationID: agentobs.Ptr(rootID), SpawnedByToolCallID: agentobs.Ptr("call_A"),
				Status: agentobs.InvocationStatusFailed, DurationMS: agentobs.Ptr(130.0), ErrorType: agentobs.Ptr("RuntimeError")},
			&agentobs.SandboxObservation{Role: agentobs.SandboxRoleAgent, Provider: agentobs.Ptr("docker"), SandboxID: agentobs.Ptr("sb-1"),
				Outcome: agentobs.SandboxOutcomeOOM, ExitCode: agentobs.Ptr(137), WallTimeS: agentobs.Ptr(0.11), CPUTimeS: agentobs.Ptr(0.05),
				PeakMemoryMiB: agentobs.Ptr(64.5), ResourceUsageSource: agentobs.Ptr("cgroup"), ErrorType: agentobs.Ptr("oom")},
			&agentobs.ContextCompactionObservation{InvocationID: rootID, ObservedAt: secs(180), Trigger: agentobs.Ptr("auto"),
				TokensBefore: agentobs.Ptr(9000), TokensAfter: agentobs.Ptr(400), Outcome: agentobs.CompactionOutcomeCompleted,
				Summary: agentobs.Ptr("the story so far"), FirstKeptItemID: agentobs.Ptr("msg_3"),
				BeforeModelCall: agentobs.Ptr(byID("mc-1")), ModelCalls: []agentobs.ModelCallRef{byID("mc-sum")}, AfterModelCall: agentobs.Ptr(byID("mc-2"))},
			&agentobs.ToolCallObservation{InvocationID: rootID, ToolCallID: "call_X",
				StartedAt: secs(188), CompletedAt: secs(189), DurationMS: agentobs.Ptr(1.0),
				TimingSource: agentobs.Ptr(agentobs.TimingSourceExecutor), Status: agentobs.ToolCallStatusCompleted},
		},
	}
	require.NoError(t, expected.Validate())
	assert.Equal(t, dump(t, expected), dump(t, readBundle(t, colDir, "py-1")))
}

// TestObservationsMixedBatch: one OTLP request holding model-call spans and observation spans (of
// the same rollout and of another) writes both files: the capture records the SDK exporter writes
// and the observation lines the SDK processor writes.
func TestObservationsMixedBatch(t *testing.T) {
	cases := capturetest.Cases(t)
	side := newSDKSide(t)
	rec, err := agentobs.NewRecorder(side.tp, "mixed")
	require.NoError(t, err)
	ctx, inv := rec.StartInvocation(t.Context(), "solver")
	_, tool := agentobs.StartToolCall(ctx, "bash", "call_1")
	tool.End(nil)
	inv.End(nil)
	other, err := agentobs.NewRecorder(side.tp, "other")
	require.NoError(t, err)
	_, inv2 := other.StartInvocation(t.Context(), "solo")
	inv2.End(nil)
	require.Len(t, side.spans(), 3)

	call1, call2 := inRollout(cases[0], "mixed", 1), inRollout(cases[1], "mixed", 2)
	td := toTraces([]capturetest.Span{call1})
	otlpTraces(t, side.spans()).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	toTraces([]capturetest.Span{call2}).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())

	colDir := t.TempDir()
	e, err := newCaptureExporter(&Config{CaptureDir: colDir, DirMode: defaultDirMode, FileMode: defaultFileMode,
		IncludePayloads: true, Observations: true}, meteredSettings(t))
	require.NoError(t, err)
	require.NoError(t, e.start(t.Context(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, e.shutdown(context.Background())) })
	require.NoError(t, e.pushTraces(t.Context(), td))

	want := capturetest.DirContents(t, side.dir)
	want["mixed.capture.jsonl"] = cases[0].Want(call1.TraceID, call1.SpanID) + cases[1].Want(call2.TraceID, call2.SpanID)
	assert.Equal(t, want, capturetest.DirContents(t, colDir))
	assert.Len(t, want, 3, "mixed.capture.jsonl, mixed.observations.jsonl, other.observations.jsonl")
	assert.Equal(t, map[string]int64{"observation/written": 3, "observation/ignored": 2, "model_call/written": 2},
		capturetest.Counts(t, e.meterProvider.(*meteredProvider).reader))
	assert.Equal(t, dump(t, rec.Bundle()), dump(t, readBundle(t, colDir, "mixed")))
	assert.Equal(t, dump(t, other.Bundle()), dump(t, readBundle(t, colDir, "other")))
}
