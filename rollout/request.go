package rollout

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
)

// Correlation without the path prefix: a harness that cannot add "/ng-rollout/<id>" to its model
// URL names the rollout in a header or in W3C baggage instead.
const (
	// Header is the request header naming the rollout of a call that has no path prefix
	// (canonical form of "x-gymtrace-rollout-id"; header names are case-insensitive). The proxy
	// forwards it upstream unchanged, like the baggage header.
	Header = "X-Gymtrace-Rollout-Id"
	// BaggageKey is the W3C baggage member naming the rollout of a call that has neither a path
	// prefix nor a [Header] (semconv.GymtraceRolloutIDBaggageMember). [ContextWithID] sets it.
	BaggageKey = "gymtrace.rollout_id"
)

// Source says where a request's rollout id came from.
type Source string

// The correlation sources, in precedence order (the first present wins; a lower one is then not
// read or validated). SourceNone means the request names no rollout.
const (
	SourcePrefix  Source = "prefix"
	SourceHeader  Source = "header"
	SourceBaggage Source = "baggage"
	SourceNone    Source = ""
)

// baggagePropagator extracts W3C baggage (never the global propagator).
var baggagePropagator = propagation.Baggage{}

// FromRequest returns the rollout id a model-server request names and where it came from, with
// the precedence path prefix > [Header] > [BaggageKey] baggage member:
//
//   - a "/ng-rollout/<id>/" prefix of r.URL.Path (SPEC §1.6, [ParseRequestPath], so D12's refusals
//     apply) wins;
//   - else the header, which must appear once (several lines are an error, even when equal);
//   - else the baggage member, read from the request's "baggage" header or, when that is absent or
//     unparsable, from the baggage already in r.Context() (e.g. put there by server middleware).
//
// The id found is validated with [ValidateID] (SPEC §0 D12: an empty value is invalid too); the
// error names the source, the value and the rule and matches [ErrInvalidID]. A malformed baggage
// header is ignored as a whole (W3C baggage rules), unless it holds a member named [BaggageKey]
// (with or without "="): the call then meant a rollout, and the parse error is returned, matching
// [ErrInvalidID]. id is "" and source SourceNone when nothing names a rollout. r is only read.
func FromRequest(r *http.Request) (id string, source Source, err error) {
	if p, ok, err := ParseRequestPath(r.URL.Path, r.URL.EscapedPath()); ok {
		if err != nil {
			return p.ID, SourcePrefix, fmt.Errorf("path prefix: %w", err)
		}
		return p.ID, SourcePrefix, nil
	}
	if vals := r.Header.Values(Header); len(vals) > 0 {
		if len(vals) > 1 {
			return "", SourceHeader, fmt.Errorf("header %s: %w: the header must appear once, got %d values %q", Header, ErrInvalidID, len(vals), vals)
		}
		return vals[0], SourceHeader, validateSource("header "+Header, vals[0])
	}
	values := r.Header.Values("Baggage")
	if n := baggageMembers(values, BaggageKey); n > 0 {
		b, err := baggage.Parse(strings.Join(values, ","))
		switch {
		case err != nil:
			// W3C baggage drops a malformed header whole; one that names the rollout member is a
			// rollout the client meant, refused rather than forwarded uncaptured.
			return "", SourceBaggage, fmt.Errorf("baggage member %s: %w: the baggage header is malformed, so the member cannot be read (W3C baggage: key=value members separated by commas): %w", BaggageKey, ErrInvalidID, err)
		case n > 1:
			// As for the header: one rollout per call, never the last of several.
			return "", SourceBaggage, fmt.Errorf("baggage member %s: %w: the member must appear once, got %d", BaggageKey, ErrInvalidID, n)
		}
		if m := b.Member(BaggageKey); m.Key() != "" {
			return m.Value(), SourceBaggage, validateSource("baggage member "+BaggageKey, m.Value())
		}
		return "", SourceNone, nil
	}
	// No member in the header: the baggage already in the context (server middleware), unless a
	// well-formed header replaces it.
	ctx := baggagePropagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	if id, ok := IDFromContext(ctx); ok {
		return id, SourceBaggage, validateSource("baggage member "+BaggageKey, id)
	}
	return "", SourceNone, nil
}

// baggageMembers counts the members named key in the W3C baggage header values (list members
// "key=value;properties", separated by commas, across every header line; a malformed member's name
// ends at its first "=" or ";").
func baggageMembers(values []string, key string) int {
	n := 0
	for _, v := range values {
		for m := range strings.SplitSeq(v, ",") {
			name := m
			if i := strings.IndexAny(m, "=;"); i >= 0 {
				name = m[:i]
			}
			if strings.TrimSpace(name) == key {
				n++
			}
		}
	}
	return n
}

func validateSource(source, id string) error {
	if err := ValidateID(id); err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	return nil
}

// ContextWithID returns ctx whose W3C baggage carries the member BaggageKey=id (other members kept,
// an existing one replaced), so a client that propagates baggage names the rollout on every call
// made with it. id must pass [ValidateID] (SPEC §0 D12); on error ctx is returned unchanged.
func ContextWithID(ctx context.Context, id string) (context.Context, error) {
	if err := ValidateID(id); err != nil {
		return ctx, fmt.Errorf("rollout baggage: %w", err)
	}
	m, err := baggage.NewMemberRaw(BaggageKey, id)
	b := baggage.FromContext(ctx)
	if err == nil {
		b, err = b.SetMember(m)
	}
	if err != nil {
		return ctx, fmt.Errorf("rollout baggage: %w", err)
	}
	return baggage.ContextWithBaggage(ctx, b), nil
}

// IDFromContext returns the BaggageKey member of ctx's baggage, unvalidated; ok is false when the
// member is absent.
func IDFromContext(ctx context.Context) (id string, ok bool) {
	m := baggage.FromContext(ctx).Member(BaggageKey)
	if m.Key() == "" {
		return "", false
	}
	return m.Value(), true
}
