package agentobs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/agentobs"
)

// TestPlainTracerSpans writes observation spans the way an agent in another language does: a plain
// OpenTelemetry tracer, only the GenAI conventions' attributes plus gymtrace.rollout.id, no
// agentobs API. The spans must map to the same bundle directly and through the observations file.
func TestPlainTracerSpans(t *testing.T) {
	h := newHarness(t)
	tracer := h.tp.Tracer("python-agent")
	rid := attribute.String("gymtrace.rollout.id", "py-1")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(ms int) trace.SpanEventOption {
		return trace.WithTimestamp(t0.Add(time.Duration(ms) * time.Millisecond))
	}
	internal := trace.WithSpanKind(trace.SpanKindInternal)
	start := func(ctx context.Context, name string, ms int, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
		return tracer.Start(ctx, name, internal, at(ms), trace.WithAttributes(append(attrs, rid)...))
	}
	end := func(s trace.Span, ms int) { s.End(at(ms)) }
	agent := func(name string) []attribute.KeyValue {
		return []attribute.KeyValue{attribute.String("gen_ai.operation.name", "invoke_agent"), attribute.String("gen_ai.agent.name", name)}
	}
	tool := func(name, id string) []attribute.KeyValue {
		return []attribute.KeyValue{attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", name), attribute.String("gen_ai.tool.call.id", id), attribute.String("gen_ai.tool.type", "function")}
	}

	ctx, root := start(t.Context(), "invoke_agent planner", 0, agent("planner")...)
	tctx, search := start(ctx, "execute_tool task", 10, tool("task", "call_A")...)
	sctx, sub := start(tctx, "invoke_agent researcher", 20, agent("researcher")...)
	_, fetch := start(sctx, "execute_tool fetch", 30, tool("fetch", "call_B")...)
	fetch.SetAttributes(attribute.String("error.type", "timeout"))
	fetch.SetStatus(codes.Error, "deadline")
	end(fetch, 130)
	_, grep := start(sctx, "execute_tool grep", 140, tool("grep", "call_C")...)
	grep.SetAttributes(attribute.String("error.type", "FileNotFoundError"))
	grep.SetStatus(codes.Error, "no such file")
	end(grep, 141)
	sub.SetStatus(codes.Ok, "")
	end(sub, 150)
	end(search, 160)
	_, compact := start(ctx, "compact history", 170, attribute.Bool("gen_ai.conversation.compacted", true))
	end(compact, 180)
	// A model call whose request holds compacted state is not a compaction: it names its operation.
	_, chat := start(ctx, "chat gpt", 190, attribute.String("gen_ai.operation.name", "chat"), attribute.Bool("gen_ai.conversation.compacted", true))
	end(chat, 200)
	// A tool below a span of another kind cannot be attributed: the chain is cut.
	wctx, work := start(ctx, "plan step", 210)
	_, orphan := start(wctx, "execute_tool edit", 220, tool("edit", "call_D")...)
	end(orphan, 230)
	end(work, 240)
	// An observation span without a rollout id inherits its trace's, which the spans that ended
	// before it named (SPEC §0 D18).
	_, stray := tracer.Start(ctx, "execute_tool stray", internal, trace.WithAttributes(tool("stray", "call_E")...))
	stray.End()
	end(root, 1000)

	spans := h.spans()
	fromSpans := agentobs.BundleFromSpans(spans)
	fromFile := h.fileBundle(t, "py-1")
	require.Equal(t, dump(t, fromSpans), dump(t, fromFile))
	c := h.counts()
	assert.Equal(t, int64(8), c["observation/written"], "the stray one too")
	assert.NotContains(t, c, "observation/unattributed/no_rollout_id")

	r := split(fromFile)
	rootID := root.SpanContext().SpanID().String()
	subID := sub.SpanContext().SpanID().String()
	require.Len(t, r.invocations, 2)
	require.Contains(t, r.invocations, rootID)
	require.Contains(t, r.invocations, subID)
	assert.Nil(t, r.invocations[rootID].ParentInvocationID)
	assert.Equal(t, agentobs.InvocationStatusCompleted, r.invocations[rootID].Status)
	assert.Equal(t, 1000.0, *r.invocations[rootID].DurationMS)
	assert.Empty(t, r.invocations[rootID].ModelCalls)
	assert.Equal(t, rootID, str(r.invocations[subID].ParentInvocationID))
	assert.Equal(t, "call_A", str(r.invocations[subID].SpawnedByToolCallID))
	assert.Equal(t, 130.0, *r.invocations[subID].DurationMS)

	require.Len(t, r.tools, 4)
	assert.Equal(t, rootID, r.tools["call_E"].InvocationID, "the stray tool call, in its trace's rollout")
	assert.Equal(t, rootID, r.tools["call_A"].InvocationID)
	assert.Equal(t, agentobs.ToolCallStatusCompleted, r.tools["call_A"].Status)
	assert.Equal(t, 150.0, *r.tools["call_A"].DurationMS)
	assert.Equal(t, agentobs.TimingSourceExecutor, *r.tools["call_A"].TimingSource)
	assert.Equal(t, float64(t0.Add(10*time.Millisecond).UnixNano())/1e9, *r.tools["call_A"].StartedAt)
	assert.Equal(t, subID, r.tools["call_B"].InvocationID)
	assert.Equal(t, agentobs.ToolCallStatusTimeout, r.tools["call_B"].Status)
	assert.Equal(t, "timeout", str(r.tools["call_B"].ErrorType))
	assert.Equal(t, agentobs.ToolCallStatusFailed, r.tools["call_C"].Status)
	assert.Equal(t, "FileNotFoundError", str(r.tools["call_C"].ErrorType))

	require.Len(t, r.compactions, 1)
	assert.Equal(t, rootID, r.compactions[0].InvocationID)
	assert.Equal(t, agentobs.CompactionOutcomeCompleted, r.compactions[0].Outcome)
	assert.Equal(t, float64(t0.Add(180*time.Millisecond).UnixNano())/1e9, *r.compactions[0].ObservedAt)
	assert.Nil(t, r.compactions[0].BeforeModelCall)

	require.Len(t, fromFile.Gaps, 1)
	assert.Equal(t, "observation_invocation_unavailable", fromFile.Gaps[0].Code)
	assert.Equal(t, "tool_call:call_D", str(fromFile.Gaps[0].Detail))
}

func TestObservationKind(t *testing.T) {
	op := func(v string) attribute.KeyValue { return attribute.String("gen_ai.operation.name", v) }
	compacted := attribute.Bool("gen_ai.conversation.compacted", true)
	tests := []struct {
		name  string
		attrs kvs
		want  string
	}{
		{"invoke_agent", kvs{op("invoke_agent")}, agentobs.KindAgentInvocation},
		{"execute_tool", kvs{op("execute_tool")}, agentobs.KindToolCall},
		{"sandbox", kvs{attribute.String("gymtrace.sandbox.role", "agent")}, agentobs.KindSandbox},
		{"compaction", kvs{compacted}, agentobs.KindContextCompaction},
		{"compacted model call", kvs{op("chat"), compacted}, ""},
		{"compacted false", kvs{attribute.Bool("gen_ai.conversation.compacted", false)}, ""},
		{"compacted as string", kvs{attribute.String("gen_ai.conversation.compacted", "true")}, ""},
		{"chat", kvs{op("chat")}, ""},
		{"operation not a string", kvs{attribute.Int("gen_ai.operation.name", 1)}, ""},
		{"nothing", nil, ""},
		{"tool wins over sandbox role", kvs{op("execute_tool"), attribute.String("gymtrace.sandbox.role", "agent")}, agentobs.KindToolCall},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := agentobs.ObservationKind(tt.attrs)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.want != "", ok)
		})
	}
	_, ok := agentobs.ObservationKind(nil)
	assert.False(t, ok)
}

