package capturetest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
)

// ObservationCase is one canonical agent-observation span of the suite (an invoke_agent, an
// execute_tool, a compaction and a sandbox span, as agentobs's recorder or any language's OTel
// instrumentation emits them) and the observation line a writer must append for it to
// <rollout_id>.observations.jsonl. The lines are written out here, byte for byte, independently
// of the mapping that makes them (package agentobs, which this package may not import).
type ObservationCase struct {
	// Name names the case: "invocation", "tool call", "compaction", "sandbox".
	Name string
	// Span is the observation span, in rollout "golden" (gymtrace.rollout.id), trace
	// 4bf92f3577b34da6a3ce929d0e0e4736, with a span id unique among the cases.
	Span Span
	// Line is the line a writer must append for Span, ending in "\n".
	Line string
}

// obsRollout is the rollout of every observation case.
const obsRollout = "golden"

// Want returns the case's span moved to rollout rid and the line a writer must append for it.
func (c ObservationCase) Want(rid string) (Span, string) {
	sp := withRollout(c.Span, rid, c.Span.SpanID)
	q := strconv.Quote(rid)
	return sp, strings.ReplaceAll(c.Line, `"`+obsRollout+`"`, q)
}

// ObservationCases returns the canonical observation cases, parents before children: an agent
// invocation with its model calls (an attribute, an event and a link; an event and a link that
// name no call are not kept), a failed tool call inside it, a compaction and a sandbox run.
// Attributes the line does not keep (message content, agent name) are on the spans too.
func ObservationCases() []ObservationCase {
	at := func(ms int) time.Time { return spanTime.Add(time.Duration(ms) * time.Millisecond) }
	rid := semconv.GymtraceRolloutID(obsRollout)
	inv := trace.SpanID{0, 0, 0, 0, 0, 0, 0x20, 1}
	return []ObservationCase{
		{
			Name: "invocation",
			Span: Span{
				Name: "invoke_agent planner", Kind: trace.SpanKindInternal, Start: at(0), End: at(1500),
				TraceID: suiteTraceID, SpanID: inv, StatusCode: codes.Ok,
				Attributes: []attribute.KeyValue{
					attribute.String("gen_ai.operation.name", "invoke_agent"),
					attribute.String("gen_ai.agent.name", "planner"),
					attribute.String("gen_ai.input.messages", `[{"role":"user"}]`),
					rid,
					attribute.StringSlice("gymtrace.model_call.ids", []string{"mc-1", "mc-2"}),
				},
				Events: []Event{
					{Name: "gymtrace.model_call", Time: at(10), Attributes: []attribute.KeyValue{
						attribute.String("gymtrace.model_call.id", "mc-3"), attribute.String("x", "not kept")}},
					{Name: "exception", Time: at(20), Attributes: []attribute.KeyValue{attribute.String("exception.type", "ValueError")}},
				},
				Links: []Link{
					{TraceID: trace.TraceID{0x0a, 15: 1}, SpanID: trace.SpanID{0x0b, 7: 1}, Attributes: []attribute.KeyValue{
						attribute.String("gen_ai.response.id", "resp-1"), attribute.String("gymtrace.model_ref.name", "policy"),
						attribute.String("gymtrace.model_ref.type", "responses_api_models")}},
					{TraceID: trace.TraceID{0x0c, 15: 1}, SpanID: trace.SpanID{0x0d, 7: 1}, Attributes: []attribute.KeyValue{attribute.String("other", "no call")}},
				},
				DroppedEvents: 1,
			},
			Line: `{"rollout_id":"golden","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"0000000000002001","parent_span_id":null,"name":"invoke_agent planner","kind":"internal","start_time_unix_nano":1786032154123456641,"end_time_unix_nano":1786032155623456641,"status_code":"ok",` +
				`"attributes":{"gen_ai.operation.name":"invoke_agent","gymtrace.model_call.ids":["mc-1","mc-2"],"gymtrace.rollout.id":"golden"},` +
				`"events":[{"name":"gymtrace.model_call","time_unix_nano":1786032154133456641,"attributes":{"gymtrace.model_call.id":"mc-3"}}],"links":[{"trace_id":"0a000000000000000000000000000001","span_id":"0b00000000000001","attributes":{"gen_ai.response.id":"resp-1","gymtrace.model_ref.name":"policy","gymtrace.model_ref.type":"responses_api_models"}}],"dropped_events":1,"dropped_links":0}` + "\n",
		},
		{
			Name: "tool call",
			Span: Span{
				Name: "execute_tool bash", Kind: trace.SpanKindInternal, Start: at(100), End: at(350),
				TraceID: suiteTraceID, SpanID: trace.SpanID{0, 0, 0, 0, 0, 0, 0x20, 2}, ParentSpanID: inv, StatusCode: codes.Error,
				Attributes: []attribute.KeyValue{
					attribute.String("gen_ai.operation.name", "execute_tool"),
					attribute.String("gen_ai.tool.name", "bash"),
					attribute.String("gen_ai.tool.call.id", "call_1"),
					attribute.String("gen_ai.tool.type", "function"),
					attribute.String("gymtrace.tool.timing_source", "executor"),
					attribute.String("gymtrace.observation.status", "failed"),
					attribute.String("error.type", "TimeoutError"),
					rid,
				},
			},
			Line: `{"rollout_id":"golden","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"0000000000002002","parent_span_id":"0000000000002001","name":"execute_tool bash","kind":"internal","start_time_unix_nano":1786032154223456641,"end_time_unix_nano":1786032154473456641,"status_code":"error",` +
				`"attributes":{"error.type":"TimeoutError","gen_ai.operation.name":"execute_tool","gen_ai.tool.call.id":"call_1","gen_ai.tool.name":"bash","gymtrace.observation.status":"failed","gymtrace.rollout.id":"golden","gymtrace.tool.timing_source":"executor"},` +
				`"events":[],"links":[],"dropped_events":0,"dropped_links":0}` + "\n",
		},
		{
			Name: "compaction",
			Span: Span{
				Name: "compaction", Kind: trace.SpanKindInternal, Start: at(400), End: at(400),
				TraceID: suiteTraceID, SpanID: trace.SpanID{0, 0, 0, 0, 0, 0, 0x20, 3}, ParentSpanID: inv,
				Attributes: []attribute.KeyValue{
					attribute.Bool("gen_ai.conversation.compacted", true),
					attribute.String("gymtrace.compaction.trigger", "auto"),
					attribute.Int("gymtrace.compaction.tokens_before", 9000),
					attribute.Int("gymtrace.compaction.tokens_after", 400),
					attribute.String("gymtrace.compaction.summary", "so far: \u2028 \"quoted\" </script>"),
					attribute.String("gymtrace.compaction.first_kept_item.id", "msg_7"),
					attribute.String("gymtrace.compaction.before_model_call.id", "mc-1"),
					attribute.String("gymtrace.compaction.after_model_call.id", "mc-2"),
					rid,
				},
				Events: []Event{{Name: "gymtrace.model_call", Time: at(400), Attributes: []attribute.KeyValue{attribute.String("gymtrace.model_call.id", "mc-sum")}}},
			},
			Line: `{"rollout_id":"golden","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"0000000000002003","parent_span_id":"0000000000002001","name":"compaction","kind":"internal","start_time_unix_nano":1786032154523456641,"end_time_unix_nano":1786032154523456641,"status_code":"unset",` +
				`"attributes":{"gen_ai.conversation.compacted":true,"gymtrace.compaction.after_model_call.id":"mc-2","gymtrace.compaction.before_model_call.id":"mc-1","gymtrace.compaction.first_kept_item.id":"msg_7","gymtrace.compaction.summary":"so far: ` + "\u2028" + ` \"quoted\" </script>","gymtrace.compaction.tokens_after":400,"gymtrace.compaction.tokens_before":9000,"gymtrace.compaction.trigger":"auto","gymtrace.rollout.id":"golden"},` +
				`"events":[{"name":"gymtrace.model_call","time_unix_nano":1786032154523456641,"attributes":{"gymtrace.model_call.id":"mc-sum"}}],"links":[],"dropped_events":0,"dropped_links":0}` + "\n",
		},
		{
			Name: "sandbox",
			Span: Span{
				Name: "sandbox exec", Kind: trace.SpanKindClient, Start: at(500), End: at(1000),
				TraceID: suiteTraceID, SpanID: trace.SpanID{0, 0, 0, 0, 0, 0, 0x20, 4}, ParentSpanID: inv, StatusCode: codes.Error,
				Attributes: []attribute.KeyValue{
					attribute.String("gymtrace.sandbox.role", "agent"),
					attribute.String("gymtrace.sandbox.provider", "docker"),
					attribute.String("gymtrace.sandbox.id", "sb-1"),
					attribute.Int("gymtrace.sandbox.exit_code", 137),
					attribute.Float64("gymtrace.sandbox.wall_time_s", 0.5),
					attribute.Float64("gymtrace.sandbox.cpu_time_s", 0.25),
					attribute.Float64("gymtrace.sandbox.peak_memory_mib", 64),
					attribute.String("gymtrace.sandbox.resource_usage_source", "cgroup"),
					attribute.String("error.type", "oom"),
					rid,
				},
			},
			Line: `{"rollout_id":"golden","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"0000000000002004","parent_span_id":"0000000000002001","name":"sandbox exec","kind":"client","start_time_unix_nano":1786032154623456641,"end_time_unix_nano":1786032155123456641,"status_code":"error",` +
				`"attributes":{"error.type":"oom","gymtrace.rollout.id":"golden","gymtrace.sandbox.cpu_time_s":0.25,"gymtrace.sandbox.exit_code":137,"gymtrace.sandbox.id":"sb-1","gymtrace.sandbox.peak_memory_mib":64.0,"gymtrace.sandbox.provider":"docker","gymtrace.sandbox.resource_usage_source":"cgroup","gymtrace.sandbox.role":"agent","gymtrace.sandbox.wall_time_s":0.5},` +
				`"events":[],"links":[],"dropped_events":0,"dropped_links":0}` + "\n",
		},
	}
}

