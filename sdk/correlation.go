package sdk

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync/atomic"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"

	"github.com/gymtrace/gymtrace/semconv"
)

// Correlation without the path prefix (issue 3 part 7): a harness that cannot add
// "/ng-rollout/<id>" to its model URL names the rollout in a header or in W3C baggage instead.
const (
	// RolloutIDHeader is the request header naming the rollout of a call that has no path prefix
	// (canonical form of "x-gymtrace-rollout-id"; header names are case-insensitive). The proxy
	// forwards it upstream unchanged, like the baggage header.
	RolloutIDHeader = "X-Gymtrace-Rollout-Id"
	// RolloutIDBaggageKey is the W3C baggage member naming the rollout of a call that has neither a
	// path prefix nor a RolloutIDHeader. [ContextWithRolloutID] sets it; [NewHTTPClient] propagates it.
	RolloutIDBaggageKey = semconv.GymtraceRolloutIDBaggageMember
)

// CorrelationSource says where a request's rollout id came from.
type CorrelationSource string

// The correlation sources, in precedence order (the first present wins; a lower one is then not
// read or validated). CorrelationNone means the request names no rollout.
const (
	CorrelationPrefix  CorrelationSource = "prefix"
	CorrelationHeader  CorrelationSource = "header"
	CorrelationBaggage CorrelationSource = "baggage"
	CorrelationNone    CorrelationSource = ""
)

// baggagePropagator extracts W3C baggage (never the global propagator).
var baggagePropagator = propagation.Baggage{}

// RolloutIDFromRequest returns the rollout id a model-server request names and where it came from,
// with the precedence path prefix > RolloutIDHeader > RolloutIDBaggageKey baggage member:
//
//   - a "/ng-rollout/<id>/" prefix of r.URL.Path (SPEC §1.6, [ParsePrefix]) wins;
//   - else the header, which must appear once (several lines are an error, even when equal);
//   - else the baggage member, read from the request's "baggage" header or, when that is absent or
//     unparsable, from the baggage already in r.Context() (e.g. put there by server middleware).
//
// The id found is validated exactly as a prefix id (SPEC §0 D12, [ValidatePrefixID]: an empty value is
// invalid too); the error names the source, the value and the rule and matches ErrInvalidRolloutID.
// A malformed baggage header is ignored as a whole (W3C baggage rules): its member is then absent.
// id is "" and source CorrelationNone when nothing names a rollout. r is only read. Safe for
// concurrent use.
func RolloutIDFromRequest(r *http.Request) (id string, source CorrelationSource, err error) {
	if p, ok := ParsePrefix(r.URL.Path); ok {
		return p.RolloutID, CorrelationPrefix, validateSource("path prefix", p.RolloutID)
	}
	if vals := r.Header.Values(RolloutIDHeader); len(vals) > 0 {
		if len(vals) > 1 {
			return "", CorrelationHeader, fmt.Errorf("header %s: %w: the header must appear once, got %d values %q", RolloutIDHeader, ErrInvalidRolloutID, len(vals), vals)
		}
		return vals[0], CorrelationHeader, validateSource("header "+RolloutIDHeader, vals[0])
	}
	ctx := baggagePropagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	if id, ok := RolloutIDFromContext(ctx); ok {
		return id, CorrelationBaggage, validateSource("baggage member "+RolloutIDBaggageKey, id)
	}
	return "", CorrelationNone, nil
}

func validateSource(source, id string) error {
	if err := ValidatePrefixID(id); err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	return nil
}

// ContextWithRolloutID returns ctx whose W3C baggage carries the member RolloutIDBaggageKey=id (other
// members kept; an existing member of that key replaced). A client that propagates baggage, such as
// [NewHTTPClient], then names the rollout on every call made with the context, so the capture proxy
// correlates calls that have no path prefix. id must pass [ValidatePrefixID] (SPEC §0 D12); the error
// names the id and the rule, and ctx is then returned unchanged.
func ContextWithRolloutID(ctx context.Context, id string) (context.Context, error) {
	if err := ValidatePrefixID(id); err != nil {
		return ctx, fmt.Errorf("rollout baggage: %w", err)
	}
	m, err := baggage.NewMemberRaw(RolloutIDBaggageKey, id)
	if err != nil {
		return ctx, fmt.Errorf("rollout baggage: %w", err)
	}
	b, err := baggage.FromContext(ctx).SetMember(m)
	if err != nil {
		return ctx, fmt.Errorf("rollout baggage: %w", err)
	}
	return baggage.ContextWithBaggage(ctx, b), nil
}

// RolloutIDFromContext returns the RolloutIDBaggageKey member of ctx's baggage, unvalidated; ok is
// false when the member is absent.
func RolloutIDFromContext(ctx context.Context) (id string, ok bool) {
	m := baggage.FromContext(ctx).Member(RolloutIDBaggageKey)
	if m.Key() == "" {
		return "", false
	}
	return m.Value(), true
}

// correlationConfig is the part of a Handler's config set by WithRunID and WithUncorrelatedRolloutID.
type correlationConfig struct {
	runID        string
	uncorrelated string
}

