package capture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/semconv"
)

// writerSpan is a model-call span of rollout rid whose record has model_call_id callID.
func writerSpan(rid, callID string) *Span {
	e := perfCases()[0].exchange()
	e.ModelCallID = callID
	start, _ := TimeFromUnixSeconds(e.StartedAt)
	end, _ := TimeFromUnixSeconds(e.CompletedAt)
	attrs := append(Attributes{semconv.GymtraceRolloutID(rid)}, ExchangeAttributes(&e)...)
	return &Span{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, Kind: trace.SpanKindClient,
		StartTime: start, EndTime: end, Attributes: attrs,
	}
}

// writerLine is the line a Writer appends for writerSpan(rid, callID).
func writerLine(t testing.TB, rid, callID string) string {
	t.Helper()
	l, err := ModelCallLines{}.NewLine(rid, writerSpan(rid, callID))
	require.NoError(t, err)
	return string(l.AppendTo(nil))
}

// meteredWriter returns a record Writer over s and a reader of its metrics.
func meteredWriter(t *testing.T, s *Store) (*Writer, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	w, err := NewWriter(s, ModelCallLines{}, WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	require.NoError(t, err)
	return w, reader
}

// writerCounts reads the writer's counters: "spans/<outcome>", "duplicates" and "bytes".
func writerCounts(t *testing.T, r *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(t.Context(), &rm))
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		require.Equal(t, meterName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			require.True(t, ok, m.Name)
			for _, dp := range sum.DataPoints {
				kind, _ := dp.Attributes.Value(semconv.GymtraceCaptureLineKindKey)
				require.Equal(t, semconv.GymtraceCaptureLineKindModelCall, kind.AsString())
				name := strings.TrimPrefix(m.Name, "gymtrace.capture.writer.")
				if o, ok := dp.Attributes.Value(semconv.GymtraceCaptureOutcomeKey); ok {
					name += "/" + o.AsString()
				}
				out[name] += dp.Value
			}
		}
	}
	return out
}

func fileOf(t *testing.T, s *Store, rid string) string {
	t.Helper()
	b, err := os.ReadFile(s.capturePath(rid))
	require.NoError(t, err)
	return string(b)
}

// Every outcome, with its marker and its count.
func TestWriterOutcomes(t *testing.T) {
	s := newTestStore(t)
	w, reader := meteredWriter(t, s)
	ctx := t.Context()

	r := w.Write(ctx, writerSpan("ok", "a"))
	assert.Equal(t, Result{Outcome: OutcomeWritten, RolloutID: "ok"}, r)

	r = w.Write(ctx, &Span{Attributes: Attributes{semconv.GymtraceRolloutID("ok")}})
	assert.Equal(t, Result{Outcome: OutcomeIgnored}, r)
	assert.Equal(t, OutcomeIgnored, w.Write(ctx, &Span{}).Outcome, "a span without attributes")

	r = w.Write(ctx, writerSpan("../x", "b"))
	assert.Equal(t, OutcomeRejected, r.Outcome)
	require.ErrorIs(t, r.Err, ErrInvalidRolloutID)

	bad := writerSpan("bad", "c")
	bad.Attributes = append(Attributes{}, bad.Attributes.(Attributes)...)
	bad.Attributes = append(bad.Attributes.(Attributes), semconv.GymtraceLatencyMSKey.String("x"))
	r = w.Write(ctx, bad)
	assert.Equal(t, OutcomeRejected, r.Outcome)
	assert.ErrorContains(t, r.Err, string(semconv.GymtraceLatencyMSKey))

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	r = w.Write(cancelled, writerSpan("late", "d"))
	assert.Equal(t, OutcomeFailed, r.Outcome)
	require.ErrorIs(t, r.Err, context.Canceled)

	partial := writerSpan("part", "e")
	partial.DroppedAttributes = 2
	r = w.Write(ctx, partial)
	assert.Equal(t, OutcomePartial, r.Outcome)
	var p Problems
	require.ErrorAs(t, r.Err, &p)
	assert.Equal(t, droppedAttributesKey, p[0].Key)

	r = w.Discard(ctx, writerSpan("gone", "f"), errors.New("shut down"))
	assert.Equal(t, OutcomeFailed, r.Outcome)
	assert.Equal(t, OutcomeIgnored, w.Discard(ctx, &Span{}, errors.New("shut down")).Outcome)

	for rid, want := range map[string]bool{"ok": false, "bad": true, "late": true, "part": true, "gone": true} {
		got, err := s.IsIncomplete(rid)
		require.NoError(t, err)
		assert.Equal(t, want, got, rid)
	}
	n := int64(len(writerLine(t, "ok", "a")) + len(writerLine(t, "part", "e")))
	assert.Equal(t, map[string]int64{
		"spans/written": 1, "spans/ignored": 3, "spans/rejected": 2, "spans/failed": 2, "spans/partial": 1,
		"bytes": n,
	}, writerCounts(t, reader))
}

