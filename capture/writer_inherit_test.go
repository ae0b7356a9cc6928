package capture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/semconv"
)

// fakeClock is a trace window's clock under the test's control: advance runs the pending timer
// when its time has come, on the test's goroutine.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	at      time.Time
	pending func()
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at, c.pending = c.now.Add(d), f
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		stopped := c.pending != nil
		c.pending = nil
		return stopped
	}
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var f func()
	if c.pending != nil && !c.at.After(c.now) {
		f, c.pending = c.pending, nil
	}
	c.mu.Unlock()
	if f != nil {
		f()
	}
}

// routedLines is a TraceRouting mapping for the tests: spans with attribute obs=true are its kind;
// a line is {"rollout":..,"span":..[,"reason":..]}.
type routedLines struct{}

func (routedLines) Kind() string          { return "observation" }
func (routedLines) FileSuffix() string    { return ".t.jsonl" }
func (routedLines) MarksIncomplete() bool { return false }
func (routedLines) KeyOf([]byte) string   { return "" }

func isObs(s *Span) bool {
	if s.Attributes == nil {
		return false
	}
	v, ok := s.Attributes.Lookup("obs")
	return ok && v.AsBool()
}

func (routedLines) Route(s *Span) (string, bool) {
	if !isObs(s) {
		return "", false
	}
	return CarriedRolloutID(s)
}

func (routedLines) Unrouted(s *Span) bool {
	_, named := CarriedRolloutID(s)
	return isObs(s) && !named
}

// Detach keeps the obs attribute and a "pad" one (the held-bytes tests' weight).
func (routedLines) Detach(s *Span) Span {
	attrs := Attributes{attribute.Bool("obs", true)}
	if v, ok := s.Attributes.Lookup("pad"); ok {
		attrs = append(attrs, attribute.KeyValue{Key: "pad", Value: v})
	}
	return Span{TraceID: s.TraceID, SpanID: s.SpanID, Attributes: attrs}
}

func (routedLines) NewLine(rid string, s *Span) (Line, error) {
	return routedLine(fmt.Sprintf(`{"rollout":%q,"span":%q}`, rid, s.SpanID)), nil
}

func (routedLines) NewUnattributedLine(s *Span, reason string) (Line, error) {
	return routedLine(fmt.Sprintf(`{"rollout":%q,"span":%q,"reason":%q}`, UnattributedRolloutID, s.SpanID, reason)), nil
}

type routedLine string

func (l routedLine) Key() string                { return "" }
func (l routedLine) AppendTo(dst []byte) []byte { return append(append(dst, l...), '\n') }
func (l routedLine) Problems() Problems         { return nil }

// step is one thing a scenario does: hand a span to the writer, move the clock, flush or shut down.
type step struct {
	span     *Span // Write it
	want     Outcome
	advance  time.Duration
	flush    bool
	shutdown bool
}

func obsSpan(tid byte, id byte, attrs ...attribute.KeyValue) *Span {
	s := &Span{SpanID: trace.SpanID{7: id}, Attributes: Attributes(append([]attribute.KeyValue{attribute.Bool("obs", true)}, attrs...))}
	if tid != 0 {
		s.TraceID = trace.TraceID{15: tid}
	}
	return s
}

// callSpan is a span of another kind (a model call) that names rollout rid in trace tid.
func callSpan(tid byte, rid string) *Span {
	return &Span{TraceID: trace.TraceID{15: tid}, SpanID: trace.SpanID{7: 0xff}, Attributes: Attributes{semconv.GymtraceRolloutID(rid)}}
}

func withResource(s *Span, attrs ...attribute.KeyValue) *Span {
	s.Resource = Attributes(attrs)
	return s
}

func line(rid string, id byte) string {
	return fmt.Sprintf(`{"rollout":%q,"span":%q}`, rid, trace.SpanID{7: id}) + "\n"
}

func unattributed(id byte, reason string) string {
	return fmt.Sprintf(`{"rollout":%q,"span":%q,"reason":%q}`, UnattributedRolloutID, trace.SpanID{7: id}, reason) + "\n"
}