// validate checks the options' values at construction.
func (c correlationConfig) validate() error {
	if c.runID != "" {
		if err := ValidateRunID(c.runID); err != nil {
			return fmt.Errorf("WithRunID: %w", err)
		}
	}
	if c.uncorrelated != "" {
		if err := ValidatePrefixID(c.uncorrelated); err != nil {
			return fmt.Errorf("WithUncorrelatedRolloutID: %w", err)
		}
	}
	return nil
}

// storeDir is the root of the store WithCaptureDir creates: dir, or dir/runID in a run.
func (c correlationConfig) storeDir(dir string) string {
	if c.runID == "" {
		return dir
	}
	return filepath.Join(dir, c.runID)
}

// WithRunID puts the handler in the run namespace runID (issue 3 part 8): every model-call span
// belongs to the trace RolloutTraceIDInRun(runID, rolloutID) (parent chosen by
// [ParentForModelCallInRun]), and the store created by [WithCaptureDir] is rooted at
// RunCaptureDir(dir, runID), i.e. dir/runID, created with the configured directory mode. A store
// given with [WithStore] is used as it is (build it at RunCaptureDir yourself). runID must pass
// [ValidateRunID]; construction fails otherwise, naming the value and the rule. Default "": Gym's
// layout and the run-less trace ids, unchanged. Agents use the same run id with
// [WithRolloutRunID] so that their spans join the same trace.
func WithRunID(runID string) Option {
	return optionFunc(func(c *config) { c.corr.runID = runID })
}

// WithUncorrelatedRolloutID captures calls to the three captured endpoints that name no rollout (no
// path prefix, no RolloutIDHeader, no RolloutIDBaggageKey baggage) under rollout id instead of
// forwarding them uncaptured. They are counted (and logged) either way: see
// [Handler.CorrelationStats]. id must pass [ValidatePrefixID] (SPEC §0 D12); construction fails
// otherwise. Default "": such calls are forwarded uncaptured.
func WithUncorrelatedRolloutID(id string) Option {
	return optionFunc(func(c *config) { c.corr.uncorrelated = id })
}

// CorrelationStats counts the calls to the three captured endpoints (SPEC §1.6) that named no
// rollout, since the handler was built. With [WithMeterProvider] the same calls are also counted by
// the metric gymtrace.capture.uncorrelated_calls (by gymtrace.dialect).
type CorrelationStats struct {
	// Uncorrelated is the number of such calls (each also logged at level WARN).
	Uncorrelated uint64
	// UncorrelatedCaptured is how many of them were captured under the id of
	// [WithUncorrelatedRolloutID]; the others were forwarded uncaptured.
	UncorrelatedCaptured uint64
}

// correlationCounters are the Handler's CorrelationStats (zero value ready).
type correlationCounters struct {
	uncorrelated atomic.Uint64
	captured     atomic.Uint64
}

// CorrelationStats returns the counts of calls to captured endpoints that named no rollout. Safe for
// concurrent use.
func (h *Handler) CorrelationStats() CorrelationStats {
	return CorrelationStats{Uncorrelated: h.corr.uncorrelated.Load(), UncorrelatedCaptured: h.corr.captured.Load()}
}

// serveUnprefixed serves a request whose path has no rollout prefix: a call to a captured endpoint
// is captured under the rollout its header or baggage names (400 when that id is invalid), else
// counted as uncorrelated and captured under WithUncorrelatedRolloutID's id or forwarded uncaptured.
// Every other path is forwarded untouched.
func (h *Handler) serveUnprefixed(w http.ResponseWriter, r *http.Request) {
	dialect := CapturedDialect(r.URL.Path)
	if dialect == "" {
		h.next.ServeHTTP(w, r)
		return
	}
	id, source, err := RolloutIDFromRequest(r)
	if err != nil {
		status, body := InvalidRolloutIDBody(r.URL.Path, err)
		writeJSON(w, status, body)
		return
	}
	if source == CorrelationNone {
		h.corr.uncorrelated.Add(1)
		h.countUncorrelated(r.Context(), dialect) // gymtrace.capture.uncorrelated_calls (metrics.go)
		id = h.cfg.corr.uncorrelated
		if id == "" {
			h.cfg.logger.Warn("gymtrace capture: call to a captured endpoint names no rollout (no /ng-rollout/<id>/ prefix, no "+RolloutIDHeader+" header, no "+RolloutIDBaggageKey+" baggage); forwarded uncaptured",
				"path", r.URL.Path)
			h.next.ServeHTTP(w, r)
			return
		}
		h.corr.captured.Add(1)
		h.cfg.logger.Warn("gymtrace capture: call to a captured endpoint names no rollout (no /ng-rollout/<id>/ prefix, no "+RolloutIDHeader+" header, no "+RolloutIDBaggageKey+" baggage); captured under the uncorrelated rollout id",
			"path", r.URL.Path, "rollout_id", id)
	}
	if !h.gate.Enter() {
		writeShutDown(w, r)
		return
	}
	defer h.gate.Leave()
	h.serveCaptured(w, r, id, dialect)
}