// A record whose model_call_id is in the file is not appended again: in turn, concurrently, and
// after a plain Store.Append of the same line.
func TestWriterIdempotentInProcess(t *testing.T) {
	s := newTestStore(t)
	w, reader := meteredWriter(t, s)
	sp := writerSpan("r", "a")
	for range 3 {
		assert.Equal(t, OutcomeWritten, w.Write(t.Context(), sp).Outcome)
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() { assert.Equal(t, OutcomeWritten, w.Write(context.Background(), writerSpan("r", "b")).Outcome) })
	}
	wg.Wait()
	require.NoError(t, s.Append(t.Context(), "r", []byte(writerLine(t, "r", "c"))))
	assert.Equal(t, OutcomeWritten, w.Write(t.Context(), writerSpan("r", "c")).Outcome)
	assert.Equal(t, writerLine(t, "r", "a")+writerLine(t, "r", "b")+writerLine(t, "r", "c"), fileOf(t, s, "r"))
	c := writerCounts(t, reader)
	assert.Equal(t, int64(2+15+1), c["duplicates"])
	assert.Equal(t, int64(3+16+1), c["spans/written"])
}

// Two Stores on one directory (separate descriptors, separate indexes) see each other's records:
// the index reads the tail another writer appended.
func TestWriterIdempotentTwoStores(t *testing.T) {
	s1 := newTestStore(t)
	s2, err := NewStore(s1.Dir())
	require.NoError(t, err)
	w1, _ := meteredWriter(t, s1)
	w2, _ := meteredWriter(t, s2)
	ctx := t.Context()
	for _, step := range []struct {
		w  *Writer
		id string
	}{{w1, "a"}, {w2, "a"}, {w2, "b"}, {w1, "b"}, {w1, "c"}, {w2, "c"}, {w2, "a"}} {
		assert.Equal(t, OutcomeWritten, step.w.Write(ctx, writerSpan("r", step.id)).Outcome, step.id)
	}
	assert.Equal(t, writerLine(t, "r", "a")+writerLine(t, "r", "b")+writerLine(t, "r", "c"), fileOf(t, s1, "r"))
}

// A cleared (removed and recreated) file is another file: its index is rebuilt, so the call is
// written again.
func TestWriterIndexFollowsClear(t *testing.T) {
	s := newTestStore(t)
	w, _ := meteredWriter(t, s)
	require.Equal(t, OutcomeWritten, w.Write(t.Context(), writerSpan("r", "a")).Outcome)
	require.NoError(t, s.Clear("r"))
	require.Equal(t, OutcomeWritten, w.Write(t.Context(), writerSpan("r", "a")).Outcome)
	assert.Equal(t, writerLine(t, "r", "a"), fileOf(t, s, "r"))
}

// A torn line (a crashed writer's, SPEC §0 D7) is no record: its call is written after the repair
// newline; a line that is not strict JSON is no record either.
func TestWriterTornLineIsNoKey(t *testing.T) {
	s := newTestStore(t)
	full := writerLine(t, "r", "a")
	torn := full[:40]
	invalid := strings.Replace(writerLine(t, "r", "b"), `"dialect"`, `'dialect'`, 1)
	require.NoError(t, os.WriteFile(s.capturePath("r"), []byte(invalid+torn), 0o600))
	w, _ := meteredWriter(t, s)
	require.Equal(t, OutcomeWritten, w.Write(t.Context(), writerSpan("r", "a")).Outcome)
	require.Equal(t, OutcomeWritten, w.Write(t.Context(), writerSpan("r", "b")).Outcome)
	assert.Equal(t, invalid+torn+"\n"+full+writerLine(t, "r", "b"), fileOf(t, s, "r"))
}

// A commit that fails after its write (the fsync) leaves the line in the file; the retry finds it
// and appends nothing, so the file holds the call once.
func TestWriterRetryAfterFailedSync(t *testing.T) {
	fail := true
	s := newTestStore(t, WithSyncHook(func(string) error {
		if fail {
			fail = false
			return errors.New("transient input/output error")
		}
		return nil
	}))
	w, reader := meteredWriter(t, s)
	r := w.Write(t.Context(), writerSpan("r", "a"))
	require.Equal(t, OutcomeFailed, r.Outcome)
	assert.Equal(t, OutcomeWritten, w.Write(t.Context(), writerSpan("r", "a")).Outcome)
	assert.Equal(t, writerLine(t, "r", "a"), fileOf(t, s, "r"))
	assert.Equal(t, int64(1), writerCounts(t, reader)["duplicates"])
}

