package proxy

import (
	"fmt"
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/rollout"
)

// ClientOption configures [NewHTTPClient].
type ClientOption interface {
	applyClient(*clientConfig)
}

type clientConfig struct {
	tp        trace.TracerProvider
	mp        metric.MeterProvider
	rolloutID string
}

type clientOptionFunc func(*clientConfig)

func (f clientOptionFunc) applyClient(c *clientConfig) { f(c) }

// WithClientTracerProvider sets the TracerProvider of the client spans. Default: the provider of the
// span in each request's context (the one [StartRollout] started), or, when the context has no
// valid span, the global provider (otelhttp's rule).
func WithClientTracerProvider(tp trace.TracerProvider) ClientOption {
	return clientOptionFunc(func(c *clientConfig) { c.tp = tp })
}

// WithClientMeterProvider sets the MeterProvider of otelhttp's client metrics (default: the global
// provider, otelhttp's rule).
func WithClientMeterProvider(mp metric.MeterProvider) ClientOption {
	return clientOptionFunc(func(c *clientConfig) { c.mp = mp })
}

// WithClientRolloutID makes every request of the client carry the baggage member
// rollout.BaggageKey=id, for a client used by one rollout only. A request whose
// context already names a rollout ([rollout.ContextWithID], [StartRollout]) keeps its own. id must
// pass [rollout.ValidateID] (SPEC §0 D12); NewHTTPClient fails otherwise.
func WithClientRolloutID(id string) ClientOption {
	return clientOptionFunc(func(c *clientConfig) { c.rolloutID = id })
}

// clientPropagator injects W3C trace context and baggage whatever the global propagator is.
var clientPropagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// NewHTTPClient returns an agent-side HTTP client whose requests are OpenTelemetry CLIENT spans
// (otelhttp) and carry the W3C traceparent and baggage headers of their context (always both, never
// the global propagator). Pointed at the capture proxy with a context from [StartRollout] (or any
// span of the rollout), each model call nests under the agent's span: the proxy makes the incoming
// traceparent the parent of its model-call span (DESIGN.md "Trace per rollout"), and the baggage
// member rollout.BaggageKey names the rollout when the URL has no "/ng-rollout/<id>" prefix.
//
// base is copied (Timeout, Jar, CheckRedirect kept); its Transport, or http.DefaultTransport when nil,
// does the requests. base nil means a zero http.Client. The error names an invalid option value.
// The client is safe for concurrent use when base's transport is.
func NewHTTPClient(base *http.Client, opts ...ClientOption) (*http.Client, error) {
	var cfg clientConfig
	for _, o := range opts {
		if o != nil {
			o.applyClient(&cfg)
		}
	}
	if cfg.rolloutID != "" {
		if err := rollout.ValidateID(cfg.rolloutID); err != nil {
			return nil, fmt.Errorf("proxy http client: WithClientRolloutID: %w", err)
		}
	}
	c := &http.Client{}
	if base != nil {
		*c = *base
	}
	otelOpts := []otelhttp.Option{otelhttp.WithPropagators(clientPropagator)}
	if cfg.tp != nil {
		otelOpts = append(otelOpts, otelhttp.WithTracerProvider(cfg.tp))
	}
	if cfg.mp != nil {
		otelOpts = append(otelOpts, otelhttp.WithMeterProvider(cfg.mp))
	}
	baseRT := c.Transport
	if baseRT == nil {
		baseRT = http.DefaultTransport
	}
	c.Transport = &clientTransport{
		rolloutID: cfg.rolloutID,
		next:      otelhttp.NewTransport(baseRT, otelOpts...),
		base:      baseRT,
	}
	return c, nil
}

// clientTransport adds the baggage member of WithClientRolloutID before otelhttp starts the client
// span, and passes CloseIdleConnections to the base transport (otelhttp's does not).
type clientTransport struct {
	rolloutID string
	next      http.RoundTripper // otelhttp over base
	base      http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *clientTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if _, named := rollout.IDFromContext(r.Context()); named || t.rolloutID == "" {
		return t.next.RoundTrip(r)
	}
	ctx, err := rollout.ContextWithID(r.Context(), t.rolloutID)
	if err != nil {
		// Unreachable: NewHTTPClient validated the id. RoundTrip must close the body.
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, fmt.Errorf("proxy http client: %w", err)
	}
	return t.next.RoundTrip(r.WithContext(ctx))
}

// CloseIdleConnections closes the idle connections of the base transport (http.Client calls it).
func (t *clientTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
