package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/rollout"
	"github.com/gymtrace/gymtrace/semconv"
)

// traceT0 is the start of the trace fixture's root invocation.
var traceT0 = time.Unix(1786032154, 0).UTC()

// at is traceT0 plus ms milliseconds.
func at(ms float64) time.Time { return traceT0.Add(time.Duration(ms * float64(time.Millisecond))) }

// traceCall is one capture record of the trace fixture.
type traceCall struct {
	startMS, latencyMS float64
	status             int
	category           string
	toolCallID         string // the answer asks for this tool call; "" for a text answer
}

func toolAnswer(toolCallID string) string {
	if toolCallID == "" {
		return chatUsage("policy-large", 100, 20)
	}
	return fmt.Sprintf(`{"id":"chatcmpl-t","object":"chat.completion","model":"policy-large","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":%q,"type":"function","function":{"name":"search","arguments":"{\"q\":\"six times seven\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":90,"completion_tokens":12,"total_tokens":102}}`, toolCallID)
}

// callID is the model_call_id of the fixture's call n.
func callID(n int) string { return fmt.Sprintf("%032x", 0xc0+n) }

// spanID is the fixture's span id n.
func spanID(n byte) trace.SpanID { return trace.SpanID{0, 0, 0, 0, 0, 0, 0xab, n} }

// obsLine is one observation line of the fixture: span n under parent (0: none), from startMS to
// endMS (negative: not ended).
func obsLine(n, parent byte, name string, startMS, endMS float64, status codes.Code, attrs ...attribute.KeyValue) agentobs.ObservationLine {
	l := agentobs.ObservationLine{RolloutID: "5-0", TraceID: rollout.ID{Rollout: "5-0"}.TraceID(), SpanID: spanID(n),
		Name: name, Kind: trace.SpanKindInternal, StartTime: at(startMS), StatusCode: status,
		Attributes: append(attrs, semconv.GymtraceRolloutIDKey.String("5-0"))}
	if parent != 0 {
		l.ParentSpanID = spanID(parent)
	}
	if endMS >= 0 {
		l.EndTime = at(endMS)
	}
	return l
}