// A write that is cut back (ENOSPC) takes its key back: the retry appends the line.
func TestWriterRetryAfterCutBack(t *testing.T) {
	fail := true
	s := newTestStore(t, WithWriteHook(func(_ string, size int) (int, error) {
		if fail {
			fail = false
			return size / 2, errors.New("no space left on device")
		}
		return size, nil
	}))
	w, _ := meteredWriter(t, s)
	require.Equal(t, OutcomeFailed, w.Write(t.Context(), writerSpan("r", "a")).Outcome)
	assert.Equal(t, OutcomeWritten, w.Write(t.Context(), writerSpan("r", "a")).Outcome)
	assert.Equal(t, writerLine(t, "r", "a"), fileOf(t, s, "r"))
}

// Streamed records (large payloads) are keyed like whole ones.
func TestWriterStreamedRecordIdempotent(t *testing.T) {
	s := newTestStore(t)
	w, reader := meteredWriter(t, s)
	sp := writerSpan("r", "a")
	big := strings.Repeat("x", StreamedLineBytes)
	sk, _ := semconv.PayloadSizeKey(semconv.GymtraceResponseRawKey)
	attrs := append(append(Attributes{}, sp.Attributes.(Attributes)...),
		semconv.GymtraceResponseRawKey.String(big), sk.Int(len(big)))
	sp.Attributes = attrs
	l, err := ModelCallLines{}.NewLine("r", sp)
	require.NoError(t, err)
	require.True(t, l.(StreamedLine).Streamed())
	want := string(l.AppendTo(nil))
	for range 2 {
		assert.Equal(t, OutcomeWritten, w.Write(t.Context(), sp).Outcome)
	}
	assert.Equal(t, want, fileOf(t, s, "r"))
	c := writerCounts(t, reader)
	assert.Equal(t, int64(len(want)), c["bytes"])
	assert.Equal(t, int64(1), c["duplicates"])
}

// Writer processes (this test binary re-executed, writerChildEnv): each writes the same calls.
const (
	writerChildEnv = "GYMTRACE_CAPTURE_CHILD_SPAN_WRITER"
	writerChildN   = 200
)

// runChildSpanWriter writes writerChildN records of rollout "mp" through a Writer on dir, calls
// 0..N-1 in an order that starts at offset so that the processes race on every call.
func runChildSpanWriter(dir string, offset int) error {
	s, err := NewStore(dir)
	if err != nil {
		return err
	}
	w, err := NewWriter(s, ModelCallLines{})
	if err != nil {
		return err
	}
	for i := range writerChildN {
		id := fmt.Sprintf("%032x", (i+offset)%writerChildN)
		if r := w.Write(context.Background(), writerSpan("mp", id)); r.Outcome != OutcomeWritten {
			return fmt.Errorf("call %s: %s: %v", id, r.Outcome, r.Err)
		}
	}
	return nil
}

// Two processes writing the same calls leave each call once in the file.
func TestWriterIdempotentAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for p := range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		cmd.Env = append(os.Environ(), writerChildEnv+"="+dir, childWriterEnv+"="+strconv.Itoa(p*writerChildN/2))
		require.NoError(t, cmd.Start())
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	for p, cmd := range cmds {
		require.NoError(t, cmd.Wait(), "writer %d: %s", p, outs[p].String())
	}
	s, err := NewStore(dir)
	require.NoError(t, err)
	lines, invalid, err := s.ReadAvailable("mp")
	require.NoError(t, err)
	assert.Zero(t, invalid)
	require.Len(t, lines, writerChildN, "each call once")
	seen := map[string]bool{}
	for _, l := range lines {
		k := ModelCallLines{}.KeyOf(l.Line)
		assert.False(t, seen[k], k)
		seen[k] = true
	}
	_, err = os.Stat(filepath.Join(dir, "mp"+MarkerFileSuffix))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestModelCallLinesKeyOf(t *testing.T) {
	line := strings.TrimSuffix(writerLine(t, "r", "abc"), "\n")
	tests := []struct{ name, line, want string }{
		{"record", line, "abc"},
		{"escaped id", `{"model_call_id":"a\"b","x":1}`, `a"b`},
		{"id not first", `{"x":1,"model_call_id":"z"}`, "z"},
		{"id not a string", `{"model_call_id":7}`, ""},
		{"torn", line[:len(line)-3], ""},
		{"not an object", `["model_call_id"]`, ""},
		{"empty", ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ModelCallLines{}.KeyOf([]byte(tt.line)))
		})
	}
}