// TestWriterTraceInheritance: how a writer over a TraceRouting mapping finds each span's rollout
// (SPEC §0 D18): the span's attribute, its resource's, an earlier or later span of its trace, or the
// unattributed file when the window ends, is full, is flushed or shut down.
func TestWriterTraceInheritance(t *testing.T) {
	rid := semconv.GymtraceRolloutID
	const un = UnattributedRolloutID + ".t.jsonl"
	win := TraceWindow{Duration: time.Minute, MaxTraces: 2, MaxHeldSpans: 3}
	tests := []struct {
		name         string
		steps        []step
		wantFiles    map[string]string
		wantDeferred []string // "<trace byte>:<reason>:<n spans>"
		wantCounts   map[string]int64
	}{
		{
			name:      "span attribute",
			steps:     []step{{span: obsSpan(1, 1, rid("r-1")), want: OutcomeWritten}},
			wantFiles: map[string]string{"r-1.t.jsonl": line("r-1", 1)},
		},
		{
			name:      "resource attribute",
			steps:     []step{{span: withResource(obsSpan(1, 1), attribute.String("service.name", "a"), rid("r-1")), want: OutcomeWritten}},
			wantFiles: map[string]string{"r-1.t.jsonl": line("r-1", 1)},
		},
		{
			name:      "the span's attribute wins over the resource's",
			steps:     []step{{span: withResource(obsSpan(1, 1, rid("r-1")), rid("r-2")), want: OutcomeWritten}},
			wantFiles: map[string]string{"r-1.t.jsonl": line("r-1", 1)},
		},
		{
			name: "inherited from an earlier span of the trace (a model call)",
			steps: []step{
				{span: callSpan(1, "r-1"), want: OutcomeIgnored},
				{span: obsSpan(1, 1), want: OutcomeWritten},
				{span: obsSpan(1, 2), want: OutcomeWritten},
			},
			wantFiles: map[string]string{"r-1.t.jsonl": line("r-1", 1) + line("r-1", 2)},
		},
		{
			// A present gymtrace.rollout.id that names no rollout is refused, never a cue to look
			// further (TestWriterCarriedRolloutIDRefused has the messages).
			name: "an empty or mistyped id is rejected, not inherited",
			steps: []step{
				{span: callSpan(1, "r-1"), want: OutcomeIgnored},
				{span: obsSpan(1, 1, attribute.String("gymtrace.rollout.id", "")), want: OutcomeRejected},
				{span: obsSpan(1, 2, attribute.Int64("gymtrace.rollout.id", 5)), want: OutcomeRejected},
				{span: withResource(obsSpan(1, 3), attribute.Int64("gymtrace.rollout.id", 5)), want: OutcomeRejected},
				{span: withResource(obsSpan(2, 4, attribute.Int64("gymtrace.rollout.id", 5)), rid("r-1")), want: OutcomeRejected},
				{span: obsSpan(1, 5), want: OutcomeWritten},
			},
			wantFiles: map[string]string{"r-1.t.jsonl": line("r-1", 5)},
		},
		{
			name: "inherited from an earlier span of the trace through its resource",
			steps: []step{
				{span: withResource(obsSpan(1, 1), rid("r-1")), want: OutcomeWritten},
				{span: obsSpan(1, 2), want: OutcomeWritten},
			},
			wantFiles: map[string]string{"r-1.t.jsonl": line("r-1", 1) + line("r-1", 2)},
		},
		{
			name: "held until a later span of the trace names the rollout",
			steps: []step{
				{span: obsSpan(1, 1), want: OutcomeHeld},
				{span: obsSpan(1, 2), want: OutcomeHeld},
				{advance: 59 * time.Second},
				{span: callSpan(1, "r-1"), want: OutcomeIgnored},
				{span: obsSpan(1, 3), want: OutcomeWritten},
			},
			wantFiles:    map[string]string{"r-1.t.jsonl": line("r-1", 1) + line("r-1", 2) + line("r-1", 3)},
			wantDeferred: []string{"1::2"},
		},
		{
			name: "window expiry: held spans go to the unattributed file",
			steps: []step{
				{span: obsSpan(1, 1), want: OutcomeHeld},
				{advance: 30 * time.Second},
				{span: obsSpan(2, 2), want: OutcomeHeld},
				{advance: 30 * time.Second}, // trace 1's window ends
				{span: callSpan(1, "r-late"), want: OutcomeIgnored},
				{advance: 30 * time.Second}, // trace 2's
			},
			wantFiles:    map[string]string{un: unattributed(1, "no_rollout_id") + unattributed(2, "no_rollout_id")},
			wantDeferred: []string{"1:no_rollout_id:1", "2:no_rollout_id:1"},
			wantCounts:   map[string]int64{"observation/unattributed/no_rollout_id": 2},
		},
		{
			name: "a trace's rollout is forgotten a window after it was last seen",
			steps: []step{
				{span: callSpan(1, "r-1"), want: OutcomeIgnored},
				{advance: 50 * time.Second},
				{span: callSpan(1, "r-1"), want: OutcomeIgnored},
				{advance: 50 * time.Second},
				{span: obsSpan(1, 1), want: OutcomeWritten},
				{advance: time.Minute},
				{span: obsSpan(1, 2), want: OutcomeHeld},
				{flush: true},
			},
			wantFiles:    map[string]string{"r-1.t.jsonl": line("r-1", 1), un: unattributed(2, "flushed")},
			wantDeferred: []string{"1:flushed:1"},
			wantCounts:   map[string]int64{"observation/unattributed/flushed": 1},
		},
		{
			name: "more held traces than the bound: the oldest goes out",
			steps: []step{
				{span: obsSpan(1, 1), want: OutcomeHeld},
				{span: obsSpan(2, 2), want: OutcomeHeld},
				{span: obsSpan(3, 3), want: OutcomeHeld},
				{span: callSpan(2, "r-2"), want: OutcomeIgnored},
				{span: callSpan(3, "r-3"), want: OutcomeIgnored},
			},
			wantFiles:    map[string]string{un: unattributed(1, "window_full"), "r-2.t.jsonl": line("r-2", 2), "r-3.t.jsonl": line("r-3", 3)},
			wantDeferred: []string{"1:window_full:1", "2::1", "3::1"},
			wantCounts:   map[string]int64{"observation/unattributed/window_full": 1},
		},
		{
			name: "more held spans than the bound: the oldest trace goes out",
			steps: []step{
				{span: obsSpan(1, 1), want: OutcomeHeld},
				{span: obsSpan(1, 2), want: OutcomeHeld},
				{span: obsSpan(2, 3), want: OutcomeHeld},
				{span: obsSpan(2, 4), want: OutcomeHeld},
				{span: callSpan(2, "r-2"), want: OutcomeIgnored},
			},
			wantFiles:    map[string]string{un: unattributed(1, "window_full") + unattributed(2, "window_full"), "r-2.t.jsonl": line("r-2", 3) + line("r-2", 4)},
			wantDeferred: []string{"1:window_full:2", "2::2"},
			wantCounts:   map[string]int64{"observation/unattributed/window_full": 2},
		},
		{
			name:       "no trace id: unattributed at once",
			steps:      []step{{span: obsSpan(0, 1), want: OutcomeWritten}},
			wantFiles:  map[string]string{un: unattributed(1, "no_trace_id")},
			wantCounts: map[string]int64{"observation/unattributed/no_trace_id": 1},
		},
		{
			name: "shutdown writes the held spans; later ones go out at once",
			steps: []step{
				{span: callSpan(1, "r-1"), want: OutcomeIgnored},
				{span: obsSpan(2, 1), want: OutcomeHeld},
				{shutdown: true},
				{span: obsSpan(3, 2), want: OutcomeWritten},
				{span: obsSpan(1, 3), want: OutcomeWritten},
				{advance: time.Hour},
			},
			wantFiles:    map[string]string{un: unattributed(1, "flushed") + unattributed(2, "flushed"), "r-1.t.jsonl": line("r-1", 3)},
			wantDeferred: []string{"2:flushed:1"},
			wantCounts:   map[string]int64{"observation/unattributed/flushed": 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			store, err := NewStore(dir)
			require.NoError(t, err)
			clk := &fakeClock{now: time.Unix(1_800_000_000, 0)}
			var deferred []string
			mp, counts := testMeter(t)
			w, err := NewWriter(store, routedLines{}, withClock(clk), WithTraceWindow(win), WithMeterProvider(mp),
				WithDeferredResults(func(_ context.Context, d Deferred) {
					for _, r := range d.Results {
						assert.Contains(t, []Outcome{OutcomeWritten}, r.Outcome, "held span written")
						assert.Equal(t, d.Reason, r.Unattributed)
					}
					deferred = append(deferred, fmt.Sprintf("%d:%s:%d", d.TraceID[15], d.Reason, len(d.Spans)))
				}))
			require.NoError(t, err)
			for i, st := range tt.steps {
				switch {
				case st.span != nil:
					assert.Equal(t, st.want, w.Write(t.Context(), st.span).Outcome, "step %d", i)
				case st.flush:
					require.NoError(t, w.ForceFlush(t.Context()))
				case st.shutdown:
					require.NoError(t, w.Shutdown(t.Context()))
				default:
					clk.advance(st.advance)
				}
			}
			assert.Equal(t, tt.wantFiles, dirFiles(t, dir))
			assert.Equal(t, tt.wantDeferred, deferred)
			got := counts()
			for k, v := range tt.wantCounts {
				assert.Equal(t, v, got[k], k)
			}
			for k := range got {
				if strings.Contains(k, "/unattributed/") {
					assert.Contains(t, tt.wantCounts, k, "unexpected count")
				}
			}
			require.NoError(t, w.Shutdown(t.Context()))
			assert.Equal(t, tt.wantFiles, dirFiles(t, dir), "nothing was still held")
		})
	}
}

