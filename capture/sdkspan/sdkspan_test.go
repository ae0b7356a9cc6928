package sdkspan_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/sdkspan"
)

func sc(tid trace.TraceID, sid trace.SpanID) trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid})
}

func TestFromReadOnly(t *testing.T) {
	tid, other := trace.TraceID{1, 15: 1}, trace.TraceID{2, 15: 2}
	t0 := time.Unix(1786032154, 5).UTC()
	attrs := []attribute.KeyValue{attribute.String("k", "a"), attribute.Int("n", 1), attribute.String("k", "b")}
	stub := tracetest.SpanStub{
		Name: "execute_tool x", SpanContext: sc(tid, trace.SpanID{3}), Parent: sc(tid, trace.SpanID{4}),
		SpanKind: trace.SpanKindInternal, StartTime: t0, EndTime: t0.Add(time.Second),
		Status: sdktrace.Status{Code: codes.Error, Description: "boom"}, Attributes: attrs,
		Events:            []sdktrace.Event{{Name: "e", Time: t0, Attributes: attrs[:1]}},
		Links:             []sdktrace.Link{{SpanContext: sc(other, trace.SpanID{5}), Attributes: attrs[1:2]}},
		DroppedAttributes: 1, DroppedEvents: 2, DroppedLinks: 3,
	}
	want := capture.Span{
		TraceID: tid, SpanID: trace.SpanID{3}, ParentSpanID: trace.SpanID{4}, Name: "execute_tool x",
		Kind: trace.SpanKindInternal, StartTime: t0, EndTime: t0.Add(time.Second), StatusCode: codes.Error,
		Attributes:        capture.Attributes(attrs),
		Events:            []capture.SpanEvent{{Name: "e", Time: t0, Attributes: capture.Attributes(attrs[:1])}},
		Links:             []capture.SpanLink{{TraceID: other, SpanID: trace.SpanID{5}, Attributes: capture.Attributes(attrs[1:2])}},
		DroppedAttributes: 1, DroppedEvents: 2, DroppedLinks: 3,
	}
	got := sdkspan.FromReadOnly(stub.Snapshot())
	assert.Equal(t, want, got)
	v, ok := got.Attributes.Lookup("k")
	assert.True(t, ok)
	assert.Equal(t, "b", v.AsString(), "the last value of a repeated key")

	// A parent in another trace (a remote parent of a foreign trace) is no parent of the view; a
	// span without events or links has nil slices.
	stub.Parent, stub.Events, stub.Links = sc(other, trace.SpanID{6}), nil, nil
	got = sdkspan.FromReadOnly(stub.Snapshot())
	assert.False(t, got.ParentSpanID.IsValid())
	assert.Nil(t, got.Events)
	assert.Nil(t, got.Links)
}
