package jaegertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// exporterFunc builds an OTLP span exporter aimed at j and a func that releases what it holds.
type exporterFunc func(ctx context.Context, t *testing.T, j Jaeger) sdktrace.SpanExporter

func httpExporter(ctx context.Context, t *testing.T, j Jaeger) sdktrace.SpanExporter {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	exp, err := otlptracehttp.New(ctx,
		otlptracehttp.WithEndpointURL(j.OTLPHTTPEndpoint+"/v1/traces"),
		otlptracehttp.WithHTTPClient(&http.Client{Transport: tr}))
	require.NoError(t, err)
	return exp
}

func grpcExporter(ctx context.Context, t *testing.T, j Jaeger) sdktrace.SpanExporter {
	require.NotEmpty(t, j.OTLPGRPCEndpoint, "%s is unset", EnvOTLPGRPC)
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(j.OTLPGRPCEndpoint), otlptracegrpc.WithInsecure())
	require.NoError(t, err)
	return exp
}

// sent is what emitSpans sent, for comparison with what Jaeger returns.
type sent struct {
	service             string
	traceID             trace.TraceID
	rootID, childID     trace.SpanID
	linkedTrace         trace.TraceID
	linkedSpan          trace.SpanID
	rootName, childName string
}

// emitSpans sends a root span and a child span (attributes of every scalar type, an event, an error
// status and a link) through exp, then shuts the provider down so both are delivered.
func emitSpans(ctx context.Context, t *testing.T, exp sdktrace.SpanExporter, service string) sent {
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSyncer(exp),
		sdktrace.WithResource(resource.NewSchemaless(
			attribute.String("service.name", service),
			attribute.String("deployment.environment.name", "test"))))
	tracer := tp.Tracer("github.com/gymtrace/gymtrace/internal/testkit/jaegertest")
	s := sent{service: service, rootName: "rollout " + service, childName: "chat gpt-test"}
	var lt [16]byte
	var ls [8]byte
	_, _ = rand.Read(lt[:])
	_, _ = rand.Read(ls[:])
	s.linkedTrace, s.linkedSpan = lt, ls
	link := trace.Link{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: s.linkedTrace, SpanID: s.linkedSpan, TraceFlags: trace.FlagsSampled, Remote: true})}

	rctx, root := tracer.Start(ctx, s.rootName, trace.WithSpanKind(trace.SpanKindServer))
	_, child := tracer.Start(rctx, s.childName, trace.WithSpanKind(trace.SpanKindClient), trace.WithLinks(link),
		trace.WithAttributes(
			attribute.String("gen_ai.request.model", "gpt-test"),
			attribute.Int64("gen_ai.usage.input_tokens", 1<<53+1),
			attribute.Bool("gymtrace.stream", true),
			attribute.Float64("gen_ai.request.temperature", 0.25),
			attribute.StringSlice("gen_ai.response.finish_reasons", []string{"stop"})))
	child.AddEvent("first_chunk", trace.WithAttributes(attribute.Int("chunk.index", 0)))
	child.SetStatus(codes.Error, "upstream 500")
	child.End()
	root.End()
	s.traceID = root.SpanContext().TraceID()
	s.rootID, s.childID = root.SpanContext().SpanID(), child.SpanContext().SpanID()
	require.NoError(t, tp.Shutdown(ctx))
	return s
}

