package gymcaptureexporter

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/capturetest"
	"github.com/gymtrace/gymtrace/collectorext/gymcaptureexporter/internal/metadata"
)

// obsTool fills an execute_tool observation span with span id {.., sid}; rid is its
// gymtrace.rollout.id: a string, an int (the wrong type) or nil (absent).
func obsTool(rid any, sid byte) func(ptrace.Span) {
	return func(sp ptrace.Span) {
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		sp.SetName("execute_tool bash")
		sp.SetKind(ptrace.SpanKindInternal)
		sp.SetTraceID(pcommon.TraceID{0x7a, 15: 1})
		sp.SetSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, 0x0b, sid})
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(t0))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(t0.Add(time.Second)))
		m := sp.Attributes()
		m.PutStr("gen_ai.operation.name", "execute_tool")
		m.PutStr("gen_ai.tool.name", "bash")
		m.PutStr("gen_ai.tool.call.id", "call_"+string('a'+rune(sid%26)))
		m.PutStr("gymtrace.agent.invocation.id", "inv-1")
		switch v := rid.(type) {
		case string:
			m.PutStr("gymtrace.rollout.id", v)
		case int:
			m.PutInt("gymtrace.rollout.id", int64(v))
		}
	}
}

// obsTraces builds one request from an agent: each fill makes one span.
func obsTraces(fills ...func(ptrace.Span)) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", agentService)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("python-agent")
	for _, f := range fills {
		f(ss.Spans().AppendEmpty())
	}
	return td
}

// retried returns the span ids err hands back for retry (a consumererror.Traces), checking that
// each keeps its resource.
func retried(t *testing.T, err error) []trace.SpanID {
	t.Helper()
	var te consumererror.Traces
	require.ErrorAs(t, err, &te)
	var got []trace.SpanID
	rss := te.Data().ResourceSpans()
	for i := range rss.Len() {
		rs := rss.At(i)
		_, ok := rs.Resource().Attributes().Get("service.name")
		require.True(t, ok, "the resource is kept")
		for j := range rs.ScopeSpans().Len() {
			spans := rs.ScopeSpans().At(j).Spans()
			for k := range spans.Len() {
				got = append(got, trace.SpanID(spans.At(k).SpanID()))
			}
		}
	}
	return got
}

func sid(b byte) trace.SpanID { return trace.SpanID{0, 0, 0, 0, 0, 0, 0x0b, b} }

// lineOf is the observations line gymcapture writes for obsTool(rid, sid).
func lineOf(t *testing.T, rid string, s byte) string {
	t.Helper()
	sp := obsTraces(obsTool(rid, s)).ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	return string(agentobs.NewObservationLine(rid, spanView(sp)).AppendJSON(nil))
}

// TestObservationOutcomes: what gymcapture does with observation spans it cannot write, next to
// ones it can — the model-call spans' error semantics.
func TestObservationOutcomes(t *testing.T) {
	tests := []struct {
		name          string
		spans         []func(ptrace.Span)
		wantFiles     map[string]string
		wantCounts    map[string]int64
		wantPermanent bool
		wantErr       []string
	}{
		{
			name:       "written",
			spans:      []func(ptrace.Span){obsTool("r-1", 1), obsTool("r-2", 2), obsTool("r-1", 3)},
			wantFiles:  map[string]string{"r-1.observations.jsonl": "r-1/1 r-1/3", "r-2.observations.jsonl": "r-2/2"},
			wantCounts: map[string]int64{"observation/written": 3},
		},
		{
			// Held until a span of their trace names a rollout (SPEC §0 D18; the conformance suite
			// covers the rest): no error, nothing written yet, nothing counted but the record
			// writer's ignored spans.
			name:       "no rollout id and none in the trace yet: held",
			spans:      []func(ptrace.Span){obsTool(nil, 1)},
			wantFiles:  map[string]string{},
			wantCounts: map[string]int64{"model_call/ignored": 1},
		},
		{
			// SPEC §0 D18: a present id that names no rollout is refused as a model-call span's is,
			// never a cue to take the trace's (or the resource's) rollout.
			name:          "rollout id not a string, or empty: permanent for that span only, not held",
			spans:         []func(ptrace.Span){obsTool(7, 1), obsTool("", 2), obsTool("r-1", 3)},
			wantFiles:     map[string]string{"r-1.observations.jsonl": "r-1/3"},
			wantCounts:    map[string]int64{"observation/written": 1, "observation/rejected": 2},
			wantPermanent: true,
			wantErr: []string{
				"gymcapture: observation span: capture attributes: gymtrace.rollout.id must be a string, got int64",
				"gymcapture: observation span: Invalid rollout id: ''",
			},
		},
		{
			name:          "unsafe rollout id: permanent for that span only, nothing marked",
			spans:         []func(ptrace.Span){obsTool("../escape", 1), obsTool("r-1", 2)},
			wantFiles:     map[string]string{"r-1.observations.jsonl": "r-1/2"},
			wantCounts:    map[string]int64{"observation/written": 1, "observation/rejected": 1},
			wantPermanent: true,
			wantErr:       []string{"gymcapture: observation span: Invalid rollout id: '../escape'"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, dir, m := newStarted(t, nil)
			err := e.pushTraces(t.Context(), obsTraces(tt.spans...))
			if tt.wantErr == nil {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				for _, w := range tt.wantErr {
					assert.ErrorContains(t, err, w)
				}
				assert.Equal(t, tt.wantPermanent, consumererror.IsPermanent(err))
			}
			want := map[string]string{}
			for name, ids := range tt.wantFiles {
				for _, id := range strings.Fields(ids) {
					rid, n, _ := strings.Cut(id, "/")
					want[name] += lineOf(t, rid, n[0]-'0')
				}
			}
			assert.Equal(t, want, capturetest.DirContents(t, dir))
			assert.Equal(t, tt.wantCounts, capturetest.Counts(t, m))
		})
	}
}

