package proxy

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/rollout"
	"github.com/gymtrace/gymtrace/semconv"
)

// agentProvider is an agent's tracer provider exporting synchronously to memory.
func agentProvider(t *testing.T, opts ...sdktrace.TracerProviderOption) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(append([]sdktrace.TracerProviderOption{sdktrace.WithSyncer(exp)}, opts...)...)
	t.Cleanup(func() { require.NoError(t, tp.Shutdown(context.Background())) })
	return tp, exp
}

func spanNamed(t *testing.T, spans tracetest.SpanStubs, name string) tracetest.SpanStub {
	t.Helper()
	for _, s := range spans {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no span %q among %d spans", name, len(spans))
	return tracetest.SpanStub{}
}

// TestRolloutTraceTree: rollout root (agent) → agent span → otelhttp client span → model-call span
// (proxy) share the rollout's trace and nest parent → child; the capture record names the model-call span.
func TestRolloutTraceTree(t *testing.T) {
	tests := []struct {
		name  string
		run   string
		path  func(id string) string
		proxy []Option
	}{
		{name: "baggage correlation, no prefix", path: func(string) string { return "/v1/chat/completions" }},
		{name: "path prefix", path: func(id string) string { return "/ng-rollout/" + id + "/v1/chat/completions" }},
		{name: "run namespace", run: "run-2", path: func(string) string { return "/v1/chat/completions" }, proxy: []Option{WithRunID("run-2")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const id = "tree-1"
			up := newUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`)
			})
			var store = newTestStore(t)
			if tt.run != "" {
				var err error
				store, err = newRunStore(t, tt.run)
				require.NoError(t, err)
			}
			mp, reader := newMetricReader(t)
			env := newProxyEnv(t, up.URL, store, append(tt.proxy, WithMeterProvider(mp))...)
			tp, agentSpans := agentProvider(t, sdktrace.WithIDGenerator(RolloutIDGenerator(nil)))
			base := &http.Client{Transport: &http.Transport{}}
			t.Cleanup(base.CloseIdleConnections)
			client, err := NewHTTPClient(base)
			require.NoError(t, err)

			ctx, root := StartRollout(t.Context(), tp, id, WithRolloutRunID(tt.run))
			actx, agent := tp.Tracer("agent").Start(ctx, "invoke_agent")
			req, err := http.NewRequestWithContext(actx, http.MethodPost, env.srv.URL+tt.path(id), strings.NewReader(`{"model":"m","messages":[]}`))
			require.NoError(t, err)
			resp, err := client.Do(req)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			require.NoError(t, resp.Body.Close())
			require.Equal(t, http.StatusOK, resp.StatusCode)
			agent.End()
			root.End()

			traceID := rollout.ID{Run: tt.run, Rollout: id}.TraceID()
			got := agentSpans.GetSpans()
			require.Len(t, got, 3, "root, agent and client span")
			rootSpan := spanNamed(t, got, "rollout "+id)
			agentSpan := spanNamed(t, got, "invoke_agent")
			clientSpan := spanNamed(t, got, "HTTP POST")
			assert.Equal(t, traceID, rootSpan.SpanContext.TraceID())
			assert.Equal(t, rollout.ID{Run: tt.run, Rollout: id}.RootSpanID(), rootSpan.SpanContext.SpanID())
			assert.False(t, rootSpan.Parent.IsValid(), "the rollout root has no parent")
			assert.Equal(t, trace.SpanKindInternal, rootSpan.SpanKind)
			assert.Contains(t, rootSpan.Attributes, semconv.GymtraceRolloutIDKey.String(id))
			assert.Equal(t, rootSpan.SpanContext.SpanID(), agentSpan.Parent.SpanID())
			assert.Equal(t, agentSpan.SpanContext.SpanID(), clientSpan.Parent.SpanID())
			assert.Equal(t, trace.SpanKindClient, clientSpan.SpanKind)
			for _, s := range got {
				assert.Equal(t, traceID, s.SpanContext.TraceID(), s.Name)
			}

			calls := env.spans.GetSpans()
			require.Len(t, calls, 1)
			call := calls[0]
			assert.Equal(t, traceID, call.SpanContext.TraceID(), "the model call is in the rollout's trace")
			assert.Equal(t, clientSpan.SpanContext.SpanID(), call.Parent.SpanID(), "the model call nests under the agent's HTTP span")
			assert.True(t, call.Parent.IsRemote())
			assert.Empty(t, call.Links, "same trace: no link")

			rec := env.record(t, id)
			assert.Equal(t, call.SpanContext.TraceID().String(), rec["trace_id"])
			assert.Equal(t, call.SpanContext.SpanID().String(), rec["span_id"])
			assert.Zero(t, uncorrelatedCalls(t, reader))
		})
	}
}

// newRunStore returns a store at rollout.RunDir(tempdir, run).
func newRunStore(t *testing.T, run string) (*capture.Store, error) {
	t.Helper()
	dir, err := rollout.RunDir(t.TempDir(), run)
	if err != nil {
		return nil, err
	}
	return capture.NewStore(dir)
}

func TestStartRolloutWithoutGenerator(t *testing.T) {
	const id = "nogen-1"
	tp, exp := agentProvider(t)
	ctx, span := StartRollout(t.Context(), tp, id)
	_, child := tp.Tracer("agent").Start(ctx, "step")
	child.End()
	span.End()

	got := exp.GetSpans()
	require.Len(t, got, 2, "the span with random ids is never exported")
	root := spanNamed(t, got, "rollout "+id)
	assert.Equal(t, rollout.ID{Rollout: id}.TraceID(), root.SpanContext.TraceID(), "still the rollout's trace")
	assert.Equal(t, rollout.ID{Rollout: id}.RootSpanID(), root.Parent.SpanID(), "child of the unrecorded rollout root")
	assert.NotEqual(t, rollout.ID{Rollout: id}.RootSpanID(), root.SpanContext.SpanID())
	assert.Equal(t, root.SpanContext.SpanID(), spanNamed(t, got, "step").Parent.SpanID())
	rid, ok := rollout.IDFromContext(ctx)
	assert.True(t, ok)
	assert.Equal(t, id, rid)
}

func TestStartRolloutWithoutRecordingProvider(t *testing.T) {
	foreign := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	tests := []struct {
		name string
		tp   trace.TracerProvider
		ctx  context.Context
	}{
		{name: "nil provider", ctx: context.Background()},
		{name: "no-op provider", tp: noop.NewTracerProvider(), ctx: context.Background()},
		{name: "no-op provider under a foreign span", tp: noop.NewTracerProvider(), ctx: trace.ContextWithSpanContext(context.Background(), foreign)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, span := StartRollout(tt.ctx, tt.tp, "np-1", WithRolloutRunID("r"))
			assert.False(t, span.IsRecording())
			assert.Equal(t, rollout.ID{Run: "r", Rollout: "np-1"}.RootSpanContext(), span.SpanContext())
			assert.Equal(t, rollout.ID{Run: "r", Rollout: "np-1"}.RootSpanContext(), trace.SpanContextFromContext(ctx), "requests propagate the rollout root")
			id, ok := rollout.IDFromContext(ctx)
			assert.True(t, ok)
			assert.Equal(t, "np-1", id)
			span.End() // harmless
		})
	}
}

func TestStartRolloutOptionsAndSampling(t *testing.T) {
	t.Run("attributes and parent ignored", func(t *testing.T) {
		tp, exp := agentProvider(t, sdktrace.WithIDGenerator(RolloutIDGenerator(nil)))
		pctx, parent := tp.Tracer("outer").Start(t.Context(), "outer")
		_, span := StartRollout(pctx, tp, "opt-1", WithRolloutAttributes(attribute.Int("task", 3)),
			WithRolloutSpanOptions(trace.WithSpanKind(trace.SpanKindServer)))
		span.End()
		parent.End()
		s := spanNamed(t, exp.GetSpans(), "rollout opt-1")
		assert.False(t, s.Parent.IsValid(), "a rollout is a trace of its own")
		assert.Equal(t, rollout.ID{Rollout: "opt-1"}.RootSpanID(), s.SpanContext.SpanID())
		assert.Equal(t, trace.SpanKindInternal, s.SpanKind)
		assert.Equal(t, []attribute.KeyValue{semconv.GymtraceRolloutIDKey.String("opt-1"), attribute.Int("task", 3)}, s.Attributes)
	})
	t.Run("sampled out keeps the ids", func(t *testing.T) {
		tp, exp := agentProvider(t, sdktrace.WithIDGenerator(RolloutIDGenerator(nil)), sdktrace.WithSampler(sdktrace.NeverSample()))
		ctx, span := StartRollout(t.Context(), tp, "drop-1")
		assert.False(t, span.IsRecording())
		assert.Equal(t, rollout.ID{Rollout: "drop-1"}.TraceID(), span.SpanContext().TraceID())
		assert.Equal(t, rollout.ID{Rollout: "drop-1"}.RootSpanID(), trace.SpanContextFromContext(ctx).SpanID())
		span.End()
		assert.Empty(t, exp.GetSpans())
	})
	t.Run("invalid rollout id", func(t *testing.T) {
		tp, exp := agentProvider(t, sdktrace.WithIDGenerator(RolloutIDGenerator(nil)))
		ctx, span := StartRollout(t.Context(), tp, "bad id")
		span.End()
		s := spanNamed(t, exp.GetSpans(), "rollout bad id")
		assert.Equal(t, codes.Error, s.Status.Code)
		assert.Contains(t, s.Status.Description, `invalid rollout id "bad id": must match`)
		assert.Equal(t, rollout.ID{Rollout: "bad id"}.TraceID(), s.SpanContext.TraceID())
		_, ok := rollout.IDFromContext(ctx)
		assert.False(t, ok, "no baggage for an invalid id")
	})
}

func TestRolloutIDGenerator(t *testing.T) {
	tp, exp := agentProvider(t, sdktrace.WithIDGenerator(RolloutIDGenerator(nil)))
	ctx, root := StartRollout(t.Context(), tp, "gen-1")
	// A new root from the rollout's context must not reuse the rollout's ids (the marker is one-shot).
	_, other := tp.Tracer("agent").Start(ctx, "other", trace.WithNewRoot())
	other.End()
	root.End()
	o := spanNamed(t, exp.GetSpans(), "other")
	assert.NotEqual(t, rollout.ID{Rollout: "gen-1"}.TraceID(), o.SpanContext.TraceID())
	assert.True(t, o.SpanContext.TraceID().IsValid())
	assert.True(t, o.SpanContext.SpanID().IsValid())

	// Concurrent rollouts each get their own ids.
	var wg sync.WaitGroup
	ids := []string{"c-1", "c-2", "c-3", "c-4", "c-5", "c-6", "c-7", "c-8"}
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, s := StartRollout(context.Background(), tp, id)
			s.End()
		}()
	}
	wg.Wait()
	for _, id := range ids {
		s := spanNamed(t, exp.GetSpans(), "rollout "+id)
		assert.Equal(t, rollout.ID{Rollout: id}.TraceID(), s.SpanContext.TraceID(), id)
		assert.Equal(t, rollout.ID{Rollout: id}.RootSpanID(), s.SpanContext.SpanID(), id)
	}

	// A base generator is used for every other span.
	fixed := fixedIDs{trace.TraceID{7, 7}, trace.SpanID{7}}
	g := RolloutIDGenerator(fixed)
	tid, sid := g.NewIDs(context.Background())
	assert.Equal(t, fixed.t, tid)
	assert.Equal(t, fixed.s, sid)
	assert.Equal(t, fixed.s, g.NewSpanID(context.Background(), tid))
}

type fixedIDs struct {
	t trace.TraceID
	s trace.SpanID
}

func (f fixedIDs) NewIDs(context.Context) (trace.TraceID, trace.SpanID)  { return f.t, f.s }
func (f fixedIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID { return f.s }
