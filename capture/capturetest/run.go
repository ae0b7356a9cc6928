package capturetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
)

// concurrentBatches is the number of goroutines of the concurrency scenario.
const concurrentBatches = 8

// Run runs the conformance suite (see the package doc) against the writer newTarget builds.
// newTarget is called once per scenario, inside that scenario's subtest, with a fresh, existing,
// empty capture directory; it builds a writer over dir (for example a capture.Store on dir and an
// exporter over it) and registers its shutdown with t.Cleanup. The suite fails t's subtests on any
// difference; it never skips.
func Run(t *testing.T, newTarget func(t *testing.T, dir string) Target) {
	t.Helper()
	cases := Cases(t)
	s := suite{cases: cases, newTarget: newTarget}
	t.Run("golden lines, one rollout each", s.goldenPerRollout)
	t.Run("golden lines in order in one rollout, read back", s.goldenOneRollout)
	t.Run("one batch per span appends in order", s.batchPerSpan)
	t.Run("attribute view does not change the line", s.attributeViews)
	t.Run("spans that are not model calls are ignored", s.ignored)
	t.Run("mixed batch writes only the model calls", s.mixed)
	t.Run("model-call span without a string rollout id is rejected", s.unrouted)
	t.Run("span without ids writes no trace_id or span_id", s.noIDs)
	t.Run("unusable payload is written as null and marks the rollout", s.incomplete)
	t.Run("span that cannot be rebuilt fails alone", s.invalid)
	t.Run("concurrent batches to one rollout", s.concurrent)
	t.Run("a second record of one call is not appended", s.idempotent)
}

type suite struct {
	cases     []Case
	newTarget func(t *testing.T, dir string) Target
}

// start builds a target over a fresh directory; it returns the target and the directory.
func (s suite) start(t *testing.T) (Target, string) {
	t.Helper()
	dir := t.TempDir()
	tg := s.newTarget(t, dir)
	require.NotNil(t, tg, "newTarget returned nil")
	return tg, dir
}

// caseWith returns the first case whose span has attribute k, failing when there is none.
func (s suite) caseWith(t *testing.T, k attribute.Key) Case {
	t.Helper()
	for _, c := range s.cases {
		for _, kv := range c.Span.Attributes {
			if kv.Key == k {
				return c
			}
		}
	}
	t.Fatalf("capturetest: no golden case carries %s", k)
	return Case{}
}

func sid(group, i int) trace.SpanID {
	return trace.SpanID{0, 0, 0, 0, 0, 0, byte(group), byte(i + 1)}
}

func captureName(rid string) string { return rid + capture.CaptureFileSuffix }
func markerName(rid string) string  { return rid + capture.MarkerFileSuffix }

func (s suite) goldenPerRollout(t *testing.T) {
	tg, dir := s.start(t)
	var spans []Span
	want := map[string]string{}
	for i, c := range s.cases {
		rid := fmt.Sprintf("golden-%d", i)
		spans = append(spans, withRollout(c.Span, rid, c.Span.SpanID))
		want[captureName(rid)] = c.Line
	}
	require.NoError(t, tg.ConsumeSpans(t.Context(), spans))
	assert.Equal(t, want, DirContents(t, dir))
}

