package agentobs

import (
	"errors"
	"fmt"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/semconv"
)

// UnattributedSummary is what the unattributed file of a capture directory,
// _unattributed.observations.jsonl ([capture.UnattributedObservationsFile], SPEC §0 D18), holds:
// the observation spans no rollout could be found for.
type UnattributedSummary struct {
	// Exists reports whether the file exists.
	Exists bool
	// Spans counts its lines that decode ([DecodeObservationLine]), Traces their distinct trace ids.
	Spans, Traces int
	// Damaged counts the non-blank lines that do not decode.
	Damaged int
	// Reasons counts the decoded lines by their "unattributed_reason" (a
	// semconv.GymtraceUnattributed* value; "" for a line without one). Nil when Spans is 0.
	Reasons map[string]int
}

// Empty reports whether the file holds no line at all (missing, or only blank lines).
func (u UnattributedSummary) Empty() bool { return u.Spans == 0 && u.Damaged == 0 }

// ReadUnattributed reads the unattributed file of store's directory with the tolerant rules of
// [ReadObservations] and summarizes it. A missing file is the zero summary and no error; err
// reports an I/O failure. Safe for concurrent use.
func ReadUnattributed(store *capture.Store) (UnattributedSummary, error) {
	if store == nil {
		return UnattributedSummary{}, errors.New("agentobs: read unattributed: store is nil")
	}
	raw, invalid, exists, err := store.ReadObservations(capture.UnattributedRolloutID)
	if err != nil {
		return UnattributedSummary{}, fmt.Errorf("agentobs: %w", err)
	}
	u := UnattributedSummary{Exists: exists, Damaged: invalid}
	traces := make(map[string]bool)
	for _, r := range raw {
		reason := unattributedReason(r.Line)
		l, err := DecodeObservationLine(r.Line)
		if err != nil && reason != semconv.GymtraceUnattributedNoTraceID {
			// A span without a valid trace id is written with the all-zero id, which the
			// observation line's decoder refuses; it is still one unattributed span, of no trace.
			u.Damaged++
			continue
		}
		if u.Reasons == nil {
			u.Reasons = make(map[string]int)
		}
		u.Spans++
		if err == nil {
			traces[l.TraceID.String()] = true
		}
		u.Reasons[reason]++
	}
	u.Traces = len(traces)
	return u, nil
}

// unattributedReason returns the "unattributed_reason" string of a line that decoded, "" without one.
func unattributedReason(line []byte) string {
	v, err := ojson.Parse(line)
	if err != nil {
		return ""
	}
	r, _ := v.Get("unattributed_reason")
	s, _ := r.AsString()
	return s
}
