package fleet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// gateway is a test exporter: it records the trace ids it accepted and fails with err while set.
type gateway struct {
	mu     sync.Mutex
	hook   func() // called on every export, before the answer
	err    error
	got    []trace.TraceID
	closed bool
}

func (g *gateway) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.hook != nil {
		g.hook()
	}
	if g.err != nil {
		return g.err
	}
	for _, s := range spans {
		g.got = append(g.got, s.SpanContext().TraceID())
	}
	return nil
}

func (g *gateway) Shutdown(context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	return nil
}

func (g *gateway) set(err error) { g.mu.Lock(); g.err = err; g.mu.Unlock() }
func (g *gateway) count() int    { g.mu.Lock(); defer g.mu.Unlock(); return len(g.got) }

func span(id [16]byte) sdktrace.ReadOnlySpan {
	return tracetest.SpanStub{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: id, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled})}.Snapshot()
}

var refused = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}

type fleetT struct {
	r    *Router
	gws  map[string]*gateway
	keys []string
	now  time.Time
	mu   sync.Mutex
}

func newFleet(t *testing.T, n int, opts ...Option) *fleetT {
	t.Helper()
	f := &fleetT{gws: map[string]*gateway{}, now: time.Unix(1786032154, 0)}
	var eps []Endpoint
	for i := range n {
		ep := newEndpoint("http", "127.0.0.1", fmt.Sprint(14318+i), "", ProtocolHTTPProtobuf, "")
		eps = append(eps, ep)
		f.keys = append(f.keys, ep.Key)
		f.gws[ep.Key] = &gateway{}
	}
	opts = append([]Option{func(c *config) {
		c.now = func() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.now }
		c.after = func(time.Duration) <-chan time.Time { ch := make(chan time.Time, 1); ch <- time.Time{}; return ch }
	}}, opts...)
	r, err := NewRouter(eps, func(ep Endpoint) (sdktrace.SpanExporter, error) { return f.gws[ep.Key], nil }, opts...)
	require.NoError(t, err)
	f.r = r
	t.Cleanup(func() {
		require.NoError(t, r.Shutdown(context.Background()))
		for _, g := range f.gws {
			assert.True(t, g.closed)
		}
	})
	return f
}

func (f *fleetT) advance(d time.Duration) { f.mu.Lock(); f.now = f.now.Add(d); f.mu.Unlock() }

// rank returns the gateways of id in rank order.
func (f *fleetT) rank(id [16]byte) []*gateway {
	var out []*gateway
	for _, i := range Rank(id, f.keys) {
		out = append(out, f.gws[f.keys[i]])
	}
	return out
}

func TestRouterExportsToTheOwner(t *testing.T) {
	f := newFleet(t, 3)
	for _, id := range traceIDs(60) {
		require.NoError(t, f.r.ExportSpans(context.Background(), []sdktrace.ReadOnlySpan{span(id)}))
		gws := f.rank(id)
		require.Equal(t, trace.TraceID(id), gws[0].got[len(gws[0].got)-1])
	}
	total := 0
	for _, g := range f.gws {
		total += g.count()
	}
	assert.Equal(t, 60, total, "each span once")
}

func TestRouterGroupsOneCallsSpansByTrace(t *testing.T) {
	f := newFleet(t, 3)
	ids := traceIDs(2)
	require.NoError(t, f.r.ExportSpans(context.Background(), []sdktrace.ReadOnlySpan{span(ids[0]), span(ids[1]), span(ids[0])}))
	for _, id := range ids {
		assert.Contains(t, f.rank(id)[0].got, trace.TraceID(id))
	}
}

func TestRouterFailsOverAndReturnsToTheOwner(t *testing.T) {
	reader := metric.NewManualReader()
	mp := metric.NewMeterProvider(metric.WithReader(reader))
	f := newFleet(t, 3, WithMeterProvider(mp), WithBackoff(time.Second, 4*time.Second))
	id := traceIDs(1)[0]
	gws := f.rank(id)
	export := func() { require.NoError(t, f.r.ExportSpans(context.Background(), []sdktrace.ReadOnlySpan{span(id)})) }

	gws[0].set(fmt.Errorf("wrapped: %w", refused))
	export()
	assert.Equal(t, []int{0, 1, 0}, []int{gws[0].count(), gws[1].count(), gws[2].count()}, "the second choice took it")

	// While the owner is in back-off it is tried last: the next call goes straight to the second choice.
	gws[0].set(nil)
	export()
	assert.Equal(t, []int{0, 2, 0}, []int{gws[0].count(), gws[1].count(), gws[2].count()})

	// After the back-off the owner is first again and, answering, owns its rollout again.
	f.advance(1100 * time.Millisecond)
	export()
	assert.Equal(t, []int{1, 2, 0}, []int{gws[0].count(), gws[1].count(), gws[2].count()})

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	got := map[string]int64{}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
			gw, _ := dp.Attributes.Value("gymtrace.capture.gateway")
			oc, _ := dp.Attributes.Value("gymtrace.capture.gateway.outcome")
			got[gw.AsString()+" "+oc.AsString()] = dp.Value
		}
	}
	owner, second := f.keys[Rank(id, f.keys)[0]], f.keys[Rank(id, f.keys)[1]]
	assert.Equal(t, map[string]int64{owner + " unanswered": 1, owner + " ok": 1, second + " ok": 2}, got)
	require.NoError(t, mp.Shutdown(context.Background()))
}

