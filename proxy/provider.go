package proxy

import (
	"context"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// recordAlways wraps the user's export sampler so that model-call spans are always recorded (and so
// always reach the durable capture processor, SPEC §0 "Durability contract"), while the user's
// decision still sets the sampled flag: a Drop becomes RecordOnly, which export processors skip.
type recordAlways struct{ export sdktrace.Sampler }

func (s recordAlways) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	r := s.export.ShouldSample(p)
	if r.Decision == sdktrace.Drop {
		r.Decision = sdktrace.RecordOnly
	}
	return r
}

func (s recordAlways) Description() string {
	return "gymtrace.RecordAlways{" + s.export.Description() + "}"
}

// sampledOnly passes only sampled spans to an export processor, so that a processor which does not
// check the sampled flag itself still sees only what the export sampler kept.
type sampledOnly struct{ next sdktrace.SpanProcessor }

func (p sampledOnly) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) {
	if s.SpanContext().IsSampled() {
		p.next.OnStart(ctx, s)
	}
}

func (p sampledOnly) OnEnd(s sdktrace.ReadOnlySpan) {
	if s.SpanContext().IsSampled() {
		p.next.OnEnd(s)
	}
}

func (p sampledOnly) Shutdown(ctx context.Context) error   { return p.next.Shutdown(ctx) }
func (p sampledOnly) ForceFlush(ctx context.Context) error { return p.next.ForceFlush(ctx) }

// spanLimits keeps every span attribute whole (DESIGN.md "Payloads travel on the span"): the
// OTEL_*ATTRIBUTE_{VALUE_LENGTH,COUNT}_LIMIT variables do not apply to the handler's own provider;
// the event and link limits still do. A payload cut by another pipeline is caught by the writer.
func spanLimits() sdktrace.SpanLimits {
	l := sdktrace.NewSpanLimits()
	l.AttributeValueLengthLimit = -1
	l.AttributeCountLimit = -1
	return l
}