// writeTraceFixture writes rollout 5-0: a planner whose tool call starts a subagent (its call asks
// for a tool call that runs a sandbox), a compaction with its summarizing call, a tool call that
// fails, a rate-limited call, a subagent still running and a line of no known kind; and rollout
// 5-1: calls without observations.
func writeTraceFixture(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	calls := map[string][]traceCall{
		"5-0": {
			{startMS: 5, latencyMS: 40, status: 200, toolCallID: "call_delegate"},
			{startMS: 60, latencyMS: 30, status: 200, toolCallID: "call_search"},
			{startMS: 150, latencyMS: 25, status: 200},
			{startMS: 210, latencyMS: 20, status: 200},
			{startMS: 240, latencyMS: 15, status: 200, toolCallID: "call_broken"},
			{startMS: 270, latencyMS: 3, status: 429, category: "rate_limit"},
		},
		"5-1": {
			{startMS: 0, latencyMS: 12, status: 200},
			{startMS: 20, latencyMS: 8, status: 500, category: "upstream_error"},
		},
	}
	n := 0
	for _, id := range []string{"5-0", "5-1"} {
		for _, c := range calls[id] {
			start := capture.UnixSeconds(at(c.startMS))
			ex := capture.Exchange{
				ModelCallID: callID(n), Dialect: "chat",
				ModelRef:  &capture.ModelRef{Type: capture.ModelRefType, Name: "policy_model"},
				StartedAt: start, CompletedAt: start + c.latencyMS/1000, LatencyMS: c.latencyMS,
				ErrorCategory: c.category, StatusCode: &c.status,
				Request:  json.RawMessage(`{"model":"policy-large","messages":[]}`),
				Response: json.RawMessage(toolAnswer(c.toolCallID)),
			}
			if c.category != "" {
				ex.Response = json.RawMessage(`{"error":{"message":"slow down"}}`)
			}
			require.NoError(t, ex.Validate())
			require.NoError(t, store.Append(context.Background(), id, ex.AppendJSON(nil)))
			n++
		}
	}
	ids := func(ns ...int) attribute.KeyValue {
		s := make([]string, len(ns))
		for i, n := range ns {
			s[i] = callID(n)
		}
		return semconv.GymtraceModelCallIDsKey.StringSlice(s)
	}
	invoke, tool := semconv.GenAIOperationNameKey.String("invoke_agent"), semconv.GenAIOperationNameKey.String("execute_tool")
	lines := []agentobs.ObservationLine{
		// Written as the SDK ends them: children first.
		obsLine(5, 4, "sandbox environment", 100, 130, codes.Unset, semconv.GymtraceSandboxRoleKey.String("environment"),
			semconv.GymtraceSandboxExitCodeKey.Int(0), semconv.GymtraceSandboxWallTimeKey.Float64(0.03)),
		obsLine(4, 3, "execute_tool search", 95, 140, codes.Unset, tool, semconv.GenAIToolCallIDKey.String("call_search"),
			semconv.GenAIToolNameKey.String("search")),
		obsLine(3, 2, "invoke_agent researcher", 55, 180, codes.Unset, invoke, ids(1, 2)),
		obsLine(2, 1, "execute_tool delegate", 50, 190, codes.Unset, tool, semconv.GenAIToolCallIDKey.String("call_delegate"),
			semconv.GenAIToolNameKey.String("delegate")),
		obsLine(6, 1, "context_compaction", 200, 235, codes.Unset, semconv.GenAIConversationCompactedKey.Bool(true),
			semconv.GymtraceCompactionTriggerKey.String("auto"), semconv.GymtraceCompactionSummaryKey.String(strings.Repeat("é", 200)), ids(3)),
		obsLine(7, 1, "execute_tool broken", 258, 260, codes.Error, tool, semconv.GenAIToolCallIDKey.String("call_broken"),
			semconv.ErrorTypeKey.String("tool_error")),
		// A subagent named by attribute only (its parent span was not recorded), still running.
		obsLine(8, 0x7f, "invoke_agent watcher", 262, -1, codes.Unset, invoke,
			semconv.GymtraceAgentParentInvocationIDKey.String("planner-1")),
		obsLine(9, 0, "custom step", 1, 2, codes.Unset, semconv.GymtraceSandboxIDKey.String("x")),
		obsLine(1, 0, "invoke_agent planner", 0, 280, codes.Unset, invoke, semconv.GymtraceAgentInvocationIDKey.String("planner-1"),
			ids(0, 3, 4, 5)),
	}
	var b []byte
	for _, l := range lines {
		b = l.AppendJSON(b)
	}
	b = append(b, "{torn\n"...)
	p, err := store.ObservationsPath("5-0")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, b, 0o600))
	return dir
}

func buildTraceFixture(t *testing.T) *Report {
	t.Helper()
	rep, err := Build(context.Background(), writeTraceFixture(t), Options{TraceViews: true})
	require.NoError(t, err)
	require.Len(t, rep.Rollouts, 2)
	return rep
}

// TestTraceViewGolden: the view model of each fixture rollout, as the page embeds it.
func TestTraceViewGolden(t *testing.T) {
	rep := buildTraceFixture(t)
	for _, r := range rep.Rollouts {
		require.NotNil(t, r.Trace, r.ID)
		got, err := json.MarshalIndent(r.Trace, "", "  ")
		require.NoError(t, err)
		golden(t, "trace_"+r.ID+".golden.json", append(got, '\n'))
	}
}