func TestRouterBackoffDoublesAndCaps(t *testing.T) {
	f := newFleet(t, 2, WithBackoff(time.Second, 3*time.Second))
	id := traceIDs(1)[0]
	gws := f.rank(id)
	gws[0].set(refused)
	export := func() { require.NoError(t, f.r.ExportSpans(context.Background(), []sdktrace.ReadOnlySpan{span(id)})) }
	export() // failure 1: back-off 1 s
	f.advance(1100 * time.Millisecond)
	export() // tried first again, failure 2: back-off 2 s
	f.advance(1100 * time.Millisecond)
	export() // still in back-off: not tried
	f.r.mu.Lock()
	failures := f.r.state[Rank(id, f.keys)[0]].failures
	f.r.mu.Unlock()
	assert.Equal(t, 2, failures)
	f.advance(time.Second)
	export() // failure 3: back-off capped at 3 s
	f.r.mu.Lock()
	st := f.r.state[Rank(id, f.keys)[0]]
	f.r.mu.Unlock()
	assert.Equal(t, 3, st.failures)
	assert.Equal(t, 3*time.Second, st.downUntil.Sub(f.now))
	assert.Equal(t, 4, gws[1].count())
}

func TestRouterAnsweredErrorIsNotSentElsewhere(t *testing.T) {
	f := newFleet(t, 3)
	id := traceIDs(1)[0]
	gws := f.rank(id)
	gws[0].set(errors.New("gymcapture: rollout id is not valid (permanent)"))
	err := f.r.ExportSpans(context.Background(), []sdktrace.ReadOnlySpan{span(id)})
	require.ErrorContains(t, err, "rollout id is not valid")
	assert.Zero(t, gws[1].count()+gws[2].count())
}

func TestRouterRetriesUntilTheBudgetEnds(t *testing.T) {
	f := newFleet(t, 2)
	id := traceIDs(1)[0]
	for _, g := range f.gws {
		g.set(status.Error(codes.Unavailable, "connection refused"))
	}
	// The budget ends after the sixth attempt: three rounds over both gateways.
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var attempts atomic.Int32
	for _, g := range f.gws {
		g.hook = func() {
			if attempts.Add(1) == 6 {
				cancel(context.DeadlineExceeded)
			}
		}
	}
	err := f.r.ExportSpans(ctx, []sdktrace.ReadOnlySpan{span(id)})
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "did not answer")
	assert.Equal(t, int32(6), attempts.Load(), "retried while the budget lasted, not after")
	for _, g := range f.gws {
		g.hook = nil
	}

	// A gateway that comes back within the budget takes the call.
	f.rank(id)[1].set(nil)
	require.NoError(t, f.r.ExportSpans(context.Background(), []sdktrace.ReadOnlySpan{span(id)}))
	assert.Equal(t, 1, f.rank(id)[1].count())
}

func TestRouterConcurrentUse(t *testing.T) {
	f := newFleet(t, 3)
	f.gws[f.keys[1]].set(refused)
	var wg sync.WaitGroup
	for _, id := range traceIDs(200) {
		wg.Go(func() { assert.NoError(t, f.r.ExportSpans(context.Background(), []sdktrace.ReadOnlySpan{span(id)})) })
	}
	wg.Wait()
	assert.Equal(t, 200, f.gws[f.keys[0]].count()+f.gws[f.keys[2]].count())
}

func TestUnanswered(t *testing.T) {
	for _, err := range []error{refused, fmt.Errorf("post: %w", syscall.ECONNRESET), context.DeadlineExceeded,
		&net.DNSError{Err: "no such host", Name: "gw"}, status.Error(codes.Unavailable, "x"),
		status.Error(codes.DeadlineExceeded, "x"), fmt.Errorf("read: %w", syscall.EPIPE)} {
		assert.True(t, Unanswered(err), "%v", err)
	}
	for _, err := range []error{nil, errors.New("500 Internal Server Error"), status.Error(codes.InvalidArgument, "x"),
		status.Error(codes.Internal, "fsync")} {
		assert.False(t, Unanswered(err), "%v", err)
	}
}