// RunObservations runs the observation-line conformance suite against the writer newTarget builds
// (called as for [Run], once per scenario over a fresh directory): every adapter that writes
// observation lines (agentobs's SpanProcessor, gymcapture with observations enabled) must leave
// these files for these spans:
//
//   - the exact bytes of every [ObservationCase] line, one rollout each, and all in one rollout in
//     span order, in one batch or one batch per span;
//   - idempotency by span (trace_id and span_id): the same span again, in the same batch, in a
//     later one, or concurrently, appends nothing;
//   - attribution (SPEC §0 D18): a span's gymtrace.rollout.id names its rollout, else its
//     resource's; an observation span that names none (no gymtrace.rollout.id on the span or its
//     resource) takes the rollout of an earlier span of its trace, or is held until a later one
//     names it; one whose gymtrace.rollout.id is present but empty or not a string (on the span, or
//     on its resource when the span has none) writes nothing, in no file; spans whose trace named none go to _unattributed.observations.jsonl at
//     Flush (the Target must be a [Flusher]); a span that is not an observation writes nothing;
//   - one whose rollout id is not a safe file name (SPEC §2.2) writes nothing, and marks nothing;
//   - concurrent batches for one rollout all land, one whole line each.
//
// Every file is an observations file: the suite's spans are no model calls.
func RunObservations(t *testing.T, newTarget func(t *testing.T, dir string) Target) {
	t.Helper()
	s := obsSuite{cases: ObservationCases(), suite: suite{newTarget: newTarget}}
	t.Run("golden lines, one rollout each", s.perRollout)
	t.Run("golden lines in order in one rollout", s.oneRollout)
	t.Run("one batch per span appends in order", s.batchPerSpan)
	t.Run("a second line of one span is not appended", s.idempotent)
	t.Run("attribution", s.attribution)
	t.Run("unsafe rollout id writes and marks nothing", s.unsafe)
	t.Run("concurrent batches to one rollout", s.concurrent)
}

