package capture

import (
	"fmt"

	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/semconv"
)

// AttachmentKey is the rollout-record key under which the attachment is stored (SPEC §5).
const AttachmentKey = "ng_model_call_capture"

// Gap codes the attachment reports about the capture itself (SPEC §5.3), in evaluation order.
const (
	// GapNoRecords: no store has a capture file or marker for the rollout, or the file holds no
	// line at all (no valid call, no invalid line) and there is no marker.
	GapNoRecords = semconv.GapCaptureNoRecords
	// GapRecordsUnreadable: some non-blank lines could not be read as records; Detail is "count=<n>".
	GapRecordsUnreadable = semconv.GapCaptureRecordsUnreadable
	// GapIncomplete: the incomplete marker exists (at least one capture write failed).
	GapIncomplete = semconv.GapCaptureIncomplete
	// GapUnreadable: reading the capture failed (an I/O error); the attachment then has no calls.
	GapUnreadable = semconv.GapCaptureUnreadable
)

// Gap is one entry of the attachment's "gaps" list (SPEC §5.1, §5.3). In this list a gap is written
// with its null fields omitted, so an empty InvocationID or Detail is left out of the JSON.
type Gap struct {
	Code         string // gap code, e.g. [GapNoRecords]
	InvocationID string // agent invocation the gap belongs to; "" = none (omitted)
	Detail       string // free-form detail such as "count=2"; "" = none (omitted)
}

// AppendJSON appends the gap as a JSON object with keys code, invocation_id, detail in that order,
// leaving out empty optional fields (SPEC §5.1: null keys omitted), encoded like orjson.
func (g Gap) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"code":`...)
	dst = ojson.AppendString(dst, g.Code)
	if g.InvocationID != "" {
		dst = append(dst, `,"invocation_id":`...)
		dst = ojson.AppendString(dst, g.InvocationID)
	}
	if g.Detail != "" {
		dst = append(dst, `,"detail":`...)
		dst = ojson.AppendString(dst, g.Detail)
	}
	return append(dst, '}')
}

// Attachment is the ng_model_call_capture value of one rollout (SPEC §5.1): the rollout's captured
// calls as ModelCallRecords in capture-index order, their aggregated metrics (SPEC §5.2) and the
// capture gaps (SPEC §5.3). Later stages may append gaps (e.g. agent_observation_join_failed,
// trajectory_projection_failed) before encoding.
type Attachment struct {
	RolloutID string
	Metrics   Metrics
	Calls     []ModelCallRecord
	Gaps      []Gap
	// IncludePayloads keeps request, response, request_raw and response_raw in each encoded call
	// (SPEC §5.1, §5.5); false leaves those four keys out.
	IncludePayloads bool
}

// BuildAttachment builds the attachment of rolloutID from the first store holding a capture file or
// marker for it (SPEC §2.6 _store_for_rollout; stores in configuration order), following SPEC §5.3:
//   - no such store: no calls, gap [GapNoRecords];
//   - otherwise the tolerant record reader ([Store.ReadAvailableModelCallRecords]) gives the calls;
//     invalid lines add [GapRecordsUnreadable] with detail "count=<n>"; then the marker adds
//     [GapIncomplete], or, without a marker, a capture without any line adds [GapNoRecords];
//   - a read or marker-lookup failure empties the calls and adds [GapUnreadable] (gaps found before
//     the failure stay).
//
// A store whose lookup itself fails (a stat error other than "not found") counts as holding the
// capture, so the failure surfaces as [GapUnreadable], not as a silent [GapNoRecords]. With no
// stores the result is the [GapNoRecords] attachment (callers with capture disabled skip the
// merge, SPEC §5). Metrics are [Aggregate] of the calls read (SPEC §0 D14).
//
// The only error is an invalid rolloutID ([ErrInvalidRolloutID]), which Gym raises too; every capture
// problem is reported as a gap. Safe for concurrent use.
func BuildAttachment(stores []*Store, rolloutID string, includePayloads bool) (Attachment, error) {
	if err := ValidateRolloutID(rolloutID); err != nil {
		return Attachment{}, fmt.Errorf("capture attachment: %w", err)
	}
	a := Attachment{RolloutID: rolloutID, IncludePayloads: includePayloads}
	store := StoreForRollout(stores, rolloutID)
	if store == nil {
		a.Gaps = append(a.Gaps, Gap{Code: GapNoRecords})
	} else {
		calls, invalid, err := store.ReadAvailableModelCallRecords(rolloutID)
		if err == nil {
			if invalid > 0 {
				a.Gaps = append(a.Gaps, Gap{Code: GapRecordsUnreadable, Detail: fmt.Sprintf("count=%d", invalid)})
			}
			var incomplete bool
			incomplete, err = store.IsIncomplete(rolloutID)
			switch {
			case err != nil:
			case incomplete:
				a.Gaps = append(a.Gaps, Gap{Code: GapIncomplete})
			case len(calls) == 0 && invalid == 0:
				a.Gaps = append(a.Gaps, Gap{Code: GapNoRecords})
			}
		}
		if err != nil {
			calls = nil
			a.Gaps = append(a.Gaps, Gap{Code: GapUnreadable})
		}
		a.Calls = calls
	}
	a.Metrics = Aggregate(a.Calls)
	return a, nil
}

// StoreForRollout returns the first of stores that has id's capture file or marker, or whose
// lookup fails ([Store.HasCapture]); nil when none has them. It is SPEC §2.6's _store_for_rollout,
// the store [BuildAttachment] reads. Nil stores are skipped.
func StoreForRollout(stores []*Store, id string) *Store {
	for _, s := range stores {
		if s == nil {
			continue
		}
		if ok, err := s.HasCapture(id); ok || err != nil {
			return s
		}
	}
	return nil
}

// AppendJSON appends the attachment as the exact SPEC §5.1 object: keys rollout_id, metrics, calls
// and gaps in that order; every call is the full SPEC §3.2 dump (nulls included, payload keys only
// when IncludePayloads); gaps with null fields omitted; the gaps key left out when there are none.
// Strings and floats are encoded like orjson.
func (a Attachment) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"rollout_id":`...)
	dst = ojson.AppendString(dst, a.RolloutID)
	dst = append(dst, `,"metrics":`...)
	dst = a.Metrics.AppendJSON(dst)
	dst = append(dst, `,"calls":[`...)
	for i := range a.Calls {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = a.Calls[i].AppendJSON(dst, a.IncludePayloads)
	}
	dst = append(dst, ']')
	if len(a.Gaps) > 0 {
		dst = append(dst, `,"gaps":[`...)
		for i, g := range a.Gaps {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = g.AppendJSON(dst)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}