// span builds a mapping input directly.
type spanSpec struct {
	id, parent byte
	kind       string
	startMS    int
	endMS      int // -1: not ended
	status     codes.Code
	attrs      kvs
	events     []agentobs.SpanEvent
	links      []agentobs.SpanLink
	dropped    int
}

var testTrace = trace.TraceID{0xaa, 1}
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func msAt(ms int) time.Time { return epoch.Add(time.Duration(ms) * time.Millisecond) }

func (s spanSpec) span() agentobs.ObservationSpan {
	attrs := append(kvs(nil), s.attrs...)
	switch s.kind {
	case "agent":
		attrs = append(kvs{attribute.String("gen_ai.operation.name", "invoke_agent")}, attrs...)
	case "tool":
		attrs = append(kvs{attribute.String("gen_ai.operation.name", "execute_tool")}, attrs...)
	case "compaction":
		attrs = append(kvs{attribute.Bool("gen_ai.conversation.compacted", true)}, attrs...)
	case "sandbox":
		attrs = append(kvs{attribute.String("gymtrace.sandbox.role", "agent")}, attrs...)
	}
	o := agentobs.ObservationSpan{
		TraceID: testTrace, SpanID: trace.SpanID{0, 0, 0, 0, 0, 0, 0, s.id}, StartTime: msAt(s.startMS),
		StatusCode: s.status, Attributes: attrs, Events: s.events, Links: s.links, DroppedEvents: s.dropped,
	}
	if s.parent != 0 {
		o.ParentSpanID = trace.SpanID{0, 0, 0, 0, 0, 0, 0, s.parent}
	}
	if s.endMS >= 0 {
		o.EndTime = msAt(s.endMS)
	}
	return o
}