type obsSuite struct {
	suite
	cases []ObservationCase
}

func obsName(rid string) string { return rid + capture.ObservationsFileSuffix }

// all returns every case's span and the file of their lines, in order.
func (s obsSuite) all() ([]Span, string) {
	var spans []Span
	var want strings.Builder
	for _, c := range s.cases {
		spans = append(spans, c.Span)
		want.WriteString(c.Line)
	}
	return spans, want.String()
}

func (s obsSuite) perRollout(t *testing.T) {
	tg, dir := s.start(t)
	var spans []Span
	want := map[string]string{}
	for i, c := range s.cases {
		rid := fmt.Sprintf("obs-%d", i)
		sp, line := c.Want(rid)
		spans = append(spans, sp)
		want[obsName(rid)] = line
	}
	require.NoError(t, tg.ConsumeSpans(t.Context(), spans))
	assert.Equal(t, want, DirContents(t, dir))
}

func (s obsSuite) oneRollout(t *testing.T) {
	tg, dir := s.start(t)
	spans, want := s.all()
	require.NoError(t, tg.ConsumeSpans(t.Context(), spans))
	assert.Equal(t, map[string]string{obsName(obsRollout): want}, DirContents(t, dir))
}

func (s obsSuite) batchPerSpan(t *testing.T) {
	tg, dir := s.start(t)
	spans, want := s.all()
	for i, sp := range spans {
		require.NoError(t, tg.ConsumeSpans(t.Context(), []Span{sp}), s.cases[i].Name)
	}
	assert.Equal(t, map[string]string{obsName(obsRollout): want}, DirContents(t, dir))
}