// TestTraceViewLayout checks the golden's properties directly: tree order, nesting, time order,
// links, errors.
func TestTraceViewLayout(t *testing.T) {
	v := buildTraceFixture(t).Rollouts[0].Trace
	ids := make([]string, len(v.Spans))
	byID := map[string]TraceSpan{}
	for i, s := range v.Spans {
		ids[i] = s.ID
		byID[s.ID] = s
	}
	span := func(n byte) string { return "span-" + spanID(n).String() }
	assert.Equal(t, []string{
		span(1),          // planner
		"call-0",         // asks for the delegate
		span(2),          // delegate
		span(3),          // researcher, the subagent
		"call-1",         // asks for the search
		span(4), span(5), // search and its sandbox
		"call-2",          // researcher's answer
		span(6), "call-3", // compaction and its summarizing call
		"call-4", span(7), // the broken tool call and the call that asked for it
		span(8),  // watcher: by its parent_invocation_id
		"call-5", // the rate-limited call
		span(9),  // custom step, at 1 ms: a root of no known kind
	}, ids)
	assert.Equal(t, 1, v.DamagedObservationLines)
	assert.True(t, v.Observations)
	assert.Equal(t, capture.UnixSeconds(traceT0), v.Start)
	assert.Equal(t, 280.0, v.DurationMS)
	for _, s := range v.Spans {
		if s.Parent == "" {
			assert.Zero(t, s.Depth, s.ID)
			continue
		}
		p := byID[s.Parent]
		assert.Equal(t, p.Depth+1, s.Depth, s.ID)
		assert.GreaterOrEqual(t, *s.StartMS, *p.StartMS, "%s starts inside its parent", s.ID)
	}
	assert.Equal(t, span(1), byID[span(8)].Parent)
	assert.Nil(t, byID[span(8)].DurationMS, "a span that has not ended has no duration")
	assert.Equal(t, "not ended", byID[span(8)].Status)
	assert.Equal(t, span(6), byID["call-3"].Parent)
	assert.Equal(t, "call-0", byID[span(2)].AskedBy)
	assert.Equal(t, []string{span(4)}, byID["call-1"].Asks)
	assert.True(t, byID[span(7)].Error)
	assert.Equal(t, "error: tool_error", byID[span(7)].Status)
	assert.True(t, byID["call-5"].Error)
	assert.Equal(t, "rate_limit", byID["call-5"].Status)
	assert.Equal(t, agentobs.Ptr[int64](90), byID["call-0"].TokensIn)
	assert.Contains(t, byID[span(4)].Details, [2]string{"asked for by", "#1 chat policy-large"})
	assert.Contains(t, byID[span(4)].Details, [2]string{"arguments size", "23 B"})

	plain := buildTraceFixture(t).Rollouts[1].Trace
	assert.False(t, plain.Observations)
	require.Len(t, plain.Spans, 2)
	for _, s := range plain.Spans {
		assert.Equal(t, TraceKindModelCall, s.Kind)
		assert.Empty(t, s.Parent)
	}
}

// TestTraceViewBounds: past MaxTraceSpans the view keeps the first rows in tree order and counts
// the rest; links to rows left out are dropped; a parent chain that loops is cut.
func TestTraceViewBounds(t *testing.T) {
	calls := make([]capture.ModelCallRecord, MaxTraceSpans+500)
	for i := range calls {
		start := capture.UnixSeconds(traceT0) + float64(i)
		calls[i] = capture.ModelCallRecord{CallIndex: i, StartedAt: &start}
	}
	calls[len(calls)-1].ToolCalls = []capture.ToolCall{{CallID: json.RawMessage(`"late"`), Arguments: json.RawMessage(`{}`)}}
	tool := []attribute.KeyValue{semconv.GenAIOperationNameKey.String("execute_tool"), semconv.GenAIToolCallIDKey.String("late")}
	loop := []agentobs.ObservationLine{
		obsLine(2, 1, "execute_tool b", -5, 0, codes.Unset, tool...),
		obsLine(1, 2, "execute_tool a", -5, 0, codes.Unset, tool...),
	}
	v := NewTraceView(calls, loop, true, 0)
	require.Len(t, v.Spans, MaxTraceSpans)
	assert.Equal(t, 502, v.Omitted)
	assert.Equal(t, "span-"+spanID(1).String(), v.Spans[0].ID, "the loop is cut at its earliest span")
	assert.Equal(t, "span-"+spanID(2).String(), v.Spans[1].ID)
	assert.Equal(t, 1, v.Spans[1].Depth)
	assert.Equal(t, "call-0", v.Spans[2].ID)
	assert.Empty(t, v.Spans[0].AskedBy, "no link to a row left out")
	assert.Contains(t, v.Spans[0].Details, [2]string{"asked for by", "#2499"}, "the details still name it")
}