func sid(b byte) string { return trace.SpanID{0, 0, 0, 0, 0, 0, 0, b}.String() }

func callEvent(ms int, attrs ...attribute.KeyValue) agentobs.SpanEvent {
	return agentobs.SpanEvent{Name: "gymtrace.model_call", Time: msAt(ms), Attributes: kvs(attrs)}
}

func mcid(id string) attribute.KeyValue { return attribute.String("gymtrace.model_call.id", id) }

// bundleOf maps specs through the spans and through observation lines (encode, decode), requires
// both to agree and returns the bundle.
func bundleOf(t *testing.T, specs ...spanSpec) agentobs.AgentObservationBundle {
	t.Helper()
	spans := make([]agentobs.ObservationSpan, len(specs))
	var data []byte
	for i, s := range specs {
		spans[i] = s.span()
		data = agentobs.NewObservationLine("r-1", spans[i]).AppendJSON(data)
	}
	b := agentobs.BundleFromSpans(spans)
	lines, damaged := agentobs.ParseObservations(data)
	require.Zero(t, damaged)
	require.Equal(t, dump(t, b), dump(t, agentobs.BuildBundle(lines)))
	return b
}

func gapCodes(b agentobs.AgentObservationBundle) []string {
	var out []string
	for _, g := range b.Gaps {
		out = append(out, g.Code+" "+str(g.InvocationID)+" "+str(g.Detail))
	}
	return out
}

