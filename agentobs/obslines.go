package agentobs

import (
	"errors"
	"fmt"
	"time"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/semconv"
)

// ObservationLines is the [capture.LineMapping] of the observations file: an observation span
// ([ObservationKind]) that names its rollout — a gymtrace.rollout.id on the span or, when the span
// has none, on its resource ([capture.CarriedRolloutID], SPEC §0 D18) — becomes its
// [ObservationLine], appended to <rollout_id>.observations.jsonl beside the capture file; one whose
// id is present but is not a string, or is empty, is rejected naming the key and its type, as a
// model-call span's is (never filed under its resource's or its trace's rollout). Other spans are
// ignored. It is a [capture.TraceRouting] mapping: an observation span without a gymtrace.rollout.id
// takes its trace's (the writer's trace window, SPEC §0 D18) or goes to
// _unattributed.observations.jsonl ([capture.UnattributedObservationsFile]) with its reason. A line is identified
// by its span (trace_id and span_id): a span whose line is already in the file (a sender's retry) is
// not appended again, as [BundleFromSpans] would keep only the first line of a span anyway. Lines
// not written mark nothing: the incomplete marker speaks for the capture file only.
//
// Span limits (SPEC §0 D18: an observation is never lost or changed unseen). A span whose
// gen_ai.operation.name is a non-empty strict prefix of an observation operation ("invoke_a" of
// invoke_agent: an attribute value length limit cut it) is taken for a cut observation span, not
// ignored: routed like one and rejected, naming the cut value and the limit ([ErrSpanLimits]). So
// is a [Recorder] span whose kept attributes the limits cut or dropped (the Recorder finds that
// when the span ends and tells the processors of its provider; see [Recorder]). A span that lost
// events, links or attributes to a count limit (its dropped counts) is written as it is, with the
// counts in the line, and is partial ([capture.OutcomePartial]; [capture.Problems] "dropped_events",
// "dropped_links", "dropped_attributes"). Other cuts of a span not made by a Recorder in this
// process (a string shortened by a length limit) cannot be told from a whole value and are written.
//
// The zero value is ready to use and safe for concurrent use.
type ObservationLines struct{}

var _ capture.TraceRouting = ObservationLines{}

// Kind returns semconv.GymtraceCaptureLineKindObservation.
func (ObservationLines) Kind() string { return semconv.GymtraceCaptureLineKindObservation }

// FileSuffix returns [capture.ObservationsFileSuffix].
func (ObservationLines) FileSuffix() string { return capture.ObservationsFileSuffix }

// MarksIncomplete returns false.
func (ObservationLines) MarksIncomplete() bool { return false }

// observationOrCut reports whether s is an observation span ([ObservationKind]) or a cut one
// ([cutOperation]; or a Recorder span the span limits cut, whose operation name may be gone).
func observationOrCut(s *capture.Span) bool {
	if _, ok := ObservationKind(s.Attributes); ok {
		return true
	}
	if _, cut := cutOperation(s.Attributes); cut {
		return true
	}
	_, err := recorderCut(s)
	return err != nil
}

// Route returns the rollout id an observation span (or a cut one) names ([capture.CarriedRolloutID]: the span's
// gymtrace.rollout.id, else its resource's), when its trace id is valid: a span without one goes to
// the unattributed file (reason no_trace_id, SPEC §0 D18) even when it names a rollout, since an
// observation line is identified by its trace and span ids and the readers refuse a line whose
// ids are all zeros.
//
// A Recorder span the span limits cut is routed to the Recorder's rollout whatever the span kept
// (its rollout id may be cut or dropped too), so that its line is rejected with the cause, never
// ignored, held or written to another file.
func (ObservationLines) Route(s *capture.Span) (string, bool) {
	if rid, err := recorderCut(s); err != nil && s.TraceID.IsValid() {
		return rid, true
	}
	if !observationOrCut(s) || !s.TraceID.IsValid() {
		return "", false
	}
	return capture.CarriedRolloutID(s)
}

// Unrouted reports whether s is an observation span that names no rollout, or has no valid trace
// id.
func (ObservationLines) Unrouted(s *capture.Span) bool {
	if !observationOrCut(s) {
		return false
	}
	_, named := capture.CarriedRolloutID(s)
	return !named || !s.TraceID.IsValid()
}

// Detach returns the span as its line keeps it ([ObservationLine.Span] of [NewObservationLine]) and
// its dropped attribute count, in memory of its own.
func (ObservationLines) Detach(s *capture.Span) capture.Span {
	d := NewObservationLine("", *s).Span()
	d.DroppedAttributes = s.DroppedAttributes
	return d
}

// NewUnattributedLine returns the span's line for _unattributed.observations.jsonl: its
// [ObservationLine] with rollout_id "_unattributed" ([capture.UnattributedRolloutID]) and one more
// key at the end, "unattributed_reason" (reason, a semconv.GymtraceUnattributed* value). It never
// fails like NewLine.
func (ObservationLines) NewUnattributedLine(s *capture.Span, reason string) (capture.Line, error) {
	if err := checkLine(s); err != nil {
		return nil, err
	}
	return observationLine{l: NewObservationLine(capture.UnattributedRolloutID, *s), reason: reason, problems: droppedProblems(s)}, nil
}

