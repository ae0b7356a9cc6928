package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/semconv"
)

// Defaults of a [Router].
const (
	// DefaultAttemptTimeout bounds one export attempt to one gateway.
	DefaultAttemptTimeout = 2 * time.Second
	// DefaultBackoffMin is the first back-off of a gateway that did not answer; it doubles with
	// each further failure up to DefaultBackoffMax.
	DefaultBackoffMin = time.Second
	// DefaultBackoffMax caps a gateway's back-off.
	DefaultBackoffMax = 30 * time.Second
	// retryPause is the first pause before trying a trace's order again once no gateway answered
	// (doubling to a second), while the caller's deadline lasts.
	retryPause = 50 * time.Millisecond
)

// Router is an sdktrace.SpanExporter that exports each span to the capture gateway owning its
// trace ([Rank] over the endpoints' keys), failing over in rank order when a gateway does not
// answer (see [Unanswered]).
//
// The caller's context bounds the whole export (the proxy's --capture-export-timeout); each
// attempt is bounded by the attempt timeout ([WithAttemptTimeout], default
// [DefaultAttemptTimeout]). A gateway that did not answer is tried after the others for a back-off
// period ([WithBackoff]: 1 s doubling to 30 s), then first again for the traces it owns — so
// routing returns to a restarted gateway by itself. When no gateway answered, the order is tried
// again after a short pause until the context ends. A gateway that answered with an error ends the
// export with that error: the span is not sent elsewhere.
//
// Spans of one ExportSpans call are grouped by trace id; each group is exported on its own, and the
// groups' errors are joined. Transitions of a gateway between answering and not answering are
// logged once each; every attempt is counted (gymtrace.capture.gateway.exports).
// Safe for concurrent use.
type Router struct {
	eps  []Endpoint
	keys []string
	exps []sdktrace.SpanExporter
	cfg  config

	mu    sync.Mutex
	state []gatewayState

	attempts metric.Int64Counter
}

type gatewayState struct {
	failures  int
	downUntil time.Time
}

var _ sdktrace.SpanExporter = (*Router)(nil)

// NewRouter returns a router over eps (at least one, keys distinct, as [ParseEndpoints] and
// [Expand] give them), building one exporter per endpoint with newExporter (for the proxy: an OTLP
// exporter without retries of its own, since the router retries). On an error the exporters built
// so far are shut down.
func NewRouter(eps []Endpoint, newExporter func(Endpoint) (sdktrace.SpanExporter, error), opts ...Option) (*Router, error) {
	if len(eps) == 0 {
		return nil, errors.New("fleet: router needs at least one gateway endpoint")
	}
	cfg := newConfig(opts)
	r := &Router{eps: eps, cfg: cfg, state: make([]gatewayState, len(eps))}
	for _, ep := range eps {
		exp, err := newExporter(ep)
		if err != nil {
			_ = r.Shutdown(context.Background())
			return nil, fmt.Errorf("fleet: exporter for %s: %w", ep.Key, err)
		}
		r.keys = append(r.keys, ep.Key)
		r.exps = append(r.exps, exp)
	}
	var err error
	r.attempts, err = cfg.meter.Int64Counter(semconv.GymtraceCaptureGatewayExportsName,
		metric.WithUnit(semconv.GymtraceCaptureGatewayExportsUnit),
		metric.WithDescription(semconv.GymtraceCaptureGatewayExportsDescription))
	if err != nil {
		_ = r.Shutdown(context.Background())
		return nil, fmt.Errorf("fleet: counter: %w", err)
	}
	return r, nil
}

// Endpoints returns the router's gateways in configuration order.
func (r *Router) Endpoints() []Endpoint { return append([]Endpoint(nil), r.eps...) }