// TestWriterCarriedRolloutIDRefused: an observation span's gymtrace.rollout.id that is present
// but names no rollout — another type, or the empty string, on the span or (the span having none)
// on its resource — is rejected with the model-call path's message (SPEC §0 D18: span, then
// resource; the span's wins), never filed under the resource's or the trace's rollout.
func TestWriterCarriedRolloutIDRefused(t *testing.T) {
	rid := semconv.GymtraceRolloutID
	tests := []struct {
		name    string
		span    *Span
		want    Outcome
		wantRID string
		wantErr string // "" for none
	}{
		{name: "int on the span", span: withResource(obsSpan(1, 1, attribute.Int64("gymtrace.rollout.id", 5)), rid("r-2")),
			want: OutcomeRejected, wantErr: "capture attributes: gymtrace.rollout.id must be a string, got int64"},
		{name: "bool on the span", span: obsSpan(1, 1, attribute.Bool("gymtrace.rollout.id", true)),
			want: OutcomeRejected, wantErr: "capture attributes: gymtrace.rollout.id must be a string, got bool"},
		{name: "empty string on the span", span: withResource(obsSpan(1, 1, rid("")), rid("r-2")),
			want: OutcomeRejected, wantErr: "Invalid rollout id: ''"},
		{name: "int on the resource", span: withResource(obsSpan(1, 1), attribute.Int64("gymtrace.rollout.id", 5)),
			want: OutcomeRejected, wantErr: "capture attributes: gymtrace.rollout.id must be a string, got int64 (the span's resource attribute; the span has none)"},
		{name: "empty string on the resource", span: withResource(obsSpan(1, 1), rid("")),
			want: OutcomeRejected, wantErr: "Invalid rollout id: ''"},
		{name: "invalid string on the span", span: obsSpan(1, 1, rid("../../etc/x")),
			want: OutcomeRejected, wantRID: "../../etc/x", wantErr: "Invalid rollout id: '../../etc/x'"},
		{name: "the span's valid id wins over a mistyped resource one", span: withResource(obsSpan(1, 1, rid("r-1")), attribute.Int64("gymtrace.rollout.id", 5)),
			want: OutcomeWritten, wantRID: "r-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			store, err := NewStore(dir)
			require.NoError(t, err)
			w, err := NewWriter(store, routedLines{})
			require.NoError(t, err)
			require.Equal(t, OutcomeIgnored, w.Write(t.Context(), callSpan(1, "r-9")).Outcome, "a model call names r-9 for the trace")
			r := w.Write(t.Context(), tt.span)
			assert.Equal(t, tt.want, r.Outcome)
			assert.Equal(t, tt.wantRID, r.RolloutID)
			if tt.wantErr == "" {
				require.NoError(t, r.Err)
			} else {
				require.ErrorContains(t, r.Err, tt.wantErr)
			}
			require.NoError(t, w.Shutdown(t.Context()))
			var want map[string]string
			if tt.want == OutcomeWritten {
				want = map[string]string{tt.wantRID + ".t.jsonl": line(tt.wantRID, 1)}
			}
			assert.Equal(t, want, dirFiles(t, dir), "nothing filed under the trace's r-9, the resource's r-2 or the unattributed file")
		})
	}
}