func (s suite) goldenOneRollout(t *testing.T) {
	tg, dir := s.start(t)
	var spans []Span
	var want strings.Builder
	for _, c := range s.cases {
		spans = append(spans, c.Span)
		want.WriteString(c.Line)
	}
	require.NoError(t, tg.ConsumeSpans(t.Context(), spans))
	assert.Equal(t, map[string]string{captureName("golden"): want.String()}, DirContents(t, dir))

	// Round trip: the strict readers read the file back into the golden records.
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	lines, err := store.Read("golden")
	require.NoError(t, err)
	require.Len(t, lines, len(s.cases))
	records, err := store.ReadModelCallRecords("golden")
	require.NoError(t, err)
	require.Len(t, records, len(s.cases))
	for i, c := range s.cases {
		assert.Equal(t, strings.TrimSuffix(c.Line, "\n"), string(lines[i]), c.Name)
		wantRec, err := capture.BuildModelCallRecord([]byte(c.Line), i)
		require.NoError(t, err, c.Name)
		assert.Equal(t, wantRec, records[i], c.Name)
	}
	avail, invalid, err := store.ReadAvailable("golden")
	require.NoError(t, err)
	assert.Zero(t, invalid)
	assert.Len(t, avail, len(s.cases))
	incomplete, err := store.IsIncomplete("golden")
	require.NoError(t, err)
	assert.False(t, incomplete)
}

func (s suite) batchPerSpan(t *testing.T) {
	tg, dir := s.start(t)
	var want strings.Builder
	for _, c := range s.cases {
		require.NoError(t, tg.ConsumeSpans(t.Context(), []Span{c.Span}), c.Name)
		want.WriteString(c.Line)
	}
	assert.Equal(t, map[string]string{captureName("golden"): want.String()}, DirContents(t, dir))
}

// extraAttributes are attributes a model-call span may carry that are not part of the record.
var extraAttributes = []attribute.KeyValue{
	attribute.String("http.request.method", "POST"),
	attribute.String("server.address", "127.0.0.1"),
	attribute.Int("server.port", 8000),
	attribute.Bool("gymtrace.test.flag", true),
	attribute.StringSlice("gymtrace.test.strings", []string{"a", "b"}),
	attribute.Float64Slice("gymtrace.test.floats", []float64{0.5, 1}),
	attribute.Int64Slice("gymtrace.test.ints", []int64{1, 2}),
}

func (s suite) attributeViews(t *testing.T) {
	tg, dir := s.start(t)
	var spans []Span
	var want strings.Builder
	for i, c := range s.cases {
		sp, err := exchangeSpan(&c.ex, "views", sid(2, i),
			capture.WithMessageContent(true), capture.WithConventions(semconv.GenAIConventionsLatestExperimental))
		require.NoError(t, err)
		attrs := append(append([]attribute.KeyValue(nil), extraAttributes...), sp.Attributes...)
		for l, r := 0, len(attrs)-1; l < r; l, r = l+1, r-1 {
			attrs[l], attrs[r] = attrs[r], attrs[l]
		}
		sp.Attributes = attrs
		spans = append(spans, sp)
		want.WriteString(c.Want(sp.TraceID, sp.SpanID))
	}
	require.NoError(t, tg.ConsumeSpans(t.Context(), spans))
	assert.Equal(t, map[string]string{captureName("views"): want.String()}, DirContents(t, dir))
}

// ignoredSpans are spans that are not model calls: a model-call span is one with a
// gymtrace.model_call.id or a gymtrace.dialect (capture.ModelCallRollout).
func (s suite) ignoredSpans() []Span {
	return []Span{
		{Name: "invoke_agent policy", Kind: trace.SpanKindInternal, Start: spanTime, End: spanTime, TraceID: suiteTraceID, SpanID: sid(3, 0)},
		{Name: "execute_tool", Kind: trace.SpanKindInternal, Start: spanTime, End: spanTime, TraceID: suiteTraceID, SpanID: sid(3, 4),
			Attributes: []attribute.KeyValue{semconv.GymtraceRolloutID("golden")}},
	}
}

func (s suite) ignored(t *testing.T) {
	tg, dir := s.start(t)
	for i, sp := range s.ignoredSpans() {
		require.NoError(t, tg.ConsumeSpans(t.Context(), []Span{sp}), "span %d", i)
	}
	require.NoError(t, tg.ConsumeSpans(t.Context(), s.ignoredSpans()))
	assert.Empty(t, DirContents(t, dir), "nothing is written for spans that are not model calls")
}

