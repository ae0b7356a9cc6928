package proxy

import (
	"fmt"
	"net/http"
	"path/filepath"

	"github.com/gymtrace/gymtrace/rollout"
)

// correlationConfig is the part of a Handler's config set by WithRunID and WithUncorrelatedRolloutID.
type correlationConfig struct {
	runID        string
	uncorrelated string
}

// validate checks the options' values at construction.
func (c correlationConfig) validate() error {
	if c.runID != "" {
		if err := rollout.ValidateRun(c.runID); err != nil {
			return fmt.Errorf("WithRunID: %w", err)
		}
	}
	if c.uncorrelated != "" {
		if err := rollout.ValidateID(c.uncorrelated); err != nil {
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

// WithRunID puts the handler in the run namespace runID: every model-call span
// belongs to the trace rollout.ID{Run: runID, Rollout: id}.TraceID() (parent chosen by
// [rollout.ID.ParentForModelCall]), and the store created by [WithCaptureDir] is rooted at
// rollout.RunDir(dir, runID), i.e. dir/runID, created with the configured directory mode. A store
// given with [WithStore] is used as it is (build it at rollout.RunDir yourself). runID must pass
// [rollout.ValidateRun]; construction fails otherwise, naming the value and the rule. Default "": Gym's
// layout and the run-less trace ids, unchanged. Agents use the same run id with
// [WithRolloutRunID] so that their spans join the same trace.
func WithRunID(runID string) Option {
	return optionFunc(func(c *config) { c.corr.runID = runID })
}

// WithUncorrelatedRolloutID captures calls to the three captured endpoints that name no rollout (no
// path prefix, no rollout.Header, no rollout.BaggageKey baggage) under rollout id instead of
// forwarding them uncaptured. They are logged either way, and counted by the metric
// gymtrace.capture.uncorrelated_calls ([WithMeterProvider]). id must pass [rollout.ValidateID] (SPEC §0 D12); construction fails
// otherwise. Default "": such calls are forwarded uncaptured.
func WithUncorrelatedRolloutID(id string) Option {
	return optionFunc(func(c *config) { c.corr.uncorrelated = id })
}

// serveUnprefixed serves a request without a rollout prefix: a call to a captured endpoint is
// captured under the rollout its header or baggage names (400 when invalid), else counted and
// captured under WithUncorrelatedRolloutID's id or forwarded uncaptured. Other paths go untouched.
func (h *Handler) serveUnprefixed(w http.ResponseWriter, r *http.Request) {
	dialect := CapturedDialect(r.URL.Path)
	if dialect == "" {
		h.next.ServeHTTP(w, r)
		return
	}
	id, source, err := rollout.FromRequest(r)
	if err != nil {
		status, body := InvalidRolloutIDBody(r.URL.Path, err)
		h.warnRefusedID(r, err)
		writeRefusal(w, r, status, body)
		return
	}
	if source == rollout.SourceNone {
		h.countUncorrelated(r.Context(), dialect) // gymtrace.capture.uncorrelated_calls (metrics.go)
		id = h.cfg.corr.uncorrelated
		if id == "" {
			h.cfg.logger.Warn("gymtrace capture: call to a captured endpoint names no rollout (no /ng-rollout/<id>/ prefix, no "+rollout.Header+" header, no "+rollout.BaggageKey+" baggage); forwarded uncaptured",
				"path", r.URL.Path)
			h.next.ServeHTTP(w, r)
			return
		}
		h.cfg.logger.Warn("gymtrace capture: call to a captured endpoint names no rollout (no /ng-rollout/<id>/ prefix, no "+rollout.Header+" header, no "+rollout.BaggageKey+" baggage); captured under the uncorrelated rollout id",
			"path", r.URL.Path, "rollout_id", id)
	}
	if !h.gate.Enter() {
		writeShutDown(w, r)
		return
	}
	defer h.gate.Leave()
	h.serveCaptured(w, r, id, dialect, false)
}