// TestWriteHTMLTraceView: the page embeds each rollout's view as JSON in its calls section, with
// the note of what is drawn, and no URL.
func TestWriteHTMLTraceView(t *testing.T) {
	rep := buildTraceFixture(t)
	var buf bytes.Buffer
	require.NoError(t, WriteHTML(&buf, rep, ""))
	doc, err := html.Parse(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	var views []*html.Node
	walk(doc, func(n *html.Node) {
		if n.DataAtom == atom.Div && hasClass(n, "trace-view") {
			views = append(views, n)
		}
	})
	require.Len(t, views, 2)
	for i, n := range views {
		id, _ := attr(n, "data-rollout-id")
		assert.Equal(t, rep.Rollouts[i].ID, id)
		var data string
		walk(n, func(c *html.Node) {
			if c.DataAtom == atom.Script && hasClass(c, "trace-data") {
				data = textOf(c)
			}
		})
		var got TraceView
		require.NoError(t, json.Unmarshal([]byte(data), &got), "the embedded view of %s is JSON", id)
		assert.Equal(t, *rep.Rollouts[i].Trace, got)
	}
	assert.Contains(t, textOf(views[0]), "1 damaged observation line not drawn")
	assert.Contains(t, textOf(views[1]), "no observations file, so the model calls alone")
	assert.NotContains(t, buf.String(), `\u003c`+"script", "no markup leaks into the data")
}

// TestTraceViewBudget: the report keeps Options.TraceRowBudget rows in all; later rows are counted,
// links to them dropped, and the page says why.
func TestTraceViewBudget(t *testing.T) {
	full := buildTraceFixture(t).Rollouts[0].Trace
	rep, err := Build(context.Background(), writeTraceFixture(t), Options{TraceViews: true, TraceRowBudget: 10})
	require.NoError(t, err)
	require.Len(t, rep.Rollouts, 2)
	first, second := rep.Rollouts[0].Trace, rep.Rollouts[1].Trace
	require.Len(t, first.Spans, 10)
	assert.Equal(t, full.Spans[9].ID, first.Spans[9].ID, "the first rows in drawing order")
	assert.Equal(t, len(full.Spans)-10, first.Omitted)
	assert.True(t, first.BudgetSpent)
	drawn := map[string]bool{}
	for _, s := range first.Spans {
		drawn[s.ID] = true
		if s.Parent != "" {
			assert.True(t, drawn[s.Parent], "the parent of %s is kept", s.ID)
		}
	}
	for _, s := range first.Spans {
		if s.AskedBy != "" {
			assert.True(t, drawn[s.AskedBy], "%s links to a kept row", s.ID)
		}
		for _, a := range s.Asks {
			assert.True(t, drawn[a], "%s links to a kept row", s.ID)
		}
	}
	require.NotNil(t, second.Spans, "an empty view is an empty list for the page")
	assert.Empty(t, second.Spans)
	assert.Equal(t, 2, second.Omitted)
	assert.True(t, second.BudgetSpent)
	b, err := json.Marshal(second)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"spans":[]`)

	var buf bytes.Buffer
	require.NoError(t, WriteHTML(&buf, rep, ""))
	assert.Equal(t, 2, strings.Count(buf.String(), "more spans not drawn</strong> (the report's budget of trace view rows is spent)"),
		"the page says why, in both views")
	assert.False(t, buildTraceFixture(t).Rollouts[0].Trace.BudgetSpent, "the default budget holds the fixture")
}