func (s suite) mixed(t *testing.T) {
	tg, dir := s.start(t)
	ign := s.ignoredSpans()
	a, b := s.cases[0], s.cases[len(s.cases)-1]
	spans := []Span{ign[0], a.Span, ign[1], b.Span, ign[0]}
	require.NoError(t, tg.ConsumeSpans(t.Context(), spans))
	assert.Equal(t, map[string]string{captureName("golden"): a.Line + b.Line}, DirContents(t, dir))
}

// unrouted: a model-call span whose gymtrace.rollout.id is missing or not a string is rejected
// (an error naming the key), never ignored; it names no rollout, so nothing is marked, and the
// other spans of its batch are written.
func (s suite) unrouted(t *testing.T) {
	c := s.cases[0]
	tests := []struct {
		name, wantError string
		span            Span
	}{
		{name: "rollout id missing", wantError: "gymtrace.rollout.id is required",
			span: edit(c.Span, sid(3, 1), without(semconv.GymtraceRolloutIDKey))},
		{name: "rollout id an integer", wantError: "gymtrace.rollout.id must be a string, got int64",
			span: edit(c.Span, sid(3, 3), replace(semconv.GymtraceRolloutIDKey, attribute.IntValue(7)))},
		{name: "rollout id an array", wantError: "gymtrace.rollout.id must be a string, got stringslice",
			span: edit(c.Span, sid(3, 5), replace(semconv.GymtraceRolloutIDKey, attribute.StringSliceValue([]string{"golden"})))},
		{name: "rollout id without a call id", wantError: "gymtrace.rollout.id is required",
			span: edit(edit(c.Span, sid(3, 6), without(semconv.GymtraceRolloutIDKey)), sid(3, 6), without(semconv.GymtraceModelCallIDKey))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg, dir := s.start(t)
			first := withRollout(c.Span, "good", sid(3, 7))
			err := tg.ConsumeSpans(t.Context(), []Span{first, tt.span})
			require.Error(t, err, "a model-call span that names no rollout is an error")
			assert.ErrorContains(t, err, tt.wantError)
			assert.Equal(t, map[string]string{captureName("good"): c.Want(suiteTraceID, first.SpanID)}, DirContents(t, dir),
				"the other span is written; nothing is marked")
		})
	}
}

func (s suite) noIDs(t *testing.T) {
	tg, dir := s.start(t)
	c := s.cases[0]
	sp := c.Span
	sp.TraceID, sp.SpanID = trace.TraceID{}, trace.SpanID{}
	want := c.Want(trace.TraceID{}, trace.SpanID{})
	require.NotContains(t, want, `"trace_id"`)
	require.NoError(t, tg.ConsumeSpans(t.Context(), []Span{sp}))
	assert.Equal(t, map[string]string{captureName("golden"): want}, DirContents(t, dir))
}