// TestObservationIOErrors: lines not written for an I/O reason give a retryable error carrying
// exactly the failed spans; the others are written once and never handed back. Observation
// failures mark nothing.
func TestObservationIOErrors(t *testing.T) {
	failingSync := func(_ *Config, e *captureExporter) {
		e.storeOpts = append(e.storeOpts, capture.WithSyncHook(func(path string) error {
			if strings.HasSuffix(path, "fails"+capture.ObservationsFileSuffix) {
				return errors.New("input/output error")
			}
			return nil
		}))
	}
	t.Run("observations file refused: permanent, the others written", func(t *testing.T) {
		e, dir, m := newStarted(t, nil)
		require.NoError(t, os.Mkdir(filepath.Join(dir, "fails"+capture.ObservationsFileSuffix), 0o700))
		err := e.pushTraces(t.Context(), obsTraces(obsTool("ok", 1), obsTool("fails", 2), obsTool("ok", 3)))
		require.Error(t, err)
		assert.True(t, consumererror.IsPermanent(err), "a refused file is not retried")
		assert.ErrorContains(t, err, "rollout file refused, retrying cannot help until it is replaced")
		got, err := os.ReadFile(filepath.Join(dir, "ok"+capture.ObservationsFileSuffix))
		require.NoError(t, err)
		assert.Equal(t, lineOf(t, "ok", 1)+lineOf(t, "ok", 3), string(got))
		assert.NoFileExists(t, filepath.Join(dir, "fails.capture.incomplete"))
		assert.Equal(t, map[string]int64{"observation/written": 2, "observation/rejected": 1}, capturetest.Counts(t, m))
	})
	t.Run("fsync fails", func(t *testing.T) {
		e, dir, m := newStarted(t, failingSync)
		err := e.pushTraces(t.Context(), obsTraces(obsTool("ok", 1), obsTool("fails", 2), obsTool("ok", 3)))
		require.Error(t, err)
		assert.False(t, consumererror.IsPermanent(err), "I/O errors are retryable")
		assert.ErrorContains(t, err, "input/output error")
		assert.Equal(t, []trace.SpanID{sid(2)}, retried(t, err))
		got, err := os.ReadFile(filepath.Join(dir, "ok"+capture.ObservationsFileSuffix))
		require.NoError(t, err)
		assert.Equal(t, lineOf(t, "ok", 1)+lineOf(t, "ok", 3), string(got))
		assert.NotContains(t, capturetest.DirContents(t, dir), "fails.capture.incomplete")
		assert.Equal(t, map[string]int64{"observation/written": 2, "observation/failed": 1}, capturetest.Counts(t, m))
	})
	t.Run("failed and rejected in one batch: retryable, only the failed span, both kinds counted", func(t *testing.T) {
		c := capturetest.Cases(t)[0]
		e, _, m := newStarted(t, failingSync)
		td := obsTraces(obsTool("bad/id", 1), obsTool("fails", 2))
		toTraces([]capturetest.Span{without(inRollout(c, "call", 3), "gymtrace.dialect")}).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
		err := e.pushTraces(t.Context(), td)
		require.Error(t, err)
		assert.False(t, consumererror.IsPermanent(err), "the failed span must still be retried")
		assert.ErrorContains(t, err, "1 model-call spans, 1 observation spans rejected (not retried)")
		assert.ErrorContains(t, err, "Invalid rollout id: 'bad/id'")
		assert.ErrorContains(t, err, "gymtrace.dialect is required")
		assert.Equal(t, []trace.SpanID{sid(2)}, retried(t, err))
		assert.Equal(t, map[string]int64{"observation/rejected": 1, "observation/failed": 1, "observation/ignored": 1, "model_call/rejected": 1}, capturetest.Counts(t, m))
	})
	t.Run("context done before the line", func(t *testing.T) {
		e, dir, m := newStarted(t, nil)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		err := e.pushTraces(ctx, obsTraces(obsTool("ok", 1)))
		require.ErrorIs(t, err, context.Canceled)
		assert.False(t, consumererror.IsPermanent(err))
		assert.Equal(t, []trace.SpanID{sid(1)}, retried(t, err))
		assert.Empty(t, capturetest.DirContents(t, dir))
		assert.Equal(t, map[string]int64{"observation/failed": 1}, capturetest.Counts(t, m))
	})
	t.Run("after shutdown: not written, nothing marked, error", func(t *testing.T) {
		e, dir, m := newStarted(t, nil)
		require.NoError(t, e.shutdown(t.Context()))
		err := e.pushTraces(t.Context(), obsTraces(obsTool("late", 1), obsTool(nil, 2)))
		require.ErrorIs(t, err, errShutdown)
		assert.Empty(t, capturetest.DirContents(t, dir))
		assert.Equal(t, []trace.SpanID{sid(1), sid(2)}, retried(t, err))
		assert.Equal(t, map[string]int64{"observation/failed": 2, "model_call/ignored": 2}, capturetest.Counts(t, m),
			"a span received after shutdown fails, with or without a rollout id (nothing is lost unseen)")
	})
}

