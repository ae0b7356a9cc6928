package proxy

import (
	"context"
	"log/slog"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/metric"

	"github.com/gymtrace/gymtrace/rollout"
	"github.com/gymtrace/gymtrace/semconv"
)

// maxNearMissShapes bounds the shapes a handler remembers: past it, new shapes are counted but
// not logged (one line says so), so that a client sending ever new paths cannot grow memory or
// the log without end.
const maxNearMissShapes = 256

// nearMissLog logs each shape of near miss ([rollout.ClassifyNearMiss]) once and counts every
// call in gymtrace.capture.near_miss_calls. Safe for concurrent use.
type nearMissLog struct {
	mu     sync.Mutex
	seen   map[string]struct{} // shapes logged
	capped bool                // the "no further shapes logged" line was written
}

// noteNearMiss classifies r's path (SPEC §1.6) and, for a near miss, counts it and logs it when
// its shape is new. The call itself goes on as SPEC §1.6 says (forwarded as sent).
func (h *Handler) noteNearMiss(ctx context.Context, path, escaped string) {
	miss, ok := rollout.ClassifyNearMiss(path, escaped)
	if !ok {
		return
	}
	if h.metrics != nil {
		h.metrics.nearMisses.Add(ctx, 1, metric.WithAttributes(semconv.GymtraceCaptureNearMissKindKey.String(miss.Kind)))
	}
	l := &h.nearMisses
	l.mu.Lock()
	_, seen := l.seen[miss.Shape]
	logIt, logCap := !seen && len(l.seen) < maxNearMissShapes, !seen && len(l.seen) >= maxNearMissShapes && !l.capped
	if logIt {
		if l.seen == nil {
			l.seen = make(map[string]struct{})
		}
		l.seen[miss.Shape] = struct{}{}
	}
	l.capped = l.capped || logCap
	l.mu.Unlock()

	log := h.cfg.logger
	switch {
	case logIt:
		what := "call not captured: "
		if miss.Kind == rollout.NearMissEncodedSeparator {
			what = "call captured under another path than forwarded: "
		}
		log.Log(ctx, slog.LevelWarn, "gymtrace capture: "+what+miss.Reason+"; likely fix: "+miss.Fix+
			" (logged once per shape, counted in "+semconv.GymtraceCaptureNearMissCallsName+")",
			"path", escaped, "shape", miss.Shape, "kind", miss.Kind)
	case logCap:
		log.Warn("gymtrace capture: near misses of more than "+strconv.Itoa(maxNearMissShapes)+" path shapes: further shapes are counted in "+
			semconv.GymtraceCaptureNearMissCallsName+", not logged", "path", escaped, "kind", miss.Kind)
	}
}