func (s suite) incomplete(t *testing.T) {
	reqCase := s.caseWith(t, semconv.GymtraceRequestBodyKey)
	rawCase := s.caseWith(t, semconv.GymtraceResponseRawKey)
	sizeKey := func(k attribute.Key) attribute.Key {
		sk, ok := semconv.PayloadSizeKey(k)
		require.True(t, ok, k)
		return sk
	}
	reqBody := string(reqCase.ex.Request)
	require.Greater(t, len(reqBody), 10)
	tests := []struct {
		name    string
		base    Case
		span    Span
		wantEx  func(e *capture.Exchange)
		dropped int
	}{
		{
			name:   "request body cut by a length limit",
			base:   reqCase,
			span:   edit(reqCase.Span, sid(4, 1), replace(semconv.GymtraceRequestBodyKey, attribute.StringValue(reqBody[:10]))),
			wantEx: func(e *capture.Exchange) { e.Request = nil },
		},
		{
			name:   "response raw stripped, its size kept",
			base:   rawCase,
			span:   edit(rawCase.Span, sid(4, 2), without(semconv.GymtraceResponseRawKey)),
			wantEx: func(e *capture.Exchange) { e.ResponseRaw = nil },
		},
		{
			name: "request body not a JSON object",
			base: reqCase,
			span: edit(edit(reqCase.Span, sid(4, 3), replace(semconv.GymtraceRequestBodyKey, attribute.StringValue("[1,2]"))),
				sid(4, 3), replace(sizeKey(semconv.GymtraceRequestBodyKey), attribute.Int64Value(5))),
			wantEx: func(e *capture.Exchange) { e.Request = nil },
		},
		{
			name:    "attributes dropped by a count limit",
			base:    reqCase,
			span:    reqCase.Span,
			dropped: 2,
			wantEx:  func(*capture.Exchange) {},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg, dir := s.start(t)
			sp := tt.span
			sp.DroppedAttributes = tt.dropped
			e := tt.base.ex
			tt.wantEx(&e)
			e.TraceID, e.SpanID = sp.TraceID.String(), sp.SpanID.String()
			require.NoError(t, tg.ConsumeSpans(t.Context(), []Span{sp}), "a partial record is written, not failed")
			assert.Equal(t, map[string]string{
				captureName("golden"): string(e.AppendJSON(nil)),
				markerName("golden"):  "",
			}, DirContents(t, dir))
		})
	}
}

func (s suite) invalid(t *testing.T) {
	good := s.cases[0]
	lacking := func(k attribute.Key) Span { return edit(good.Span, sid(5, 1), without(k)) }
	with := func(k attribute.Key, v attribute.Value) Span { return edit(good.Span, sid(5, 1), replace(k, v)) }
	tests := []struct {
		name      string
		span      Span
		rid       string
		wantError string
	}{
		{name: "gymtrace.dialect missing", span: lacking(semconv.GymtraceDialectKey), rid: "bad", wantError: string(semconv.GymtraceDialectKey)},
		{name: "gymtrace.latency_ms missing", span: lacking(semconv.GymtraceLatencyMSKey), rid: "bad", wantError: string(semconv.GymtraceLatencyMSKey)},
		{name: "gymtrace.latency_ms a string", span: with(semconv.GymtraceLatencyMSKey, attribute.StringValue("12.5")), rid: "bad", wantError: string(semconv.GymtraceLatencyMSKey)},
		{name: "gymtrace.model_call.id an integer", span: with(semconv.GymtraceModelCallIDKey, attribute.Int64Value(7)), rid: "bad", wantError: string(semconv.GymtraceModelCallIDKey)},
		{name: "gymtrace.model_call.id missing", span: lacking(semconv.GymtraceModelCallIDKey), rid: "bad", wantError: "gymtrace.model_call.id is required"},
		{name: "gymtrace.model_call.id empty", span: with(semconv.GymtraceModelCallIDKey, attribute.StringValue("")), rid: "bad", wantError: "gymtrace.model_call.id is empty"},
		{name: "gymtrace.dialect not a dialect", span: with(semconv.GymtraceDialectKey, attribute.StringValue("bogus")), rid: "bad", wantError: "is not a dialect: want one of responses, chat, messages"},
		{name: "gymtrace.error_category not a category", span: withAttr(good.Span, sid(5, 1), semconv.GymtraceErrorCategoryKey.String("totally_made_up")), rid: "bad", wantError: "is not an error category: want one of timeout"},
		{name: "gymtrace.model_ref.name without its type", span: lacking(semconv.GymtraceModelRefTypeKey), rid: "bad", wantError: string(semconv.GymtraceModelRefTypeKey)},
		{name: "rollout id not a safe file name", span: good.Span, rid: "../escape", wantError: "Invalid rollout id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg, dir := s.start(t)
			bad := withRollout(tt.span, tt.rid, sid(5, 1))
			first := withRollout(good.Span, "good", sid(5, 2))
			other := s.cases[1]
			last := withRollout(other.Span, "good", sid(5, 3))
			err := tg.ConsumeSpans(t.Context(), []Span{first, bad, last})
			require.Error(t, err, "a model-call span without a usable record is an error")
			assert.ErrorContains(t, err, tt.wantError)
			want := map[string]string{captureName("good"): good.Want(suiteTraceID, first.SpanID) + other.Want(suiteTraceID, last.SpanID)}
			if capture.ValidateRolloutID(tt.rid) == nil {
				want[markerName(tt.rid)] = ""
			}
			assert.Equal(t, want, DirContents(t, dir), "the other spans of the batch are written; the failed one's rollout is marked")
		})
	}
}