func TestBundleFromSpansRelations(t *testing.T) {
	invID := func(id string) attribute.KeyValue { return attribute.String("gymtrace.agent.invocation.id", id) }
	callID := func(id string) attribute.KeyValue { return attribute.String("gen_ai.tool.call.id", id) }

	t.Run("explicit attributes win over the chain", func(t *testing.T) {
		b := bundleOf(t,
			spanSpec{id: 1, kind: "agent", endMS: 10, attrs: kvs{invID("root")}},
			spanSpec{id: 2, parent: 1, kind: "agent", endMS: 10, attrs: kvs{invID("other")}},
			spanSpec{id: 3, parent: 1, kind: "tool", startMS: 1, endMS: 2, attrs: kvs{callID("t1"), invID("other")}},
			spanSpec{id: 4, parent: 3, kind: "agent", startMS: 2, endMS: 3, attrs: kvs{invID("sub"),
				attribute.String("gymtrace.agent.parent_invocation.id", "elsewhere"), attribute.String("gymtrace.agent.spawned_by_tool_call.id", "tx")}},
		)
		r := split(b)
		assert.Equal(t, "root", str(r.invocations["other"].ParentInvocationID))
		assert.Equal(t, "other", r.tools["t1"].InvocationID)
		assert.Equal(t, "elsewhere", str(r.invocations["sub"].ParentInvocationID))
		assert.Equal(t, "tx", str(r.invocations["sub"].SpawnedByToolCallID))
		assert.Empty(t, b.Gaps)
	})

	t.Run("chain through tools, compactions and sandboxes", func(t *testing.T) {
		b := bundleOf(t,
			spanSpec{id: 1, kind: "agent", endMS: 100},
			spanSpec{id: 2, parent: 1, kind: "sandbox", startMS: 1, endMS: 90},
			spanSpec{id: 3, parent: 2, kind: "tool", startMS: 2, endMS: 80, attrs: kvs{callID("outer")}},
			spanSpec{id: 4, parent: 3, kind: "tool", startMS: 3, endMS: 70, attrs: kvs{callID("inner")}},
			spanSpec{id: 5, parent: 4, kind: "agent", startMS: 4, endMS: 60},
			spanSpec{id: 6, parent: 5, kind: "compaction", startMS: 5, endMS: 6},
			spanSpec{id: 7, parent: 6, kind: "tool", startMS: 5, endMS: 6, attrs: kvs{callID("in-compaction")}},
		)
		r := split(b)
		assert.Equal(t, sid(1), r.tools["outer"].InvocationID)
		assert.Equal(t, sid(1), r.tools["inner"].InvocationID, "a tool inside a tool belongs to the invocation above")
		assert.Equal(t, sid(1), str(r.invocations[sid(5)].ParentInvocationID))
		assert.Equal(t, "inner", str(r.invocations[sid(5)].SpawnedByToolCallID), "the nearest tool spawned it")
		assert.Equal(t, sid(5), r.compactions[0].InvocationID)
		assert.Equal(t, sid(5), r.tools["in-compaction"].InvocationID)
		assert.Empty(t, b.Gaps)
	})

	t.Run("tool naming its invocation ends the walk", func(t *testing.T) {
		b := bundleOf(t,
			spanSpec{id: 1, kind: "agent", endMS: 10},
			spanSpec{id: 2, parent: 1, kind: "tool", startMS: 1, endMS: 9, attrs: kvs{callID("t1"), invID("named")}},
			spanSpec{id: 3, parent: 2, kind: "agent", startMS: 2, endMS: 8},
		)
		r := split(b)
		assert.Equal(t, "named", str(r.invocations[sid(3)].ParentInvocationID))
		assert.Equal(t, "t1", str(r.invocations[sid(3)].SpawnedByToolCallID))
	})

	t.Run("unknown parent", func(t *testing.T) {
		b := bundleOf(t,
			spanSpec{id: 1, parent: 9, kind: "agent", endMS: 10},
			spanSpec{id: 2, parent: 9, kind: "tool", endMS: 10, attrs: kvs{callID("t1")}},
			spanSpec{id: 3, parent: 9, kind: "compaction", endMS: 10},
		)
		r := split(b)
		assert.Nil(t, r.invocations[sid(1)].ParentInvocationID)
		assert.Empty(t, r.tools)
		assert.Empty(t, r.compactions)
		assert.Equal(t, []string{
			"observation_invocation_unavailable <nil> tool_call:t1",
			"observation_invocation_unavailable <nil> context_compaction:" + sid(3),
		}, gapCodes(b))
	})

	t.Run("duplicate invocation id and cycles", func(t *testing.T) {
		b := bundleOf(t,
			spanSpec{id: 1, kind: "agent", endMS: 10, attrs: kvs{invID("a"), attribute.String("gymtrace.agent.parent_invocation.id", "b")}},
			spanSpec{id: 2, startMS: 1, kind: "agent", endMS: 10, attrs: kvs{invID("b"), attribute.String("gymtrace.agent.parent_invocation.id", "a")}},
			spanSpec{id: 3, startMS: 2, kind: "agent", endMS: 10, attrs: kvs{invID("a")}},
			spanSpec{id: 4, startMS: 3, kind: "agent", endMS: 10, attrs: kvs{invID("self"), attribute.String("gymtrace.agent.parent_invocation.id", "self")}},
			spanSpec{id: 5, parent: 3, startMS: 4, kind: "tool", endMS: 10, attrs: kvs{callID("t1")}},
		)
		r := split(b)
		require.Len(t, r.invocations, 3)
		assert.Nil(t, r.invocations["a"].ParentInvocationID, "the first invocation on the cycle loses its parent")
		assert.Equal(t, "a", str(r.invocations["b"].ParentInvocationID))
		assert.Nil(t, r.invocations["self"].ParentInvocationID)
		assert.Equal(t, "a", r.tools["t1"].InvocationID, "a tool under a duplicate still names the id")
		assert.Equal(t, []string{
			"observation_span_invalid a span:" + sid(1) + ":parent_invocation_id would form a cycle",
			"observation_span_invalid <nil> span:" + sid(3) + `:invocation_id "a" is not unique`,
			"observation_span_invalid self span:" + sid(4) + ":parent_invocation_id would form a cycle",
		}, gapCodes(b))
	})

	t.Run("repeated span keeps the first", func(t *testing.T) {
		b := bundleOf(t,
			spanSpec{id: 1, kind: "agent", endMS: 10, attrs: kvs{invID("first")}},
			spanSpec{id: 1, kind: "agent", endMS: 10, attrs: kvs{invID("second")}},
		)
		r := split(b)
		assert.Len(t, r.invocations, 1)
		assert.Contains(t, r.invocations, "first")
	})
}

