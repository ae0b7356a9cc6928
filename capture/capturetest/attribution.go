package capturetest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
)

// This file is the suite's part on how an observation span finds its rollout (SPEC §0 D18): the
// span's gymtrace.rollout.id, else its resource's, else its trace's, else the unattributed file.

// attrTrace returns trace id n of the attribution scenarios (apart from the cases' own trace).
func attrTrace(n byte) trace.TraceID { return trace.TraceID{0xa7, 15: n} }

// unnamed returns case c's span in trace tid with span id sid, its gymtrace.rollout.id changed by
// e (dropped), and the line a writer must append for it to rollout "golden"
// once the rollout is found elsewhere: the case's line with those ids and the attribute as e left it.
func unnamed(c ObservationCase, tid trace.TraceID, id trace.SpanID, e unnamedEdit) (Span, string) {
	sp := edit(c.Span, id, e.fn)
	sp.TraceID = tid
	line := moveLine(c.Line, c.Span, tid, id)
	attr := `"` + string(semconv.GymtraceRolloutIDKey) + `":"` + obsRollout + `"`
	if e.json != "" {
		return sp, strings.Replace(line, attr, `"`+string(semconv.GymtraceRolloutIDKey)+`":`+e.json, 1)
	}
	line = strings.Replace(line, ","+attr, "", 1)
	line = strings.Replace(line, attr+",", "", 1)
	line = strings.Replace(line, `{`+attr+`}`, `{}`, 1)
	return sp, line
}

// moveLine is line (of span from) with the trace and span ids of tid and id.
func moveLine(line string, from Span, tid trace.TraceID, id trace.SpanID) string {
	line = strings.Replace(line, `"trace_id":"`+from.TraceID.String()+`"`, `"trace_id":"`+tid.String()+`"`, 1)
	return strings.Replace(line, `"span_id":"`+from.SpanID.String()+`"`, `"span_id":"`+id.String()+`"`, 1)
}

// unattributedLine is the line of the unattributed file for a span whose rollout line is line.
func unattributedLine(line, reason string) string {
	line = strings.Replace(line, `{"rollout_id":"`+obsRollout+`"`, `{"rollout_id":"`+capture.UnattributedRolloutID+`"`, 1)
	return strings.TrimSuffix(line, "}\n") + `,"unattributed_reason":"` + reason + `"}` + "\n"
}

// carrier returns a span that is no observation but names rollout rid in trace tid (as the
// proxy's model-call spans do).
func carrier(tid trace.TraceID, id trace.SpanID, rid string) Span {
	return Span{Name: "chat m", Kind: trace.SpanKindClient, Start: spanTime, End: spanTime, TraceID: tid, SpanID: id,
		Attributes: []attribute.KeyValue{attribute.String("gen_ai.operation.name", "chat"), semconv.GymtraceRolloutID(rid)}}
}

// unnamedEdit is one way for a span to name no rollout of its own, with the JSON text its line
// then keeps for the attribute ("" for none).
type unnamedEdit struct {
	fn   func(attribute.KeyValue) (attribute.KeyValue, bool)
	json string
}

// unnamedEdits are the ways a span names no rollout of its own: no attribute. (A present one that
// names no rollout, empty or not a string, is rejected: refusedIDs.)
var unnamedEdits = []unnamedEdit{
	{fn: without(semconv.GymtraceRolloutIDKey)},
}

// refusedIDs are the gymtrace.rollout.id values that name no rollout although present, on the span
// or on its resource (the span having none): each makes the span rejected (SPEC §0 D18: span, then
// resource; the span's wins), never filed under its resource's or its trace's rollout.
var refusedIDs = []struct {
	name           string
	span, resource *attribute.Value // nil: no such attribute
}{
	{name: "empty string on the span", span: ptr(attribute.StringValue(""))},
	{name: "int on the span", span: ptr(attribute.Int64Value(5))},
	{name: "int on the span, a valid id on the resource", span: ptr(attribute.Int64Value(5)), resource: ptr(attribute.StringValue(obsRollout))},
	{name: "empty string on the span, a valid id on the resource", span: ptr(attribute.StringValue("")), resource: ptr(attribute.StringValue(obsRollout))},
	{name: "int on the resource", resource: ptr(attribute.Int64Value(5))},
	{name: "empty string on the resource", resource: ptr(attribute.StringValue(""))},
}