// TestObservationsDisabled: with observations: false, observation spans are ignored like any other
// span while model-call spans are still written.
func TestObservationsDisabled(t *testing.T) {
	c := capturetest.Cases(t)[0]
	call := inRollout(c, "r-1", 9)
	e, dir, m := newStarted(t, func(cfg *Config, e *captureExporter) { e.observations = false })
	td := obsTraces(obsTool("r-1", 1), obsTool("r-1", 2))
	toTraces([]capturetest.Span{call}).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	require.NoError(t, e.pushTraces(t.Context(), td))
	assert.Equal(t, map[string]string{"r-1.capture.jsonl": c.Want(call.TraceID, call.SpanID)}, capturetest.DirContents(t, dir))
	assert.Equal(t, map[string]int64{"model_call/written": 1, "model_call/ignored": 2}, capturetest.Counts(t, m), "no observation writer, no observation counts")
}

// TestObservationAndModelCallSpan: a span that is both (a model-call span carrying
// gymtrace.sandbox.role) gets both lines, as the SDK's exporter and processor would write; when
// its observation line fails, its record is not started, so the retry never writes it twice.
func TestObservationAndModelCallSpan(t *testing.T) {
	c := capturetest.Cases(t)[0]
	both := inRollout(c, "both", 1)
	both.Attributes = append(both.Attributes[:len(both.Attributes):len(both.Attributes)], attribute.String("gymtrace.sandbox.role", "agent"))
	td := toTraces([]capturetest.Span{both})
	sp := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	_, isObs := agentobs.ObservationKind(spanAttributes(sp.Attributes()))
	require.True(t, isObs)
	line := string(agentobs.NewObservationLine("both", spanView(sp)).AppendJSON(nil))

	t.Run("both written", func(t *testing.T) {
		e, dir, m := newStarted(t, nil)
		require.NoError(t, e.pushTraces(t.Context(), td))
		assert.Equal(t, map[string]string{
			"both.capture.jsonl":      c.Want(both.TraceID, both.SpanID),
			"both.observations.jsonl": line,
		}, capturetest.DirContents(t, dir))
		assert.Equal(t, map[string]int64{"observation/written": 1, "model_call/written": 1}, capturetest.Counts(t, m), "counted once by each writer")
	})
	t.Run("observation line rejected: record written, both reported, not retried", func(t *testing.T) {
		e, dir, m := newStarted(t, nil)
		require.NoError(t, os.Mkdir(filepath.Join(dir, "both"+capture.ObservationsFileSuffix), 0o700))
		err := e.pushTraces(t.Context(), td)
		require.Error(t, err)
		assert.True(t, consumererror.IsPermanent(err))
		assert.ErrorContains(t, err, "rollout file refused, retrying cannot help until it is replaced")
		got, err := os.ReadFile(filepath.Join(dir, "both.capture.jsonl"))
		require.NoError(t, err)
		assert.Equal(t, c.Want(both.TraceID, both.SpanID), string(got))
		assert.NoFileExists(t, filepath.Join(dir, "both.capture.incomplete"))
		assert.Equal(t, map[string]int64{"observation/rejected": 1, "model_call/written": 1}, capturetest.Counts(t, m))
	})
	t.Run("observation line fails: record not started, rollout marked, span retried", func(t *testing.T) {
		e, dir, m := newStarted(t, func(_ *Config, e *captureExporter) {
			e.storeOpts = append(e.storeOpts, capture.WithSyncHook(func(path string) error {
				if strings.HasSuffix(path, "both"+capture.ObservationsFileSuffix) {
					return errors.New("input/output error")
				}
				return nil
			}))
		})
		err := e.pushTraces(t.Context(), td)
		require.Error(t, err)
		assert.False(t, consumererror.IsPermanent(err))
		assert.ErrorContains(t, err, "gymcapture: record not started")
		assert.Equal(t, []trace.SpanID{both.SpanID}, retried(t, err))
		assert.NoFileExists(t, filepath.Join(dir, "both.capture.jsonl"))
		assert.FileExists(t, filepath.Join(dir, "both.capture.incomplete"))
		assert.Equal(t, map[string]int64{"observation/failed": 1, "model_call/failed": 1}, capturetest.Counts(t, m), "the record not started is failed too")
	})
}

