package agentobs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
)

// ErrSpanLimits is wrapped by every error about an observation span that a tracer provider's span
// limits (sdktrace.SpanLimits, the OTEL_*_LIMIT environment variables) cut or shortened: the
// [Recorder]'s reports to otel.Handle and the rejections of [ObservationLines] (SPEC §0 D18: an
// observation is never lost or changed unseen).
var ErrSpanLimits = errors.New("agentobs: the span limits cut what an observation line keeps")

// observationOperations are the gen_ai.operation.name values of observation spans
// ([ObservationKind]); a strict prefix of one is a cut observation ([cutOperation]).
var observationOperations = []string{semconv.GenAIOperationNameInvokeAgent, semconv.GenAIOperationNameExecuteTool}

// cutOperation returns the observation operation name that the span's gen_ai.operation.name is a
// non-empty strict prefix of (e.g. "invoke_a" of "invoke_agent": an attribute value length limit
// of 8 cut it), and false for any other span. No GenAI operation name is a strict prefix of
// another observation operation, so no whole value is taken for a cut one.
func cutOperation(a capture.AttributeLookup) (string, bool) {
	if a == nil {
		return "", false
	}
	v, ok := a.Lookup(string(semconv.GenAIOperationNameKey))
	if !ok || v.Type() != attribute.STRING || v.AsString() == "" {
		return "", false
	}
	op := v.AsString()
	for _, full := range observationOperations {
		if len(op) < len(full) && strings.HasPrefix(full, op) {
			return full, true
		}
	}
	return "", false
}

// cutSpans holds, for each span the Recorder is ending whose kept attributes the span limits cut,
// the cause (wrapping ErrSpanLimits): stored just before span.End, deleted when it returns. The
// SDK runs span processors' OnEnd inside End, so an [ObservationProcessor] of the span's provider
// finds it there ([ObservationLines.NewLine]) and rejects the line.
var cutSpans sync.Map // spanKey → recorderCutCause

// recorderCutCause is what the Recorder registers for a cut span: the cause and the rollout the
// Recorder records (the span's own gymtrace.rollout.id may be cut or dropped too).
type recorderCutCause struct {
	err       error
	rolloutID string
}

// recorderCut returns the rollout and the cause the Recorder registered for span s ("", nil when
// it registered none).
func recorderCut(s *capture.Span) (rolloutID string, err error) {
	if v, ok := cutSpans.Load(spanKey{s.TraceID, s.SpanID}); ok {
		c := v.(recorderCutCause)
		return c.rolloutID, c.err
	}
	return "", nil
}

// Span-limit advice: the sdktrace.SpanLimits field and the environment variables to raise.
const (
	adviceValueLength   = "sdktrace.SpanLimits.AttributeValueLengthLimit (OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT, OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT)"
	adviceAttrCount     = "sdktrace.SpanLimits.AttributeCountLimit (OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT, OTEL_ATTRIBUTE_COUNT_LIMIT)"
	adviceEventCount    = "sdktrace.SpanLimits.EventCountLimit (OTEL_SPAN_EVENT_COUNT_LIMIT)"
	adviceLinkCount     = "sdktrace.SpanLimits.LinkCountLimit (OTEL_SPAN_LINK_COUNT_LIMIT)"
	adviceEventAttrs    = "sdktrace.SpanLimits.AttributePerEventCountLimit (OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT)"
	adviceLinkAttrs     = "sdktrace.SpanLimits.AttributePerLinkCountLimit (OTEL_LINK_ATTRIBUTE_COUNT_LIMIT)"
	adviceValueChanged  = "the span limits"
	maxReportedProblems = 8
)

// limitReport is what the span limits did to the part of one Recorder span that its observation
// line keeps. cut lists values cut or dropped (the line would be wrong: it is rejected); dropped
// lists model-call events or links dropped by a count limit (the line lacks them: it is written as
// partial, from the span's dropped counts). Each advice names a limit to raise, with the least
// value that keeps everything when known (0: unknown).
type limitReport struct {
	cut, dropped []string
	advice       map[string]int
	order        []string
}

func (r *limitReport) empty() bool { return len(r.cut) == 0 && len(r.dropped) == 0 }

func (r *limitReport) add(list *[]string, text, advice string, least int) {
	if len(*list) < maxReportedProblems {
		*list = append(*list, text)
	}
	if r.advice == nil {
		r.advice = make(map[string]int)
	}
	if _, ok := r.advice[advice]; !ok {
		r.order = append(r.order, advice)
	}
	r.advice[advice] = max(r.advice[advice], least)
}

// raise is the advice text: "raise X to at least N, Y".
func (r *limitReport) raise() string {
	parts := make([]string, len(r.order))
	for i, a := range r.order {
		parts[i] = a
		if n := r.advice[a]; n > 0 {
			parts[i] += " to at least " + strconv.Itoa(n)
		}
	}
	return "raise " + strings.Join(parts, ", ")
}

// cutError is the cause an ObservationLines rejection names, nil when nothing was cut.
func (r *limitReport) cutError() error {
	if len(r.cut) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s (the Recorder reported it to the OpenTelemetry error handler; %s)", ErrSpanLimits, strings.Join(r.cut, "; "), r.raise())
}