func TestBundleFromSpansRecords(t *testing.T) {
	status := func(v string) attribute.KeyValue { return attribute.String("gymtrace.observation.status", v) }
	errType := func(v string) attribute.KeyValue { return attribute.String("error.type", v) }
	callID := attribute.String("gen_ai.tool.call.id", "t1")
	root := spanSpec{id: 1, kind: "agent", endMS: 1000}
	tests := []struct {
		name  string
		spec  spanSpec
		check func(t *testing.T, r records)
		gaps  []string
	}{
		{name: "invocation failed from span status", spec: spanSpec{id: 2, parent: 1, kind: "agent", startMS: 1, endMS: 3, status: codes.Error, attrs: kvs{errType("Boom")}},
			check: func(t *testing.T, r records) {
				assert.Equal(t, agentobs.InvocationStatusFailed, r.invocations[sid(2)].Status)
				assert.Equal(t, "Boom", str(r.invocations[sid(2)].ErrorType))
				assert.Equal(t, 2.0, *r.invocations[sid(2)].DurationMS)
			}},
		{name: "invocation explicit status", spec: spanSpec{id: 2, parent: 1, kind: "agent", startMS: 1, endMS: 3, status: codes.Error, attrs: kvs{status("incomplete")}},
			check: func(t *testing.T, r records) {
				assert.Equal(t, agentobs.InvocationStatusIncomplete, r.invocations[sid(2)].Status)
			}},
		{name: "invocation not ended", spec: spanSpec{id: 2, parent: 1, kind: "agent", startMS: 1, endMS: -1},
			check: func(t *testing.T, r records) {
				assert.Equal(t, agentobs.InvocationStatusIncomplete, r.invocations[sid(2)].Status)
				assert.Nil(t, r.invocations[sid(2)].DurationMS)
			}},
		{name: "invalid explicit status", spec: spanSpec{id: 2, parent: 1, kind: "tool", startMS: 1, endMS: 2, attrs: kvs{callID, status("exploded")}},
			gaps: []string{`observation_span_invalid ` + sid(1) + ` span:` + sid(2) + `:|status: "exploded" is not one of`}},
		{name: "tool cancelled by error.type", spec: spanSpec{id: 2, parent: 1, kind: "tool", startMS: 1, endMS: 2, status: codes.Error, attrs: kvs{callID, errType("cancelled")}},
			check: func(t *testing.T, r records) { assert.Equal(t, agentobs.ToolCallStatusCancelled, r.tools["t1"].Status) }},
		{name: "tool error.type ignored without error status", spec: spanSpec{id: 2, parent: 1, kind: "tool", startMS: 1, endMS: 2, attrs: kvs{callID, errType("timeout")}},
			check: func(t *testing.T, r records) { assert.Equal(t, agentobs.ToolCallStatusCompleted, r.tools["t1"].Status) }},
		{name: "tool timing source", spec: spanSpec{id: 2, parent: 1, kind: "tool", startMS: 1, endMS: 2, attrs: kvs{callID, attribute.String("gymtrace.tool.timing_source", "harness")}},
			check: func(t *testing.T, r records) {
				assert.Equal(t, agentobs.TimingSourceHarness, *r.tools["t1"].TimingSource)
			}},
		{name: "tool without call id", spec: spanSpec{id: 2, parent: 1, kind: "tool", startMS: 1, endMS: 2},
			gaps: []string{"observation_span_invalid <nil> span:" + sid(2) + ":|gen_ai.tool.call.id is required on an execute_tool span"}},
		{name: "tool ending before it starts", spec: spanSpec{id: 2, parent: 1, kind: "tool", startMS: 5, endMS: 2, attrs: kvs{callID}},
			gaps: []string{"observation_span_invalid " + sid(1) + " span:" + sid(2) + ":|completed_at must not precede started_at"}},
		{name: "mistyped attribute", spec: spanSpec{id: 2, parent: 1, kind: "tool", startMS: 1, endMS: 2, attrs: kvs{callID, attribute.Int("gen_ai.tool.name", 3)}},
			gaps: []string{"observation_span_invalid <nil> span:" + sid(2) + ":|gen_ai.tool.name is INT64, want a string"}},
		{name: "compaction aborted", spec: spanSpec{id: 2, parent: 1, kind: "compaction", startMS: 1, endMS: 2, status: codes.Error, attrs: kvs{errType("aborted"),
			attribute.Int("gymtrace.compaction.tokens_before", 10), attribute.Int("gymtrace.compaction.tokens_after", 11), attribute.String("gymtrace.compaction.first_kept_item.id", "msg_9")}},
			check: func(t *testing.T, r records) {
				c := r.compactions[0]
				assert.Equal(t, agentobs.CompactionOutcomeAborted, c.Outcome)
				assert.Equal(t, 10, *c.TokensBefore)
				assert.Equal(t, 11, *c.TokensAfter)
				assert.Equal(t, "msg_9", str(c.FirstKeptItemID))
			}},
		{name: "compaction negative tokens", spec: spanSpec{id: 2, parent: 1, kind: "compaction", startMS: 1, endMS: 2, attrs: kvs{attribute.Int("gymtrace.compaction.tokens_before", -1)}},
			gaps: []string{"observation_span_invalid " + sid(1) + " span:" + sid(2) + ":|tokens_before: -1 must be greater than or equal to 0"}},
		{name: "compaction tokens as float", spec: spanSpec{id: 2, parent: 1, kind: "compaction", startMS: 1, endMS: 2, attrs: kvs{attribute.Float64("gymtrace.compaction.tokens_before", 1)}},
			gaps: []string{"observation_span_invalid <nil> span:" + sid(2) + ":|gymtrace.compaction.tokens_before is FLOAT64, want an integer"}},
		{name: "sandbox from span status", spec: spanSpec{id: 2, parent: 1, kind: "sandbox", startMS: 1, endMS: 2, status: codes.Error, attrs: kvs{errType("oom"),
			attribute.Int("gymtrace.sandbox.wall_time_s", 2), attribute.Float64("gymtrace.sandbox.cpu_time_s", 0.5)}},
			check: func(t *testing.T, r records) {
				s := r.sandboxes[0]
				assert.Equal(t, agentobs.SandboxOutcomeOOM, s.Outcome)
				assert.Equal(t, 2.0, *s.WallTimeS, "an integer value is accepted for a float field")
				assert.Equal(t, 0.5, *s.CPUTimeS)
				assert.Nil(t, s.PeakMemoryMiB, "never derived")
			}},
		{name: "sandbox completed", spec: spanSpec{id: 2, kind: "sandbox", endMS: 2},
			check: func(t *testing.T, r records) {
				assert.Equal(t, agentobs.SandboxOutcomeCompleted, r.sandboxes[0].Outcome)
			}},
		{name: "sandbox bad role", spec: spanSpec{id: 2, kind: "sandbox", endMS: 2, attrs: kvs{attribute.String("gymtrace.sandbox.role", "judge")}},
			gaps: []string{`observation_span_invalid <nil> span:` + sid(2) + `:|role: "judge" is not one of`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := bundleOf(t, root, tt.spec)
			if tt.check != nil {
				tt.check(t, split(b))
			}
			got := gapCodes(b)
			require.Len(t, got, len(tt.gaps), "%q", got)
			for i, g := range tt.gaps {
				requireGap(t, got[i], g)
			}
		})
	}
}

