package proxy_test

import (
	"context"
	"fmt"
	"net/http"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/gymtrace/gymtrace/proxy"
	"github.com/gymtrace/gymtrace/rollout"
)

// An agent installs proxy.RolloutIDGenerator in its tracer provider once, starts each rollout with
// proxy.StartRollout and makes its model calls with a client from proxy.NewHTTPClient: the rollout root,
// the agent's spans, its HTTP client spans and the capture proxy's model-call spans form one trace,
// whose id any process computes from the rollout id alone.
func ExampleStartRollout() {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithIDGenerator(proxy.RolloutIDGenerator(nil)),
		sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	client, err := proxy.NewHTTPClient(http.DefaultClient)
	if err != nil {
		panic(err)
	}
	_ = client // client.Do(req.WithContext(ctx)) sends traceparent and baggage gymtrace.rollout_id=3-1

	ctx, root := proxy.StartRollout(context.Background(), tp, "3-1")
	_, step := tp.Tracer("agent").Start(ctx, "invoke_agent")
	step.End()
	root.End()

	id, _ := rollout.IDFromContext(ctx)
	fmt.Println("baggage:", id)
	for _, s := range exp.GetSpans() {
		fmt.Println(s.Name, s.SpanContext.TraceID(), "parent", s.Parent.SpanID())
	}
	fmt.Println("root span id:", rollout.ID{Rollout: "3-1"}.RootSpanID())
	// Output:
	// baggage: 3-1
	// invoke_agent e39762d6698282a3e40c49ec8a777ecd parent b0d3fffb8fec4d46
	// rollout 3-1 e39762d6698282a3e40c49ec8a777ecd parent 0000000000000000
	// root span id: b0d3fffb8fec4d46
}
