package capture

import (
	"bytes"
	"fmt"
	"slices"

	"go.opentelemetry.io/otel/attribute"

	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/semconv"
)

// ModelCallLines is the [LineMapping] of capture records (SPEC §3.1): a model-call span (one with a
// gymtrace.model_call.id or a gymtrace.dialect, [ModelCallRollout]) becomes the record
// line [NewSpanLine] reads from its attributes, with the span's trace_id and span_id, appended to
// <rollout_id>.capture.jsonl. A payload it cannot use whole, or a span that lost attributes to a
// count limit ([Span].DroppedAttributes > 0: a payload and its size may be among them), makes the
// record partial; every line not written whole marks the rollout incomplete (DESIGN.md "Payloads
// travel on the span"). Its key is the record's model_call_id. The zero value writes the payloads;
// it is safe for concurrent use.
type ModelCallLines struct {
	// WithoutPayloads leaves the payload attributes and their size attributes out
	// (semconv.PayloadKeys): the record's request, response, request_raw and response_raw are null
	// and the record is not partial for it (gymcapture's include_payloads: false).
	WithoutPayloads bool
	// SkipRecorded ignores model-call spans carrying gymtrace.capture.recorded = true (their
	// emitter wrote the record itself, semconv.GymtraceCaptureRecordedKey): the Writer returns
	// OutcomeIgnored without touching the file (gymcapture's skip_recorded).
	SkipRecorded bool
}

var _ LineMapping = ModelCallLines{}

// Kind returns semconv.GymtraceCaptureLineKindModelCall.
func (ModelCallLines) Kind() string { return semconv.GymtraceCaptureLineKindModelCall }

// FileSuffix returns [CaptureFileSuffix].
func (ModelCallLines) FileSuffix() string { return CaptureFileSuffix }

// MarksIncomplete returns true.
func (ModelCallLines) MarksIncomplete() bool { return true }

// Route returns the rollout id of a model-call span ([ModelCallRollout]); with SkipRecorded, a
// span its emitter recorded has none.
func (m ModelCallLines) Route(s *Span) (string, bool) {
	if s.Attributes == nil {
		return "", false
	}
	if m.SkipRecorded {
		if v, ok := s.Attributes.Lookup(string(semconv.GymtraceCaptureRecordedKey)); ok && v.Type() == attribute.BOOL && v.AsBool() {
			return "", false
		}
	}
	return ModelCallRollout(s.Attributes)
}

// NewLine reads the record of model-call span s (a *[SpanLine]); a body payload whose text is
// s.CheckedRequest or s.CheckedResponse goes into the line without a second check.
func (m ModelCallLines) NewLine(_ string, s *Span) (Line, error) {
	var look AttributeLookup = s.Attributes
	if m.WithoutPayloads {
		look = withoutPayloads{look}
	}
	var traceID, spanID string
	if s.TraceID.IsValid() {
		traceID = s.TraceID.String()
	}
	if s.SpanID.IsValid() {
		spanID = s.SpanID.String()
	}
	l, err := newSpanLine(look, s.StartTime, s.EndTime, traceID, spanID, s.CheckedRequest, s.CheckedResponse)
	if err != nil {
		return nil, err
	}
	l.dropped = s.DroppedAttributes
	return l, nil
}

// modelCallPrefix is how every record line the writers of SPEC §3.1 write begins.
var modelCallPrefix = []byte(`{"model_call_id":"`)

// KeyOf returns the model_call_id of a record line that is a strict JSON object, "" otherwise.
func (ModelCallLines) KeyOf(line []byte) string {
	if len(line) == 0 || line[0] != '{' {
		return ""
	}
	if rest, ok := bytes.CutPrefix(line, modelCallPrefix); ok {
		if i := bytes.IndexAny(rest, `"\`); i >= 0 && rest[i] == '"' {
			if !ojson.Valid(line) {
				return ""
			}
			return string(rest[:i])
		}
	}
	v, err := ojson.Parse(line)
	if err != nil {
		return ""
	}
	id, _ := v.Get("model_call_id")
	s, _ := id.AsString()
	return s
}

// withoutPayloads hides the payload attributes and their size attributes.
type withoutPayloads struct{ AttributeLookup }

// Lookup returns the value of key, or reports it absent when it is a payload or payload-size key.
func (w withoutPayloads) Lookup(key string) (attribute.Value, bool) {
	for _, k := range semconv.PayloadKeys {
		if sk, _ := semconv.PayloadSizeKey(k); key == string(k) || key == string(sk) {
			return attribute.Value{}, false
		}
	}
	return w.AttributeLookup.Lookup(key)
}

// droppedAttributesKey names the span's dropped attributes in a [Problem].
const droppedAttributesKey = "(dropped attributes)"

// Key returns the record's model_call_id, its identity in the capture file.
func (l *SpanLine) Key() string { return l.e.ModelCallID }

// Streamed reports whether the record's payloads reach [StreamedLineBytes], from which it is
// written in pieces.
func (l *SpanLine) Streamed() bool { return l.PayloadBytes() >= StreamedLineBytes }

// droppedProblem is the problem of a span that lost n attributes to a count limit.
func droppedProblem(n int) Problem {
	return Problem{Key: droppedAttributesKey, Reason: fmt.Sprintf("%d attributes dropped by a span attribute count limit", n)}
}

// IsPayload reports whether kv is one of the payload attributes of SPEC §0 "Spans"
// (gymtrace.request.body, gymtrace.request.raw, gymtrace.response.body, gymtrace.response.raw; not
// their .size attributes), the ones a lean export strips.
func IsPayload(kv attribute.KeyValue) bool { return slices.Contains(semconv.PayloadKeys, kv.Key) }