func (s obsSuite) idempotent(t *testing.T) {
	tg, dir := s.start(t)
	spans, want := s.all()
	require.NoError(t, tg.ConsumeSpans(t.Context(), []Span{spans[0], spans[0]}), "the same span twice in one batch")
	require.NoError(t, tg.ConsumeSpans(t.Context(), spans), "a retry of the whole batch")
	consumeConcurrently(t, tg, func(int) []Span { return spans[1:] })
	assert.Equal(t, map[string]string{obsName(obsRollout): want}, DirContents(t, dir), "one line per span")
}

func (s obsSuite) unsafe(t *testing.T) {
	tg, dir := s.start(t)
	good, want := s.cases[0].Want("good")
	for _, rid := range []string{"../escape", "a/b", ".hidden"} {
		bad := withRollout(s.cases[1].Span, rid, s.cases[1].Span.SpanID)
		_ = tg.ConsumeSpans(t.Context(), []Span{bad, good}) // an SDK processor reports nothing
	}
	assert.Equal(t, map[string]string{obsName("good"): want}, DirContents(t, dir), "the other span is written once; nothing else, no marker")
}

func (s obsSuite) concurrent(t *testing.T) {
	tg, dir := s.start(t)
	c := s.cases[1]
	want := make([]string, concurrentBatches)
	consumeConcurrently(t, tg, func(i int) []Span {
		sp := c.Span
		sp.SpanID = sid(0x23, i)
		want[i] = strings.Replace(c.Line, `"span_id":"`+c.Span.SpanID.String()+`"`, `"span_id":"`+sp.SpanID.String()+`"`, 1)
		return []Span{sp}
	})
	files := DirContents(t, dir)
	require.Len(t, files, 1)
	assertLinesInAnyOrder(t, want, files[obsName(obsRollout)])
}
