package agentobs_test

import (
	"context"
	"fmt"
	"net/http"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/agentobs"
)

// ExampleRecorder records an invocation with one tool call, a model call and a compaction, then
// prints what the bundle says about them.
func ExampleRecorder() {
	tp := sdktrace.NewTracerProvider() // add agentobs.NewObservationProcessor(store) and an OTLP batcher
	defer func() { _ = tp.Shutdown(context.Background()) }()
	rec, err := agentobs.NewRecorder(tp, "task-7_0")
	if err != nil {
		fmt.Println(err)
		return
	}
	// The agent's model client: calls through the capture proxy come back with the
	// X-Gymtrace-Model-Call-Id header, which Transport records.
	client := &http.Client{Transport: agentobs.Transport(nil)}
	_ = client

	ctx, inv := rec.StartInvocation(context.Background(), "solver")
	_ = agentobs.RecordModelCall(ctx, "0f1e2d3c4b5a69788796a5b4c3d2e1f0") // what Transport does per response

	_, tool := agentobs.StartToolCall(ctx, "bash", "call_1")
	tool.End(context.DeadlineExceeded)

	cctx, comp := agentobs.StartCompaction(ctx, "auto")
	_ = agentobs.RecordModelCall(cctx, "summary-call")
	comp.End(agentobs.CompactionResult{TokensBefore: agentobs.Ptr(90000), TokensAfter: agentobs.Ptr(4000)})
	inv.End(nil)

	for _, r := range rec.Bundle().Records {
		switch v := r.(type) {
		case *agentobs.AgentInvocation:
			fmt.Println(v.Kind(), v.Status, len(v.ModelCalls), "model call(s)")
		case *agentobs.ToolCallObservation:
			fmt.Println(v.Kind(), *v.ToolName, v.Status, *v.TimingSource)
		case *agentobs.ContextCompactionObservation:
			fmt.Println(v.Kind(), *v.Trigger, *v.TokensBefore, "->", *v.TokensAfter, *v.BeforeModelCall.ModelCallID)
		}
	}
	// Output:
	// agent_invocation completed 2 model call(s)
	// tool_call bash timeout executor
	// context_compaction auto 90000 -> 4000 0f1e2d3c4b5a69788796a5b4c3d2e1f0
}