// TestWriterTraceWindowHeldBytes: the held spans' memory is bounded by MaxHeldBytes as HeldSize
// estimates it (SPEC §0 D18): past it the oldest held trace goes to the unattributed file
// (window_full), and a span larger than the whole bound goes there at once, while the held spans
// stay held.
func TestWriterTraceWindowHeldBytes(t *testing.T) {
	pad := func(n int) attribute.KeyValue { return attribute.String("pad", strings.Repeat("x", n)) }
	one := routedLines{}.Detach(obsSpan(1, 1, pad(1000)))
	size := HeldSize(&one)
	dir := t.TempDir()
	store, err := NewStore(dir)
	require.NoError(t, err)
	clk := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	mp, counts := testMeter(t)
	w, err := NewWriter(store, routedLines{}, withClock(clk), WithMeterProvider(mp),
		WithTraceWindow(TraceWindow{MaxHeldBytes: 2 * size}))
	require.NoError(t, err)
	for _, st := range []step{
		{span: obsSpan(1, 1, pad(1000)), want: OutcomeHeld},
		{span: obsSpan(2, 2, pad(1000)), want: OutcomeHeld},
		{span: obsSpan(3, 3, pad(1000)), want: OutcomeHeld}, // trace 1 goes out
		{span: obsSpan(4, 4, pad(int(2*size))), want: OutcomeWritten},
		{span: obsSpan(2, 5), want: OutcomeHeld}, // no room beside traces 2 and 3: trace 2's span 2 goes out
	} {
		assert.Equal(t, st.want, w.Write(t.Context(), st.span).Outcome, "span %d", st.span.SpanID[7])
	}
	assert.Equal(t, map[string]string{UnattributedRolloutID + ".t.jsonl": unattributed(1, "window_full") +
		unattributed(4, "window_full") + unattributed(2, "window_full")}, dirFiles(t, dir))
	assert.Equal(t, int64(3), counts()["observation/unattributed/window_full"])
	assert.Equal(t, OutcomeIgnored, w.Write(t.Context(), callSpan(3, "r-3")).Outcome)
	assert.Equal(t, OutcomeIgnored, w.Write(t.Context(), callSpan(2, "r-2")).Outcome)
	files := dirFiles(t, dir)
	assert.Equal(t, line("r-3", 3), files["r-3.t.jsonl"])
	assert.Equal(t, line("r-2", 5), files["r-2.t.jsonl"])
	require.NoError(t, w.Shutdown(t.Context()))
}