// NewLine returns the span's [ObservationLine], with the problems of its dropped counts (see
// [ObservationLines]). It fails for a span without a valid span id, for one with a time its line
// cannot hold (before 1677 or after 2554, see [ObservationLine]; no OTLP timestamp is), and for a
// span the span limits cut (an error wrapping [ErrSpanLimits]).
func (ObservationLines) NewLine(rolloutID string, s *capture.Span) (capture.Line, error) {
	if err := checkLine(s); err != nil {
		return nil, err
	}
	return observationLine{l: NewObservationLine(rolloutID, *s), problems: droppedProblems(s)}, nil
}

// checkLine refuses a span whose line cannot be made (checkSpanID, checkTimes) or would be wrong: a
// cut operation name, or a Recorder span the span limits cut.
func checkLine(s *capture.Span) error {
	if err := checkSpanID(s); err != nil {
		return err
	}
	if err := checkTimes(s); err != nil {
		return err
	}
	if full, ok := cutOperation(s.Attributes); ok {
		v, _ := s.Attributes.Lookup(string(semconv.GenAIOperationNameKey))
		return fmt.Errorf("%w: span %q: %s %q is a strict prefix of %q: the producer's attribute value length limit cut it (raise %s to at least %d)",
			ErrSpanLimits, s.Name, semconv.GenAIOperationNameKey, v.AsString(), full, adviceValueLength, len(full))
	}
	if _, err := recorderCut(s); err != nil {
		return fmt.Errorf("span %q: %w", s.Name, err)
	}
	return nil
}

// droppedProblems lists the span's dropped counts as the line's problems.
func droppedProblems(s *capture.Span) capture.Problems {
	var p capture.Problems
	add := func(key string, n int, what, advice string) {
		if n > 0 {
			p = append(p, capture.Problem{Key: key, Reason: fmt.Sprintf("%d %s (raise %s)", n, what, advice)})
		}
	}
	add("dropped_events", s.DroppedEvents, "events dropped by the producer's span limits: the line lacks them and the model-call references they held", adviceEventCount)
	add("dropped_links", s.DroppedLinks, "links dropped by the producer's span limits: the line lacks them and the model-call references they held", adviceLinkCount)
	add("dropped_attributes", s.DroppedAttributes, "span attributes dropped by the producer's span limits: the line may lack some it keeps", adviceAttrCount)
	return p
}

// checkTimes refuses a span with a time its line cannot hold (an [ObservationLine] time: int64
// nanoseconds before the epoch, uint64 after it; every OTLP timestamp fits), naming the time. Only
// an SDK span can carry one (a time.Time before 1677 or after 2554).
func checkTimes(s *capture.Span) error {
	check := func(what string, t time.Time) error {
		if t.IsZero() || timeInLine(t) {
			return nil
		}
		return fmt.Errorf("span %q: %s %s is outside what an observation line holds (%s to %s: the nanoseconds since the Unix epoch of an int64 before it, of an OTLP uint64 after it)",
			s.Name, what, t.UTC().Format(time.RFC3339Nano), minLineTime.UTC().Format(time.RFC3339Nano), maxLineTime.UTC().Format(time.RFC3339Nano))
	}
	errs := []error{check("start time", s.StartTime), check("end time", s.EndTime)}
	for i, e := range s.Events {
		if e.Name == semconv.GymtraceModelCallEventName { // the only events the line keeps
			errs = append(errs, check(fmt.Sprintf("event %d's time", i), e.Time))
		}
	}
	return errors.Join(errs...)
}

// checkSpanID refuses an observation span whose span id is not valid (all zeros): its line could
// not be told from a retry of another, and the readers refuse it (SPEC §0 D18).
func checkSpanID(s *capture.Span) error {
	if s.SpanID.IsValid() {
		return nil
	}
	return fmt.Errorf("observation span %q has no valid span id (all zeros): an observation line is identified by its trace and span ids", s.Name)
}

// KeyOf returns the span identity (trace_id and span_id) of an observation line that is a strict
// JSON object, "" otherwise.
func (ObservationLines) KeyOf(line []byte) string {
	v, err := ojson.Parse(line)
	if err != nil {
		return ""
	}
	tid, _ := v.Get("trace_id")
	sid, _ := v.Get("span_id")
	t, ok1 := tid.AsString()
	s, ok2 := sid.AsString()
	if !ok1 || !ok2 || t == "" || s == "" {
		return ""
	}
	return t + s
}

// observationLine is an ObservationLine as a capture.Line, with the reason of an unattributed one
// and the problems of its span's dropped counts.
type observationLine struct {
	l        ObservationLine
	reason   string
	problems capture.Problems
}

// Key is the span's trace_id and span_id as the line writes them; a span without a valid trace id
// (an unattributed no_trace_id line) is keyed by its span id after the all-zero trace id, so a
// retry of it is not appended again either.
func (o observationLine) Key() string {
	if !o.l.SpanID.IsValid() {
		return ""
	}
	return o.l.TraceID.String() + o.l.SpanID.String()
}

func (o observationLine) AppendTo(dst []byte) []byte {
	dst = o.l.AppendJSON(dst)
	if o.reason == "" {
		return dst
	}
	dst = append(dst[:len(dst)-2], `,"unattributed_reason":`...) // drop "}\n"
	dst = ojson.AppendString(dst, o.reason)
	return append(dst, "}\n"...)
}
func (o observationLine) Problems() capture.Problems { return o.problems }
