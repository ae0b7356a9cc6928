package agentobs_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/sdkspan"
)

// TestMain checks that no test leaks a goroutine (test servers, HTTP connections). It is the
// package's only TestMain (internal and external tests share one binary).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// harness is a tracer provider whose spans go synchronously to an in-memory exporter and to an
// ObservationProcessor writing into a fresh store.
type harness struct {
	tp    *sdktrace.TracerProvider
	exp   *tracetest.InMemoryExporter
	store *capture.Store
	proc  *agentobs.ObservationProcessor
	// counts reads the processor's counters (processorMetrics).
	counts func() map[string]int64
}

func newHarness(t *testing.T, opts ...sdktrace.TracerProviderOption) *harness {
	t.Helper()
	store, err := capture.NewStore(t.TempDir())
	require.NoError(t, err)
	metered, counts := processorMetrics(t)
	proc, err := agentobs.NewObservationProcessor(store, metered, agentobs.WithProcessorLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	exp := tracetest.NewInMemoryExporter()
	opts = append([]sdktrace.TracerProviderOption{
		sdktrace.WithSpanProcessor(proc),
		sdktrace.WithSyncer(exp),
	}, opts...)
	tp := sdktrace.NewTracerProvider(opts...)
	t.Cleanup(func() { require.NoError(t, tp.Shutdown(context.Background())) })
	return &harness{tp: tp, exp: exp, store: store, proc: proc, counts: counts}
}

// spans returns the exported spans as mapping inputs.
func (h *harness) spans() []agentobs.ObservationSpan {
	var out []agentobs.ObservationSpan
	for _, s := range h.exp.GetSpans().Snapshots() {
		out = append(out, sdkspan.FromReadOnly(s))
	}
	return out
}

// byName returns the exported span stubs by name (the first of each name).
func (h *harness) byName() map[string]tracetest.SpanStub {
	out := make(map[string]tracetest.SpanStub)
	for _, s := range h.exp.GetSpans() {
		if _, ok := out[s.Name]; !ok {
			out[s.Name] = s
		}
	}
	return out
}

// fileBundle reads the bundle of rolloutID's observations file.
func (h *harness) fileBundle(t *testing.T, rolloutID string) agentobs.AgentObservationBundle {
	t.Helper()
	b, exists, err := agentobs.ReadBundle(h.store, rolloutID)
	require.NoError(t, err)
	require.True(t, exists, "observations file of %s", rolloutID)
	return b
}

// dump is the bundle's JSON dump; a bundle that does not validate fails the test.
func dump(t *testing.T, b agentobs.AgentObservationBundle) string {
	t.Helper()
	require.NoError(t, b.Validate())
	out, err := b.AppendJSON(nil)
	require.NoError(t, err)
	return string(out)
}

// requireSameBundles checks that the recorder's bundle, the bundle mapped from the exported spans
// and the bundle read back from the observations file are one and the same, and returns it.
func requireSameBundles(t *testing.T, h *harness, rec *agentobs.Recorder) agentobs.AgentObservationBundle {
	t.Helper()
	want := rec.Bundle()
	fromSpans := agentobs.BundleFromSpans(h.spans())
	fromFile := h.fileBundle(t, rec.RolloutID())
	require.Equal(t, dump(t, want), dump(t, fromSpans), "recorder bundle vs bundle from the exported spans")
	require.Equal(t, dump(t, want), dump(t, fromFile), "recorder bundle vs bundle from the observations file")
	return want
}

// stepClock is a clock that advances by step at every reading, from a fixed start.
type stepClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func newStepClock(step time.Duration) *stepClock {
	return &stepClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), step: step}
}

func (c *stepClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

// kvs adapts an attribute slice to capture.AttributeLookup (last value wins).
type kvs []attribute.KeyValue

func (l kvs) Lookup(key string) (attribute.Value, bool) {
	for i := len(l) - 1; i >= 0; i-- {
		if string(l[i].Key) == key {
			return l[i].Value, true
		}
	}
	return attribute.Value{}, false
}

// attrMap returns a stub's attributes by key.
func attrMap(attrs []attribute.KeyValue) map[string]attribute.Value {
	m := make(map[string]attribute.Value, len(attrs))
	for _, kv := range attrs {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

// records splits a bundle's records by kind.
type records struct {
	invocations map[string]*agentobs.AgentInvocation // by invocation id
	tools       map[string]*agentobs.ToolCallObservation
	compactions []*agentobs.ContextCompactionObservation
	sandboxes   []*agentobs.SandboxObservation
}

func split(b agentobs.AgentObservationBundle) records {
	r := records{invocations: map[string]*agentobs.AgentInvocation{}, tools: map[string]*agentobs.ToolCallObservation{}}
	for _, rec := range b.Records {
		switch v := rec.(type) {
		case *agentobs.AgentInvocation:
			r.invocations[v.InvocationID] = v
		case *agentobs.ToolCallObservation:
			r.tools[v.ToolCallID] = v
		case *agentobs.ContextCompactionObservation:
			r.compactions = append(r.compactions, v)
		case *agentobs.SandboxObservation:
			r.sandboxes = append(r.sandboxes, v)
		}
	}
	return r
}

// refIDs returns the model_call_ids of refs ("" for a reference without one).
func refIDs(refs []agentobs.ModelCallRef) []string {
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		if r.ModelCallID == nil {
			out = append(out, "")
			continue
		}
		out = append(out, *r.ModelCallID)
	}
	return out
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}