// TestHeldSize: the estimate counts the fixed costs and every byte of text and values.
func TestHeldSize(t *testing.T) {
	tests := []struct {
		name string
		span *Span
		want int64
	}{
		{"empty span", &Span{}, heldSpanCost},
		{"name", &Span{Name: "abc"}, heldSpanCost + 3},
		{"string attribute", &Span{Attributes: Attributes{attribute.String("k", "12345")}}, heldSpanCost + heldAttrCost + 1 + 5},
		{"resource", &Span{Resource: Attributes{attribute.Int64("kk", 7)}}, heldSpanCost + heldAttrCost + 2},
		{"slices", &Span{Attributes: Attributes{
			attribute.Int64Slice("a", []int64{1, 2}), attribute.Float64Slice("b", []float64{1}),
			attribute.BoolSlice("c", []bool{true, false, true}), attribute.StringSlice("d", []string{"xy", ""}),
		}}, heldSpanCost + 4*(heldAttrCost+1) + 16 + 8 + 3 + (16 + 2) + 16},
		{"bytes, slice and map values", &Span{Attributes: Attributes{
			{Key: "b", Value: attribute.ByteSliceValue([]byte("abcd"))},
			{Key: "s", Value: attribute.SliceValue(attribute.StringValue("xyz"), attribute.IntValue(1))},
			{Key: "m", Value: attribute.MapValue(attribute.String("in", "vv"))},
		}}, heldSpanCost + 3*(heldAttrCost+1) + 4 + (heldAttrCost + 3) + heldAttrCost + (heldAttrCost + 2 + 2)},
		{"events and links", &Span{
			Events: []SpanEvent{{Name: "ev", Attributes: Attributes{attribute.String("k", "v")}}},
			Links:  []SpanLink{{}, {Attributes: Attributes{attribute.Bool("k", true)}}},
		}, heldSpanCost + heldEventCost + 2 + heldAttrCost + 2 + 2*heldLinkCost + heldAttrCost + 1},
		{"a lookup that is not Attributes counts nothing", &Span{Attributes: lookupFunc(func(string) (attribute.Value, bool) {
			return attribute.StringValue("big"), true
		})}, heldSpanCost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, HeldSize(tt.span)) })
	}
}

type lookupFunc func(string) (attribute.Value, bool)

func (f lookupFunc) Lookup(k string) (attribute.Value, bool) { return f(k) }