// error is the report for otel.Handle: the span, every problem, what the observation processor
// does with the line and the limits to raise.
func (r *limitReport) error(name string, sid trace.SpanID, rolloutID string) error {
	var what []string
	if len(r.cut) > 0 {
		what = append(what, strings.Join(r.cut, "; ")+" (an ObservationProcessor rejects its line)")
	}
	if len(r.dropped) > 0 {
		what = append(what, strings.Join(r.dropped, "; ")+" (an ObservationProcessor writes its line as partial; Recorder.Bundle keeps them)")
	}
	return fmt.Errorf("%w: span %q (span id %s) of rollout %q: %s; %s", ErrSpanLimits, name, sid, rolloutID, strings.Join(what, "; "), r.raise())
}

// checkLimits compares what the recorder gave span (attrs, events and links, in order; the span's
// own links given at start are not among links) with what span holds, for what the observation
// line keeps only: the span attributes of [spanAttributeKeys] (last value of each key), and the
// model-call reference attributes of each event and link. It reads the span only when it is an
// otel-go SDK span (sdktrace.ReadOnlySpan); any other span gives an empty report. Cost: one copy of
// the span's attributes, events and links, once per span.
func checkLimits(span trace.Span, attrs []attribute.KeyValue, events []SpanEvent, links []SpanLink) limitReport {
	var rep limitReport
	ro, ok := span.(sdktrace.ReadOnlySpan)
	if !ok || !span.IsRecording() {
		return rep
	}
	held := capture.Attributes(ro.Attributes())
	want := keep(capture.Attributes(attrs), spanAttributeKeys) // Lookup reads a key's last value, as the SDK keeps it
	for _, kv := range want {
		got, ok := held.Lookup(string(kv.Key))
		if !ok {
			rep.add(&rep.cut, string(kv.Key)+" dropped by the attribute count limit", adviceAttrCount, 0)
			continue
		}
		compareValue(&rep, string(kv.Key), kv.Value, got)
	}
	if n := ro.DroppedEvents(); n > 0 {
		rep.add(&rep.dropped, fmt.Sprintf("%d of %d gymtrace.model_call events dropped by the event count limit", n, len(events)), adviceEventCount, len(events))
	}
	gotEvents := ro.Events()
	for i, j := len(events)-1, len(gotEvents)-1; i >= 0 && j >= 0; i, j = i-1, j-1 {
		compareRef(&rep, fmt.Sprintf("gymtrace.model_call event %d: ", i), events[i].Attributes, capture.Attributes(gotEvents[j].Attributes), adviceEventAttrs)
	}
	if n := ro.DroppedLinks(); n > 0 && len(links) > 0 {
		rep.add(&rep.dropped, fmt.Sprintf("%d links dropped by the link count limit (of them up to %d model-call links)", n, min(n, len(links))), adviceLinkCount, 0)
	}
	gotLinks := ro.Links()
	for i, j := len(links)-1, len(gotLinks)-1; i >= 0 && j >= 0; i, j = i-1, j-1 {
		compareRef(&rep, fmt.Sprintf("model-call link %d: ", i), links[i].Attributes, capture.Attributes(gotLinks[j].Attributes), adviceLinkAttrs)
	}
	return rep
}

// compareRef compares the model-call reference attributes of one event or link.
func compareRef(rep *limitReport, prefix string, want, got capture.AttributeLookup, countAdvice string) {
	for _, kv := range keep(want, refAttributeKeys) {
		g, ok := got.Lookup(string(kv.Key))
		if !ok {
			rep.add(&rep.cut, prefix+string(kv.Key)+" dropped by the attribute count limit", countAdvice, 0)
			continue
		}
		compareValue(rep, prefix+string(kv.Key), kv.Value, g)
	}
}

// compareValue adds what the limits did to one value: a string or string-slice element cut to
// fewer bytes, a slice shortened, or another change.
func compareValue(rep *limitReport, name string, want, got attribute.Value) {
	switch {
	case want.Type() == attribute.STRING && got.Type() == attribute.STRING:
		if w, g := want.AsString(), got.AsString(); w != g {
			rep.add(&rep.cut, fmt.Sprintf("%s kept %d of %d bytes", name, len(g), len(w)), adviceValueLength, len(w))
		}
		return
	case want.Type() == attribute.STRINGSLICE && got.Type() == attribute.STRINGSLICE:
		w, g := want.AsStringSlice(), got.AsStringSlice()
		if len(w) != len(g) {
			rep.add(&rep.cut, fmt.Sprintf("%s kept %d of %d elements", name, len(g), len(w)), adviceValueChanged, 0)
			return
		}
		for i := range w {
			if w[i] != g[i] {
				rep.add(&rep.cut, fmt.Sprintf("%s[%d] kept %d of %d bytes", name, i, len(g[i]), len(w[i])), adviceValueLength, len(w[i]))
			}
		}
		return
	}
	if want.Type() != got.Type() || want.Emit() != got.Emit() {
		rep.add(&rep.cut, fmt.Sprintf("%s changed from %s to %s", name, want.Emit(), got.Emit()), adviceValueChanged, 0)
	}
}

// endSpan ends the entry's span at end. When the span limits changed what its observation line
// keeps (rep, from checkLimits while e.mu was held), it reports that to otel.Handle and, for a cut
// value, registers the cause while the span's processors run, so that an [ObservationProcessor]
// rejects the line instead of writing a wrong one.
func (e *entry) endSpan(rolloutID string, rep limitReport, opts ...trace.SpanEndOption) {
	if rep.empty() {
		e.span.End(opts...)
		return
	}
	otel.Handle(rep.error(e.name, e.spanID, rolloutID))
	if err := rep.cutError(); err != nil {
		k := spanKey{e.traceID, e.spanID}
		cutSpans.Store(k, recorderCutCause{err: err, rolloutID: rolloutID})
		defer cutSpans.Delete(k)
	}
	e.span.End(opts...)
}