// TestObservationRetryThroughExporterhelper: through exporterhelper with retries on, a batch whose
// first attempt fails for one rollout's observations ends with every line written and each
// rollout's bundle equal to the SDK processor's; the other rollout's line is written once.
func TestObservationRetryThroughExporterhelper(t *testing.T) {
	side := newSDKSide(t)
	for _, rid := range []string{"a", "b"} {
		rec, err := agentobs.NewRecorder(side.tp, rid)
		require.NoError(t, err)
		ctx, inv := rec.StartInvocation(t.Context(), "solver")
		_, tool := agentobs.StartToolCall(ctx, "bash", "call_"+rid)
		tool.End(nil)
		inv.End(nil)
	}
	var failures atomic.Int32
	cfg := createDefaultConfig().(*Config)
	cfg.CaptureDir = t.TempDir()
	cfg.RetryConfig = configretry.BackOffConfig{Enabled: true, InitialInterval: time.Millisecond, MaxInterval: 5 * time.Millisecond,
		MaxElapsedTime: 5 * time.Second, Multiplier: 1.5}
	set := exportertest.NewNopSettings(metadata.Type)
	e, err := newCaptureExporter(cfg, set)
	require.NoError(t, err)
	e.storeOpts = append(e.storeOpts, capture.WithSyncHook(func(path string) error {
		if strings.HasSuffix(path, "b"+capture.ObservationsFileSuffix) && failures.Add(1) == 1 {
			return errors.New("transient input/output error") // after the write, before the fsync
		}
		return nil
	}))
	exp, err := newTraces(t.Context(), set, cfg, e)
	require.NoError(t, err)
	require.NoError(t, exp.Start(t.Context(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, exp.Shutdown(context.Background())) }()

	require.NoError(t, exp.ConsumeTraces(t.Context(), otlpTraces(t, side.spans())))
	want, got := capturetest.DirContents(t, side.dir), capturetest.DirContents(t, cfg.CaptureDir)
	assert.Equal(t, want["a.observations.jsonl"], got["a.observations.jsonl"], "a written once, not rewritten by the retry")
	wantB := strings.SplitAfter(want["b.observations.jsonl"], "\n")
	gotB := strings.SplitAfter(got["b.observations.jsonl"], "\n")
	assert.Subset(t, gotB, wantB, "the retry wrote b's failed line")
	assert.Subset(t, wantB, gotB, "no other line: the failed commit may have left a copy of its line")
	assert.Equal(t, dump(t, readBundle(t, side.dir, "b")), dump(t, readBundle(t, cfg.CaptureDir, "b")),
		"a repeated line changes nothing: the mapping keeps a span id's first line")
	assert.NotContains(t, got, "b.capture.incomplete")
	assert.GreaterOrEqual(t, failures.Load(), int32(2))
}

// TestObservationPartialLogged: an observation span that arrives without events its sender's span
// limits dropped is written with its dropped count and logged as partial, not silently.
func TestObservationPartialLogged(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.CaptureDir = t.TempDir()
	core, logs := observer.New(zap.WarnLevel)
	set := exportertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	exp, err := NewFactory().CreateTraces(t.Context(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(t.Context(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, exp.Shutdown(context.Background())) }()

	require.NoError(t, exp.ConsumeTraces(t.Context(), obsTraces(func(sp ptrace.Span) {
		obsTool("r1", 1)(sp)
		sp.SetDroppedEventsCount(3)
	})))
	data, err := os.ReadFile(filepath.Join(cfg.CaptureDir, "r1"+capture.ObservationsFileSuffix))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"dropped_events":3`)
	entries := logs.FilterMessageSnippet("written without what the sender's span limits dropped").All()
	require.Len(t, entries, 1)
	assert.Equal(t, "r1", entries[0].ContextMap()["rollout_id"])
}