// TestWriterTraceWindowRealTimer: with the real clock, a held span is written out by the window's
// own timer, and Shutdown returns after it (no goroutine is left: the package's goleak check).
func TestWriterTraceWindowRealTimer(t *testing.T) {
	dir := t.TempDir()
	store, err := NewStore(dir)
	require.NoError(t, err)
	done := make(chan Deferred, 1)
	w, err := NewWriter(store, routedLines{}, WithTraceWindow(TraceWindow{Duration: time.Millisecond}),
		WithDeferredResults(func(_ context.Context, d Deferred) { done <- d }))
	require.NoError(t, err)
	assert.Equal(t, OutcomeHeld, w.Write(t.Context(), obsSpan(1, 1)).Outcome)
	d := <-done
	assert.Equal(t, semconv.GymtraceUnattributedNoRolloutID, d.Reason)
	require.NoError(t, w.Shutdown(t.Context()))
	assert.Equal(t, map[string]string{UnattributedRolloutID + ".t.jsonl": unattributed(1, "no_rollout_id")}, dirFiles(t, dir))
}

// TestUnattributedNameIsNoRolloutID: the unattributed file's name cannot be a rollout's: the id
// rule of every entry point (SPEC §0 D12) refuses it, while the store's own file-name rule (SPEC
// §2.2) reads it.
func TestUnattributedNameIsNoRolloutID(t *testing.T) {
	require.Error(t, CheckRolloutID(UnattributedRolloutID))
	require.NoError(t, ValidateRolloutID(UnattributedRolloutID))
	assert.Equal(t, "_unattributed.observations.jsonl", UnattributedObservationsFile)
}

func dirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string]string{}
	for _, de := range des {
		if de.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, de.Name()))
		require.NoError(t, err)
		out[de.Name()] = string(b)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// testMeter returns a meter provider and a reader of the unattributed counter:
// "<line_kind>/unattributed/<reason>".
func testMeter(t *testing.T) (metric.MeterProvider, func() map[string]int64) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	return sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), func() map[string]int64 {
		var rm metricdata.ResourceMetrics
		require.NoError(t, reader.Collect(t.Context(), &rm))
		out := map[string]int64{}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name != semconv.GymtraceCaptureWriterUnattributedName {
					continue
				}
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					kind, _ := dp.Attributes.Value(semconv.GymtraceCaptureLineKindKey)
					reason, _ := dp.Attributes.Value(semconv.GymtraceCaptureUnattributedReasonKey)
					out[kind.AsString()+"/unattributed/"+reason.AsString()] += dp.Value
				}
			}
		}
		return out
	}
}

// TestWriterHeldSpanWriteFailureKeepsItHeld: a held span whose release fails with an I/O error
// (its sender was answered already and will not send it again) stays held, and the next span of
// its trace that carries the rollout writes it (from a fresh-user trial: it was lost, counted
// failed once).
func TestWriterHeldSpanWriteFailureKeepsItHeld(t *testing.T) {
	dir := t.TempDir()
	var fail atomic.Bool
	fail.Store(true)
	store, err := NewStore(dir, WithWriteHook(func(path string, _ int) (int, error) {
		if strings.HasSuffix(path, "r-1.t.jsonl") && fail.Load() {
			return 0, errors.New("no space left on device")
		}
		return 0, nil
	}))
	require.NoError(t, err)
	clk := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	mp, counts := testMeter(t)
	var deferred []Outcome
	w, err := NewWriter(store, routedLines{}, withClock(clk), WithMeterProvider(mp),
		WithDeferredResults(func(_ context.Context, d Deferred) {
			for _, r := range d.Results {
				deferred = append(deferred, r.Outcome)
			}
		}))
	require.NoError(t, err)
	assert.Equal(t, OutcomeHeld, w.Write(t.Context(), obsSpan(1, 1)).Outcome)
	assert.Equal(t, OutcomeIgnored, w.Write(t.Context(), callSpan(1, "r-1")).Outcome)
	assert.Equal(t, []Outcome{OutcomeFailed}, deferred)
	fail.Store(false)
	assert.Equal(t, OutcomeIgnored, w.Write(t.Context(), callSpan(1, "r-1")).Outcome, "the retry of the span that names the rollout")
	assert.Equal(t, []Outcome{OutcomeFailed, OutcomeWritten}, deferred)
	assert.Equal(t, line("r-1", 1), dirFiles(t, dir)["r-1.t.jsonl"])
	require.NoError(t, w.Shutdown(t.Context()))
	assert.NotContains(t, dirFiles(t, dir), UnattributedRolloutID+".t.jsonl", "nothing was left held")
	assert.Empty(t, counts(), "no span went to the unattributed file")
}