func ptr[T any](v T) *T { return &v }

// unnamedSpans returns every case's span, in trace tid, once per way of naming no rollout, span
// ids from group, and the line each makes in rollout "golden".
func (s obsSuite) unnamedSpans(tid trace.TraceID, group int) ([]Span, []string) {
	var spans []Span
	var lines []string
	for i, c := range s.cases {
		for j, e := range unnamedEdits {
			sp, line := unnamed(c, tid, sid(group, i*len(unnamedEdits)+j), e)
			spans = append(spans, sp)
			lines = append(lines, line)
		}
	}
	return spans, lines
}

func (s obsSuite) attribution(t *testing.T) {
	golden := semconv.GymtraceRolloutID(obsRollout)
	t.Run("the resource's gymtrace.rollout.id names the rollout", func(t *testing.T) {
		tg, dir := s.start(t)
		var spans []Span
		var want strings.Builder
		for i, c := range s.cases {
			sp, line := unnamed(c, attrTrace(1), sid(0x31, i), unnamedEdits[0])
			sp.Resource = []attribute.KeyValue{attribute.String("service.name", "agent"), golden}
			spans = append(spans, sp)
			want.WriteString(line)
		}
		require.NoError(t, tg.ConsumeSpans(t.Context(), spans))
		assert.Equal(t, map[string]string{obsName(obsRollout): want.String()}, DirContents(t, dir))
	})
	t.Run("the span's gymtrace.rollout.id wins over the resource's", func(t *testing.T) {
		tg, dir := s.start(t)
		spans, want := s.all()
		for i := range spans {
			spans[i].Resource = []attribute.KeyValue{semconv.GymtraceRolloutID("other")}
		}
		require.NoError(t, tg.ConsumeSpans(t.Context(), spans))
		assert.Equal(t, map[string]string{obsName(obsRollout): want}, DirContents(t, dir))
	})
	t.Run("a span naming none inherits the rollout of an earlier span of its trace", func(t *testing.T) {
		tg, dir := s.start(t)
		spans, lines := s.unnamedSpans(attrTrace(3), 0x33)
		require.NoError(t, tg.ConsumeSpans(t.Context(), []Span{carrier(attrTrace(3), sid(0x30, 3), obsRollout)}))
		require.NoError(t, tg.ConsumeSpans(t.Context(), spans))
		assert.Equal(t, map[string]string{obsName(obsRollout): strings.Join(lines, "")}, DirContents(t, dir))
	})
	t.Run("a span naming none is held until a later span of its trace names the rollout", func(t *testing.T) {
		tg, dir := s.start(t)
		spans, lines := s.unnamedSpans(attrTrace(4), 0x34)
		require.NoError(t, tg.ConsumeSpans(t.Context(), spans[:len(spans)/2]))
		require.NoError(t, tg.ConsumeSpans(t.Context(), spans[len(spans)/2:]))
		assert.Empty(t, DirContents(t, dir), "held: no rollout yet")
		// Its root ends last, with the rollout id; other traces' spans change nothing.
		require.NoError(t, tg.ConsumeSpans(t.Context(), []Span{carrier(attrTrace(5), sid(0x30, 5), "other-trace")}))
		require.NoError(t, tg.ConsumeSpans(t.Context(), []Span{carrier(attrTrace(4), sid(0x30, 4), obsRollout)}))
		assert.Equal(t, map[string]string{obsName(obsRollout): strings.Join(lines, "")}, DirContents(t, dir), "every held span, in arrival order")
	})
	t.Run("a gymtrace.rollout.id that names no rollout is rejected, not inherited", func(t *testing.T) {
		for k, r := range refusedIDs {
			t.Run(r.name, func(t *testing.T) {
				tg, dir := s.start(t)
				f, ok := tg.(Flusher)
				require.True(t, ok, "an observation target must implement capturetest.Flusher")
				tid := attrTrace(byte(0x40 + k))
				require.NoError(t, tg.ConsumeSpans(t.Context(), []Span{carrier(tid, sid(0x30, 0x40+k), "other")}), "the trace names a rollout")
				for i, c := range s.cases {
					sp := edit(c.Span, sid(0x40+k, i), without(semconv.GymtraceRolloutIDKey))
					sp.TraceID = tid
					if r.span != nil {
						sp.Attributes = append(sp.Attributes, attribute.KeyValue{Key: semconv.GymtraceRolloutIDKey, Value: *r.span})
					}
					if r.resource != nil {
						sp.Resource = []attribute.KeyValue{{Key: semconv.GymtraceRolloutIDKey, Value: *r.resource}}
					}
					// The rejection's error, where the target returns one, is the adapter's to test.
					_ = tg.ConsumeSpans(t.Context(), []Span{sp})
				}
				require.NoError(t, f.Flush(t.Context()))
				assert.Empty(t, DirContents(t, dir), "no rollout file, no unattributed file")
			})
		}
	})
	t.Run("spans that are no observations write nothing", func(t *testing.T) {
		tg, dir := s.start(t)
		spans := []Span{
			{Name: "plain", Kind: trace.SpanKindInternal, Start: spanTime, End: spanTime, TraceID: suiteTraceID, SpanID: sid(0x22, 0),
				Attributes: []attribute.KeyValue{golden}},
			// A chat span with compacted state but no model_call id: neither a compaction (it names its
			// operation) nor a model call.
			{Name: "chat m", Kind: trace.SpanKindClient, Start: spanTime, End: spanTime, TraceID: suiteTraceID, SpanID: sid(0x22, 1),
				Attributes: []attribute.KeyValue{attribute.String("gen_ai.operation.name", "chat"), attribute.Bool("gen_ai.conversation.compacted", true), golden}},
			{Name: "execute_tool", Kind: trace.SpanKindInternal, Start: spanTime, End: spanTime, TraceID: suiteTraceID, SpanID: sid(0x22, 2),
				Attributes: []attribute.KeyValue{attribute.Int("gen_ai.operation.name", 1), golden}},
		}
		require.NoError(t, tg.ConsumeSpans(t.Context(), spans))
		for _, sp := range spans {
			require.NoError(t, tg.ConsumeSpans(t.Context(), []Span{sp}), sp.Name)
		}
		assert.Empty(t, DirContents(t, dir))
	})
	t.Run("spans whose trace names no rollout go to the unattributed file", func(t *testing.T) {
		tg, dir := s.start(t)
		f, ok := tg.(Flusher)
		require.True(t, ok, "an observation target must implement capturetest.Flusher")
		spans, lines := s.unnamedSpans(attrTrace(6), 0x36)
		require.NoError(t, tg.ConsumeSpans(t.Context(), spans))
		require.NoError(t, tg.ConsumeSpans(t.Context(), []Span{carrier(attrTrace(7), sid(0x30, 7), obsRollout)}), "another trace's rollout")
		assert.Empty(t, DirContents(t, dir), "held")
		require.NoError(t, f.Flush(t.Context()))
		var want strings.Builder
		for _, line := range lines {
			want.WriteString(unattributedLine(line, semconv.GymtraceUnattributedFlushed))
		}
		assert.Equal(t, map[string]string{capture.UnattributedObservationsFile: want.String()}, DirContents(t, dir),
			"every span once, with its reason; no rollout file")
	})
}