func (s suite) concurrent(t *testing.T) {
	tg, dir := s.start(t)
	c := s.cases[len(s.cases)/2]
	want := make([]string, concurrentBatches)
	consumeConcurrently(t, tg, func(i int) []Span {
		sp, line := withCallID(c, fmt.Sprintf("%032x", i), sid(6, i))
		want[i] = line
		return []Span{sp}
	})
	files := DirContents(t, dir)
	require.Len(t, files, 1)
	assertLinesInAnyOrder(t, want, files[captureName("golden")])
}

// consumeConcurrently hands tg concurrentBatches batches at once, batch(i) the i-th (built before
// the goroutines start), and fails t on any batch's error.
func consumeConcurrently(t *testing.T, tg Target, batch func(i int) []Span) {
	t.Helper()
	batches := make([][]Span, concurrentBatches)
	for i := range batches {
		batches[i] = batch(i)
	}
	var wg sync.WaitGroup
	errs := make([]error, concurrentBatches)
	for i, b := range batches {
		wg.Go(func() { errs[i] = tg.ConsumeSpans(context.WithoutCancel(t.Context()), b) })
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "batch %d", i)
	}
}

// assertLinesInAnyOrder checks that content is the lines of want (each ending in "\n"), whole and
// strict JSON, in any order: what concurrent batches leave.
func assertLinesInAnyOrder(t *testing.T, want []string, content string) {
	t.Helper()
	require.True(t, strings.HasSuffix(content, "\n"), "the file ends in a whole line")
	got := strings.SplitAfter(content, "\n")
	got = got[:len(got)-1]
	want = slices.Clone(want)
	slices.Sort(got)
	slices.Sort(want)
	assert.Equal(t, want, got, "every batch wrote one whole line")
	for _, l := range got {
		assert.True(t, json.Valid([]byte(l)), l)
	}
}

// idempotent: a record whose model_call_id is already in the rollout file is never appended again,
// whether the same span comes back (a sender's retry), another span of the same call comes (a
// second sender), or both race.
func (s suite) idempotent(t *testing.T) {
	tg, dir := s.start(t)
	c := s.cases[0]
	require.NoError(t, tg.ConsumeSpans(t.Context(), []Span{c.Span}))
	require.NoError(t, tg.ConsumeSpans(t.Context(), []Span{c.Span}), "a retry of a written span succeeds")
	again := c.Span
	again.SpanID = sid(7, 1)
	require.NoError(t, tg.ConsumeSpans(t.Context(), []Span{again, c.Span}))
	other := s.cases[1]
	consumeConcurrently(t, tg, func(int) []Span { return []Span{other.Span} })
	assert.Equal(t, map[string]string{captureName("golden"): c.Line + other.Line}, DirContents(t, dir),
		"one line per model call")
}

// withCallID returns c's span with model_call_id id and span id sid, and the line a writer must
// append for it.
func withCallID(c Case, id string, sid trace.SpanID) (Span, string) {
	sp := edit(c.Span, sid, replace(semconv.GymtraceModelCallIDKey, attribute.StringValue(id)))
	e := c.ex
	e.ModelCallID = id
	e.TraceID, e.SpanID = sp.TraceID.String(), sp.SpanID.String()
	return sp, string(e.AppendJSON(nil))
}
