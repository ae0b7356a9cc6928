package report

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
)

// BenchmarkNewTraceView builds the view of a rollout at MaxTraceSpans rows: one invocation, 1000
// model calls each asking for a tool call, and the 999 tool calls' spans (each with its tool call
// id), and reports the page's JSON bytes per row (json-B/row).
func BenchmarkNewTraceView(b *testing.B) {
	const n = 1000
	sid := func(i int) trace.SpanID {
		var s trace.SpanID
		binary.BigEndian.PutUint64(s[:], uint64(i)+1)
		return s
	}
	calls := make([]capture.ModelCallRecord, n)
	lines := []agentobs.ObservationLine{obsLine(1, 0, "invoke_agent planner", 0, 3*n, codes.Unset,
		semconv.GenAIOperationNameKey.String("invoke_agent"), semconv.GymtraceAgentInvocationIDKey.String("planner-1"))}
	for i := range calls {
		start, end := capture.UnixSeconds(at(float64(3*i))), capture.UnixSeconds(at(float64(3*i+1)))
		id, tool := callID(i), fmt.Sprintf("call_%d", i)
		calls[i] = capture.ModelCallRecord{CallIndex: i, ModelCallID: &id, StartedAt: &start, CompletedAt: &end,
			LatencyTotalMS: agentobs.Ptr(1.0), StatusCode: agentobs.Ptr(200), TokensIn: agentobs.Ptr[int64](900), TokensOut: agentobs.Ptr[int64](40),
			ToolCalls: []capture.ToolCall{{CallID: json.RawMessage(`"` + tool + `"`), Name: json.RawMessage(`"search"`), Arguments: json.RawMessage(`"{\"q\":\"x\"}"`)}}}
		if i == n-1 {
			break // the last call's tool call was not run: 1 + 1000 + 999 rows
		}
		l := obsLine(2, 1, "execute_tool search", float64(3*i+1), float64(3*i+2), codes.Unset,
			semconv.GenAIOperationNameKey.String("execute_tool"), semconv.GenAIToolCallIDKey.String(tool), semconv.GenAIToolNameKey.String("search"),
			semconv.GymtraceAgentInvocationIDKey.String("planner-1"))
		l.SpanID = sid(i + 1)
		lines = append(lines, l)
	}
	var v *TraceView
	b.ReportAllocs()
	for b.Loop() {
		v = NewTraceView(calls, lines, true, 0)
	}
	if len(v.Spans) != MaxTraceSpans || v.Omitted != 0 {
		b.Fatalf("%d rows, %d omitted; want %d, 0", len(v.Spans), v.Omitted, MaxTraceSpans)
	}
	j, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(j))/float64(len(v.Spans)), "json-B/row")
}