func TestBundleFromSpansModelCalls(t *testing.T) {
	ref := func(attrs ...attribute.KeyValue) kvs { return kvs(attrs) }
	policyRef := []attribute.KeyValue{attribute.String("gymtrace.model_ref.type", "responses_api_models"), attribute.String("gymtrace.model_ref.name", "policy")}
	t.Run("list, events and links in order, each once", func(t *testing.T) {
		b := bundleOf(t, spanSpec{id: 1, kind: "agent", endMS: 100,
			attrs: kvs{attribute.StringSlice("gymtrace.model_call.ids", []string{"c2", "c1"})},
			events: []agentobs.SpanEvent{
				callEvent(1, mcid("c1")),
				{Name: "other", Time: msAt(2), Attributes: ref(mcid("ignored"))},
				callEvent(3, append([]attribute.KeyValue{attribute.String("gen_ai.response.id", "resp-9")}, policyRef...)...),
				callEvent(4, mcid("c3")),
			},
			links: []agentobs.SpanLink{
				{TraceID: testTrace, SpanID: trace.SpanID{9}, Attributes: ref(mcid("c3"))},
				{TraceID: testTrace, SpanID: trace.SpanID{8}, Attributes: ref(mcid("c4"))},
				{TraceID: testTrace, SpanID: trace.SpanID{7}},
			},
		})
		inv := split(b).invocations[sid(1)]
		assert.Equal(t, []string{"c2", "c1", "", "c3", "c4"}, refIDs(inv.ModelCalls))
		assert.Equal(t, "resp-9", str(inv.ModelCalls[2].ResponseID))
		assert.Equal(t, "policy", inv.ModelCalls[2].ModelRef.Name)
		assert.Empty(t, b.Gaps)
	})
	t.Run("invalid references become gaps", func(t *testing.T) {
		b := bundleOf(t, spanSpec{id: 1, kind: "agent", endMS: 100,
			attrs: kvs{attribute.StringSlice("gymtrace.model_call.ids", []string{""})},
			events: []agentobs.SpanEvent{
				callEvent(1),
				callEvent(2, attribute.String("gen_ai.response.id", "resp-1")),
				callEvent(3, attribute.String("gymtrace.model_ref.type", "responses_api_models")),
				callEvent(4, mcid("ok")),
			},
			links: []agentobs.SpanLink{{TraceID: testTrace, SpanID: trace.SpanID{9}, Attributes: ref(attribute.Int("gymtrace.model_call.id", 5))}},
		})
		assert.Equal(t, []string{"ok"}, refIDs(split(b).invocations[sid(1)].ModelCalls))
		got := gapCodes(b)
		require.Len(t, got, 5)
		for i, want := range []string{
			"gymtrace.model_call.ids[0] is empty",
			"event 0 gymtrace.model_call: carries no model-call reference attribute",
			"model_call_id or both model_ref and response_id are required",
			"event 2 gymtrace.model_call: gymtrace.model_ref.type and gymtrace.model_ref.name must be set together",
			"link 0: gymtrace.model_call.id is INT64, want a string",
		} {
			requireGap(t, got[i], "observation_span_invalid "+sid(1)+" span:"+sid(1)+":|"+want)
		}
	})
	t.Run("dropped events", func(t *testing.T) {
		b := bundleOf(t, spanSpec{id: 1, kind: "agent", endMS: 100, dropped: 3})
		assert.Equal(t, []string{"observation_model_calls_dropped " + sid(1) + " span:" + sid(1) + ":dropped_events=3:dropped_links=0"}, gapCodes(b))
		b = bundleOf(t, spanSpec{id: 1, kind: "agent", endMS: 100, dropped: 3, attrs: kvs{attribute.StringSlice("gymtrace.model_call.ids", []string{"c1"})}})
		assert.Empty(t, b.Gaps, "the ids list is complete")
	})
	t.Run("compaction boundaries by the invocation's event times", func(t *testing.T) {
		inv := spanSpec{id: 1, kind: "agent", endMS: 100, events: []agentobs.SpanEvent{
			callEvent(5, mcid("c1")), callEvent(10, mcid("c2")), callEvent(20, mcid("c3")), callEvent(30, mcid("c4")), callEvent(40, mcid("c5")),
		}}
		b := bundleOf(t, inv,
			spanSpec{id: 2, parent: 1, kind: "compaction", startMS: 10, endMS: 30, events: []agentobs.SpanEvent{callEvent(15, mcid("s1"))}},
			spanSpec{id: 3, parent: 1, kind: "compaction", startMS: 41, endMS: 50},
			spanSpec{id: 4, parent: 1, kind: "compaction", startMS: 1, endMS: 2, attrs: kvs{
				attribute.String("gymtrace.compaction.before_model_call.id", "x"), attribute.String("gymtrace.compaction.after_model_call.id", "y")}},
		)
		cs := split(b).compactions
		require.Len(t, cs, 3)
		// Sorted by start: 4 (1 ms), 2 (10 ms), 3 (41 ms).
		assert.Equal(t, "x", str(cs[0].BeforeModelCall.ModelCallID))
		assert.Equal(t, "y", str(cs[0].AfterModelCall.ModelCallID))
		assert.Equal(t, "c2", str(cs[1].BeforeModelCall.ModelCallID), "at or before the start")
		assert.Equal(t, "c4", str(cs[1].AfterModelCall.ModelCallID), "at or after the end")
		assert.Equal(t, []string{"s1"}, refIDs(cs[1].ModelCalls))
		assert.Equal(t, "c5", str(cs[2].BeforeModelCall.ModelCallID))
		assert.Nil(t, cs[2].AfterModelCall)
	})
}

// requireGap checks a gapCodes entry against "prefix|tail": the entry starts with prefix and
// contains tail after it.
func requireGap(t *testing.T, got, want string) {
	t.Helper()
	prefix, tail, ok := strings.Cut(want, "|")
	require.True(t, ok, "test expectation %q needs a |", want)
	require.True(t, strings.HasPrefix(got, prefix), "%q does not start with %q", got, prefix)
	assert.Contains(t, got[len(prefix):], tail)
}
