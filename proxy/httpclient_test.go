package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/rollout"
)

// headerSink answers 204 and reports the headers of each request.
func headerSink(t *testing.T) (*httptest.Server, chan http.Header) {
	t.Helper()
	got := make(chan http.Header, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func TestNewHTTPClientPropagation(t *testing.T) {
	tp, exp := agentProvider(t)
	otherTP, otherExp := agentProvider(t)
	withBaggage := func(ctx context.Context, id string) context.Context {
		c, err := rollout.ContextWithID(ctx, id)
		require.NoError(t, err)
		return c
	}
	tests := []struct {
		name        string
		opts        []ClientOption
		ctx         func(ctx context.Context) (context.Context, trace.Span)
		wantRollout string // baggage member ("" = none)
		wantSpanIn  string // which exporter records the client span: "ctx", "option" or "" (none)
	}{
		{name: "span of the context", ctx: func(ctx context.Context) (context.Context, trace.Span) {
			return tp.Tracer("a").Start(ctx, "agent")
		}, wantSpanIn: "ctx"},
		{name: "option provider wins", opts: []ClientOption{WithClientTracerProvider(otherTP)}, ctx: func(ctx context.Context) (context.Context, trace.Span) {
			return tp.Tracer("a").Start(ctx, "agent")
		}, wantSpanIn: "option"},
		{name: "rollout option sets baggage", opts: []ClientOption{WithClientRolloutID("opt-1")}, ctx: func(ctx context.Context) (context.Context, trace.Span) {
			return tp.Tracer("a").Start(ctx, "agent")
		}, wantRollout: "opt-1", wantSpanIn: "ctx"},
		{name: "context baggage wins over the option", opts: []ClientOption{WithClientRolloutID("opt-1")}, ctx: func(ctx context.Context) (context.Context, trace.Span) {
			return tp.Tracer("a").Start(withBaggage(ctx, "ctx-1"), "agent")
		}, wantRollout: "ctx-1", wantSpanIn: "ctx"},
		{name: "baggage without any span", opts: []ClientOption{WithClientRolloutID("opt-2")}, ctx: func(ctx context.Context) (context.Context, trace.Span) {
			return ctx, nil
		}, wantRollout: "opt-2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp.Reset()
			otherExp.Reset()
			srv, got := headerSink(t)
			base := &http.Client{Transport: &http.Transport{}, Timeout: 7 * time.Second}
			client, err := NewHTTPClient(base, tt.opts...)
			require.NoError(t, err)
			t.Cleanup(client.CloseIdleConnections)
			assert.Equal(t, 7*time.Second, client.Timeout, "base fields kept")
			assert.NotSame(t, base, client)

			ctx, parent := tt.ctx(t.Context())
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/v1/models", nil)
			require.NoError(t, err)
			resp, err := client.Do(req)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			require.NoError(t, resp.Body.Close())
			if parent != nil {
				parent.End()
			}
			h := <-got

			b, err := baggage.Parse(h.Get("Baggage"))
			require.NoError(t, err)
			assert.Equal(t, tt.wantRollout, b.Member(rollout.BaggageKey).Value())

			var spans []sdktrace.ReadOnlySpan
			switch tt.wantSpanIn {
			case "ctx":
				spans = exp.GetSpans().Snapshots()
				assert.Empty(t, otherExp.GetSpans())
			case "option":
				spans = otherExp.GetSpans().Snapshots()
			}
			if tt.wantSpanIn == "" {
				assert.Empty(t, h.Get("Traceparent"), "no span, no traceparent")
				return
			}
			var cs sdktrace.ReadOnlySpan
			for _, s := range spans {
				if s.SpanKind() == trace.SpanKindClient {
					cs = s
				}
			}
			require.NotNil(t, cs, "a client span")
			assert.Equal(t, parent.SpanContext().SpanID(), cs.Parent().SpanID())
			assert.Equal(t, "00-"+cs.SpanContext().TraceID().String()+"-"+cs.SpanContext().SpanID().String()+"-01", h.Get("Traceparent"),
				"traceparent injected without a global propagator")
		})
	}
}

func TestNewHTTPClientErrorsAndDefaults(t *testing.T) {
	_, err := NewHTTPClient(nil, WithClientRolloutID("a b"))
	require.ErrorIs(t, err, rollout.ErrInvalidID)
	assert.Contains(t, err.Error(), `proxy http client: WithClientRolloutID: invalid rollout id "a b": must match`)

	c, err := NewHTTPClient(nil, nil)
	require.NoError(t, err)
	assert.Zero(t, c.Timeout)
	ct, ok := c.Transport.(*clientTransport)
	require.True(t, ok)
	assert.Same(t, http.DefaultTransport, ct.base, "nil base uses http.DefaultTransport")
}

// TestNewHTTPClientMeterProvider checks that otelhttp's client metrics go to the provider of
// WithClientMeterProvider, not to the global one.
func TestNewHTTPClientMeterProvider(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(up.Close)
	mp, reader := newMetricReader(t)
	c, err := NewHTTPClient(&http.Client{Transport: &http.Transport{}}, WithClientMeterProvider(mp))
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	resp, err := c.Get(up.URL)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(t.Context(), &rm))
	var names []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			names = append(names, m.Name)
		}
	}
	assert.Contains(t, names, "http.client.request.duration")
}