// TestRoundTrip sends spans over OTLP/HTTP and OTLP/gRPC to the real Jaeger and reads them back from
// the query API: names, parent reference, link, tags with their types, event and process.
func TestRoundTrip(t *testing.T) {
	j := FromEnv(t)
	for _, tc := range []struct {
		name string
		exp  exporterFunc
	}{
		{name: "otlp http", exp: httpExporter},
		{name: "otlp grpc", exp: grpcExporter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			s := emitSpans(ctx, t, tc.exp(ctx, t, j), "jaegertest-"+hex.EncodeToString([]byte(tc.name)))

			got, err := j.WaitForSpans(ctx, s.traceID.String(), 2)
			require.NoError(t, err)
			assert.Equal(t, s.traceID.String(), got.TraceID)
			require.Len(t, got.Spans, 2)

			roots := got.SpansNamed(s.rootName)
			require.Len(t, roots, 1)
			root := roots[0]
			assert.Equal(t, s.rootID.String(), root.SpanID)
			assert.Empty(t, root.ParentSpanID())
			kind, ok := root.Tag("span.kind")
			require.True(t, ok)
			assert.Equal(t, "server", kind.Value)

			child, ok := got.Span(s.childID.String())
			require.True(t, ok)
			assert.Equal(t, s.childName, child.OperationName)
			assert.Equal(t, s.rootID.String(), child.ParentSpanID())
			assert.Contains(t, child.References, Reference{RefType: "CHILD_OF", TraceID: s.traceID.String(), SpanID: s.rootID.String()})
			assert.Contains(t, child.References, Reference{RefType: "FOLLOWS_FROM", TraceID: s.linkedTrace.String(), SpanID: s.linkedSpan.String()})
			assert.GreaterOrEqual(t, child.StartTime, root.StartTime)

			for _, want := range []KeyValue{
				{Key: "gen_ai.request.model", Type: "string", Value: "gpt-test"},
				{Key: "gen_ai.usage.input_tokens", Type: "int64", Value: json.Number("9007199254740993")},
				{Key: "gymtrace.stream", Type: "bool", Value: true},
				{Key: "gen_ai.request.temperature", Type: "float64", Value: json.Number("0.25")},
				{Key: "gen_ai.response.finish_reasons", Type: "string", Value: `["stop"]`},
				{Key: "span.kind", Type: "string", Value: "client"},
				{Key: "otel.status_code", Type: "string", Value: "ERROR"},
				{Key: "otel.status_description", Type: "string", Value: "upstream 500"},
				{Key: "error", Type: "bool", Value: true},
			} {
				kv, ok := child.Tag(want.Key)
				if assert.True(t, ok, "tag %s missing from %v", want.Key, child.Tags) {
					assert.Equal(t, want, kv)
				}
			}
			require.Len(t, child.Logs, 1)
			ev, ok := child.Logs[0].Field("event")
			require.True(t, ok)
			assert.Equal(t, "first_chunk", ev.Value)
			idx, ok := child.Logs[0].Field("chunk.index")
			require.True(t, ok)
			assert.Equal(t, json.Number("0"), idx.Value)

			for _, sp := range got.Spans {
				p, ok := got.ProcessOf(sp)
				require.True(t, ok, "process %q of span %s", sp.ProcessID, sp.SpanID)
				assert.Equal(t, s.service, p.ServiceName)
				env, ok := p.Tag("deployment.environment.name")
				require.True(t, ok)
				assert.Equal(t, "test", env.Value)
			}
		})
	}
}

// TestWaitForSpansErrors checks that waiting ends with an error naming the trace when spans never
// come, and that bad arguments fail at once.
func TestWaitForSpansErrors(t *testing.T) {
	j := FromEnv(t)
	var missing [16]byte
	_, _ = rand.Read(missing[:])
	missingID := hex.EncodeToString(missing[:])
	tests := []struct {
		name     string
		traceID  string
		minSpans int
		wantErr  string
	}{
		{name: "never arrives", traceID: missingID, minSpans: 1, wantErr: "trace " + missingID + ": 0 of 1 spans before context deadline exceeded; last answer: 404"},
		{name: "short id", traceID: "abc", minSpans: 1, wantErr: `trace id "abc": want 16 or 32 hex digits`},
		{name: "not hex", traceID: "zz" + missingID[2:], minSpans: 1, wantErr: "want 16 or 32 hex digits"},
		{name: "path injection", traceID: "../api/services/", minSpans: 1, wantErr: "want 16 or 32 hex digits"},
		{name: "zero spans", traceID: missingID, minSpans: 0, wantErr: "minSpans 0: want at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			got, err := j.WaitForSpans(ctx, tt.traceID, tt.minSpans)
			require.Error(t, err)
			assert.Nil(t, got)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.Less(t, time.Since(start), 5*time.Second)
		})
	}
}

// TestWaitForSpansPartial checks that WaitForSpans keeps waiting while fewer spans than asked are stored.
func TestWaitForSpansPartial(t *testing.T) {
	j := FromEnv(t)
	ctx := t.Context()
	s := emitSpans(ctx, t, httpExporter(ctx, t, j), "jaegertest-partial")
	// Jaeger stores spans asynchronously: wait (bounded by the test's context) until both are there.
	got, err := j.WaitForSpans(ctx, s.traceID.String(), 2)
	require.NoError(t, err)
	require.Len(t, got.Spans, 2)

	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = j.WaitForSpans(short, s.traceID.String(), 3)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2 of 3 spans")
}