// ExportSpans exports spans, each trace's spans to its gateway (see [Router]).
func (r *Router) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	var groups [][]sdktrace.ReadOnlySpan
	index := map[[16]byte]int{}
	for _, s := range spans {
		id := [16]byte(s.SpanContext().TraceID())
		i, ok := index[id]
		if !ok {
			i = len(groups)
			index[id] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], s)
	}
	var errs []error
	for _, g := range groups {
		if err := r.export(ctx, [16]byte(g[0].SpanContext().TraceID()), g); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (r *Router) export(ctx context.Context, traceID [16]byte, spans []sdktrace.ReadOnlySpan) error {
	pause := retryPause
	var last error
	for {
		for _, i := range r.order(traceID) {
			if ctx.Err() != nil {
				return r.budgetErr(ctx, last)
			}
			actx, cancel := context.WithTimeout(ctx, r.cfg.attemptTimeout)
			err := r.exps[i].ExportSpans(actx, spans)
			cancel()
			switch {
			case err == nil:
				r.answered(i)
				r.count(ctx, i, semconv.GymtraceCaptureGatewayOutcomeOK)
				return nil
			case ctx.Err() != nil: // the call's budget ended during the attempt
				if Unanswered(err) {
					err = fmt.Errorf("gateway %s did not answer: %w", r.keys[i], err)
				} else {
					err = fmt.Errorf("gateway %s: %w", r.keys[i], err)
				}
				return r.budgetErr(ctx, err)
			case Unanswered(err):
				r.unanswered(i, err)
				r.count(ctx, i, semconv.GymtraceCaptureGatewayOutcomeUnanswered)
				last = fmt.Errorf("gateway %s did not answer: %w", r.keys[i], err)
			default:
				r.answered(i)
				r.count(ctx, i, semconv.GymtraceCaptureGatewayOutcomeError)
				return fmt.Errorf("fleet: gateway %s: %w", r.keys[i], err)
			}
		}
		select {
		case <-ctx.Done():
			return r.budgetErr(ctx, last)
		case <-r.cfg.after(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

func (r *Router) budgetErr(ctx context.Context, last error) error {
	if last == nil {
		return fmt.Errorf("fleet: export: %w", ctx.Err())
	}
	return fmt.Errorf("fleet: export: %w (last: %w)", ctx.Err(), last)
}

// order is Rank's order with the gateways in back-off moved behind the others (each part keeping
// rank order).
func (r *Router) order(traceID [16]byte) []int {
	rank := Rank(traceID, r.keys)
	now := r.cfg.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	up := make([]int, 0, len(rank))
	var down []int
	for _, i := range rank {
		if now.Before(r.state[i].downUntil) {
			down = append(down, i)
		} else {
			up = append(up, i)
		}
	}
	return append(up, down...)
}

func (r *Router) unanswered(i int, err error) {
	r.mu.Lock()
	st := &r.state[i]
	st.failures++
	backoff := r.cfg.backoffMax
	if st.failures < 32 {
		backoff = min(r.cfg.backoffMin<<(st.failures-1), r.cfg.backoffMax)
	}
	st.downUntil = r.cfg.now().Add(backoff)
	first := st.failures == 1
	r.mu.Unlock()
	if first {
		r.cfg.logger.Warn("capture gateway did not answer; its rollouts go to the next gateway of their order until it answers again",
			"gateway", r.keys[i], "backoff", backoff, "error", err)
	}
}

func (r *Router) answered(i int) {
	r.mu.Lock()
	st := &r.state[i]
	back := st.failures > 0
	st.failures, st.downUntil = 0, time.Time{}
	r.mu.Unlock()
	if back {
		r.cfg.logger.Info("capture gateway answers again; it owns its rollouts again", "gateway", r.keys[i])
	}
}

func (r *Router) count(ctx context.Context, i int, outcome string) {
	r.attempts.Add(context.WithoutCancel(ctx), 1, metric.WithAttributes(
		semconv.GymtraceCaptureGatewayKey.String(r.keys[i]),
		semconv.GymtraceCaptureGatewayOutcomeKey.String(outcome)))
}

// Shutdown shuts every gateway's exporter down and joins their errors.
func (r *Router) Shutdown(ctx context.Context) error {
	var errs []error
	for i, e := range r.exps {
		if err := e.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("fleet: shutdown %s: %w", r.keys[i], err))
		}
	}
	return errors.Join(errs...)
}

// Option configures a [Router].
type Option func(*config)

type config struct {
	attemptTimeout         time.Duration
	backoffMin, backoffMax time.Duration
	logger                 *slog.Logger
	meter                  metric.Meter
	now                    func() time.Time
	after                  func(time.Duration) <-chan time.Time
}

func newConfig(opts []Option) config {
	c := config{
		attemptTimeout: DefaultAttemptTimeout,
		backoffMin:     DefaultBackoffMin,
		backoffMax:     DefaultBackoffMax,
		logger:         slog.New(slog.DiscardHandler),
		meter:          noop.NewMeterProvider().Meter(""),
		now:            time.Now,
		after:          time.After,
	}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithAttemptTimeout bounds one export attempt to one gateway (≤ 0: [DefaultAttemptTimeout]).
func WithAttemptTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.attemptTimeout = d
		}
	}
}

// WithBackoff sets the back-off of a gateway that did not answer: first minimum, doubling per
// further failure up to maximum (values ≤ 0 keep the defaults; maximum is at least minimum).
func WithBackoff(minimum, maximum time.Duration) Option {
	return func(c *config) {
		if minimum > 0 {
			c.backoffMin = minimum
		}
		if maximum > 0 {
			c.backoffMax = maximum
		}
		c.backoffMax = max(c.backoffMax, c.backoffMin)
	}
}

// WithLogger sets the logger of gateway transitions (default: discard).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithMeterProvider sets where the attempt counter is recorded (default: no metrics).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) {
		if mp != nil {
			c.meter = mp.Meter("github.com/gymtrace/gymtrace/fleet")
		}
	}
}