func TestOutcomeString(t *testing.T) {
	names := map[Outcome]string{OutcomeIgnored: "ignored", OutcomeWritten: "written", OutcomePartial: "partial",
		OutcomeRejected: "rejected", OutcomeFailed: "failed", Outcome(9): "Outcome(9)"}
	for o, want := range names {
		assert.Equal(t, want, o.String())
	}
}

func TestNewWriterErrors(t *testing.T) {
	_, err := NewWriter(nil, ModelCallLines{})
	require.Error(t, err)
	_, err = NewWriter(newTestStore(t), nil)
	require.Error(t, err)
}

// Two requests of one call in one failed commit both fail (the second is no duplicate of a line on
// disk); the retry then finds the line the failed commit left and appends nothing.
func TestWriterDuplicateInFailedBatch(t *testing.T) {
	var calls atomic.Int32
	entered, release := make(chan struct{}), make(chan struct{})
	s := newTestStore(t, WithSyncHook(func(string) error {
		switch calls.Add(1) {
		case 1:
			close(entered)
			<-release
		case 2:
			return errors.New("disk on fire")
		}
		return nil
	}))
	w, _ := meteredWriter(t, s)
	var wg sync.WaitGroup
	var first Result
	wg.Go(func() { first = w.Write(context.Background(), writerSpan("r", "a")) })
	<-entered
	results := make([]Result, 2)
	for i := range results {
		wg.Go(func() { results[i] = w.Write(context.Background(), writerSpan("r", "b")) })
	}
	require.Eventually(t, func() bool {
		s.mu.Lock()
		q := s.files[s.capturePath("r")]
		s.mu.Unlock()
		if q == nil {
			return false
		}
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.pending) == 2
	}, 5*time.Second, time.Millisecond, "both requests of b queue behind a's commit")
	close(release)
	wg.Wait()
	assert.Equal(t, OutcomeWritten, first.Outcome)
	for i, r := range results {
		assert.Equal(t, OutcomeFailed, r.Outcome, "request %d of b", i)
	}
	assert.Equal(t, OutcomeWritten, w.Write(t.Context(), writerSpan("r", "b")).Outcome)
	assert.Equal(t, writerLine(t, "r", "a")+writerLine(t, "r", "b"), fileOf(t, s, "r"))
}

// TestWriterForwardChecksPayloads: a forwarded span's line is not made here, yet the payloads it
// would write as null make the outcome partial with the same problems as a local write.
func TestWriterForwardChecksPayloads(t *testing.T) {
	for _, tc := range []struct{ name, req, resp string }{
		{"whole", "", ""},
		{"request not an object", `[1]`, ""},
		{"response not strict JSON", "", `{"id":NaN}`},
		{"both", `{"a":}`, `x`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			span := func() *Span {
				s := writerSpan("r1", "863410a8d52e4be6a31efc5c6e9d4629")
				attrs := s.Attributes.(Attributes)
				for i, kv := range attrs {
					for k, text := range map[attribute.Key]string{semconv.GymtraceRequestBodyKey: tc.req, semconv.GymtraceResponseBodyKey: tc.resp} {
						if text == "" {
							continue
						}
						if kv.Key == k {
							attrs[i] = k.String(text)
						}
						if sk, _ := semconv.PayloadSizeKey(k); kv.Key == sk {
							attrs[i] = sk.Int64(int64(len(text)))
						}
					}
				}
				return s
			}
			local, err := NewStore(t.TempDir())
			require.NoError(t, err)
			w, err := NewWriter(local, ModelCallLines{})
			require.NoError(t, err)
			want := w.Write(t.Context(), span())

			fwdStore, err := NewStore(t.TempDir())
			require.NoError(t, err)
			fw, err := NewWriter(fwdStore, ModelCallLines{})
			require.NoError(t, err)
			sent := 0
			got := fw.Forward(t.Context(), span(), func(context.Context) error { sent++; return nil })
			assert.Equal(t, 1, sent)
			assert.Equal(t, want.Outcome, got.Outcome)
			assert.Equal(t, fmt.Sprint(want.Err), fmt.Sprint(got.Err))
			if tc.req == "" && tc.resp == "" {
				assert.Equal(t, OutcomeWritten, got.Outcome)
			} else {
				assert.Equal(t, OutcomePartial, got.Outcome)
			}
			_, statErr := os.Stat(filepath.Join(fwdStore.Dir(), "r1"+CaptureFileSuffix))
			assert.ErrorIs(t, statErr, os.ErrNotExist, "a forwarded line is not appended locally")
		})
	}
}
