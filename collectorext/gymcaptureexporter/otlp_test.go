package gymcaptureexporter

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// uploadRecorder is an otlptrace.Client that keeps what the OTLP exporter would send.
type uploadRecorder struct {
	mu  sync.Mutex
	got []*tracepb.ResourceSpans
}

func (c *uploadRecorder) Start(context.Context) error { return nil }
func (c *uploadRecorder) Stop(context.Context) error  { return nil }
func (c *uploadRecorder) UploadTraces(_ context.Context, rs []*tracepb.ResourceSpans) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, rs...)
	return nil
}

// otlpTraces sends otel-go SDK spans the way an agent's OTLP exporter does and returns what the
// Collector's OTLP receiver hands to its exporters: the official otel-go OTLP transform
// (otlptrace.Exporter), the request encoded as protobuf (the wire), decoded by pdata's ptraceotlp.
// Spans of one resource and scope keep their order.
func otlpTraces(t testing.TB, spans []sdktrace.ReadOnlySpan) ptrace.Traces {
	t.Helper()
	ctx := context.Background()
	c := &uploadRecorder{}
	exp, err := otlptrace.New(ctx, c)
	require.NoError(t, err)
	require.NoError(t, exp.ExportSpans(ctx, spans))
	require.NoError(t, exp.Shutdown(ctx))
	wire, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: c.got})
	require.NoError(t, err)
	req := ptraceotlp.NewExportRequest()
	require.NoError(t, req.UnmarshalProto(wire))
	return req.Traces()
}
