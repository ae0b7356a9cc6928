package agentobs_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
)

// otelErrors replaces the OpenTelemetry error handler for the test and returns what it received.
func otelErrors(t *testing.T) func() []error {
	t.Helper()
	var mu sync.Mutex
	var got []error
	prev := otel.GetErrorHandler()
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, err)
	}))
	t.Cleanup(func() { otel.SetErrorHandler(prev) })
	return func() []error {
		mu.Lock()
		defer mu.Unlock()
		return append([]error(nil), got...)
	}
}

// limitRig is an ObservationProcessor with its logs and counters, in a tracer provider built with
// opts (and the environment's OTEL_*_LIMIT variables).
type limitRig struct {
	store  *capture.Store
	proc   *agentobs.ObservationProcessor
	tp     *sdktrace.TracerProvider
	logs   *bytes.Buffer
	counts func() map[string]int64
}

func newLimitRig(t *testing.T, opts ...sdktrace.TracerProviderOption) *limitRig {
	t.Helper()
	store, proc, logs, counts := newLoggedProcessor(t)
	tp := sdktrace.NewTracerProvider(append([]sdktrace.TracerProviderOption{sdktrace.WithSpanProcessor(proc)}, opts...)...)
	t.Cleanup(func() { require.NoError(t, tp.Shutdown(context.Background())) })
	return &limitRig{store: store, proc: proc, tp: tp, logs: logs, counts: counts}
}

func spanLimits(edit func(*sdktrace.SpanLimits)) sdktrace.TracerProviderOption {
	l := sdktrace.NewSpanLimits()
	edit(&l)
	return sdktrace.WithRawSpanLimits(l)
}

// TestRecorderSpanLimits: whatever the provider's span limits do to a Recorder span, the damage
// is reported at the source (otel.Handle) and the processor's outcome is never a silent written
// line: a cut value is rejected, dropped events are partial.
func TestRecorderSpanLimits(t *testing.T) {
	const (
		callID = "call_0123456789abcdefXY"          // 23 bytes
		mc1    = "0123456789abcdef0123456789abcdef" // 32 bytes
		mc2    = "1123456789abcdef0123456789abcdef"
		mc3    = "2123456789abcdef0123456789abcdef"
	)
	tests := []struct {
		name       string
		env        string // OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT, "" for unset
		opts       []sdktrace.TracerProviderOption
		wantCounts map[string]int64
		wantFile   bool     // the observations file exists
		sameBundle bool     // the file's bundle equals Recorder.Bundle
		wantReport []string // in the errors given to otel.Handle
		wantLogs   []string // in the processor's log
	}{
		{
			name: "default limits", wantCounts: map[string]int64{"observation/written": 2},
			wantFile: true, sameBundle: true,
		},
		{
			name: "value length 8 from the environment", env: "8",
			wantCounts: map[string]int64{"observation/rejected": 2},
			wantReport: []string{
				`span "invoke_agent solver"`, "gen_ai.operation.name kept 8 of 12 bytes",
				"gymtrace.model_call.ids[0] kept 8 of 32 bytes", "an ObservationProcessor rejects its line",
				"raise sdktrace.SpanLimits.AttributeValueLengthLimit (OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT, OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT) to at least 32",
			},
			wantLogs: []string{"observation span rejected", `gen_ai.operation.name \"invoke_a\" is a strict prefix of \"invoke_agent\"`},
		},
		{
			name: "value length 16 and 2 events",
			opts: []sdktrace.TracerProviderOption{spanLimits(func(l *sdktrace.SpanLimits) {
				l.AttributeValueLengthLimit, l.EventCountLimit = 16, 2
			})},
			wantCounts: map[string]int64{"observation/rejected": 2},
			wantReport: []string{
				"gen_ai.tool.call.id kept 16 of 23 bytes", "gymtrace.model_call.ids[2] kept 16 of 32 bytes",
				"1 of 3 gymtrace.model_call events dropped by the event count limit",
				"sdktrace.SpanLimits.EventCountLimit (OTEL_SPAN_EVENT_COUNT_LIMIT) to at least 3",
			},
			wantLogs: []string{"observation span rejected", "gen_ai.tool.call.id kept 16 of 23 bytes"},
		},
		{
			name:       "2 events",
			opts:       []sdktrace.TracerProviderOption{spanLimits(func(l *sdktrace.SpanLimits) { l.EventCountLimit = 2 })},
			wantCounts: map[string]int64{"observation/written": 1, "observation/partial": 1},
			wantFile:   true,
			wantReport: []string{"1 of 3 gymtrace.model_call events dropped", "writes its line as partial"},
			wantLogs:   []string{"line written without what the span's limits dropped", "dropped_events: 1 events dropped"},
		},
		{
			name:       "3 attributes",
			opts:       []sdktrace.TracerProviderOption{spanLimits(func(l *sdktrace.SpanLimits) { l.AttributeCountLimit = 3 })},
			wantCounts: map[string]int64{"observation/rejected": 2},
			wantReport: []string{"gymtrace.observation.status dropped by the attribute count limit", "sdktrace.SpanLimits.AttributeCountLimit"},
			wantLogs:   []string{"observation span rejected", "dropped by the attribute count limit"},
		},
		// From a fresh-user trial: limits that leave no operation name, or no rollout id, made the
		// spans ignored or flushed to the unattributed file; they are rejected under the
		// Recorder's rollout.
		{
			name:       "no attributes at all",
			opts:       []sdktrace.TracerProviderOption{spanLimits(func(l *sdktrace.SpanLimits) { l.AttributeCountLimit = 0 })},
			wantCounts: map[string]int64{"observation/rejected": 2},
			wantReport: []string{"gen_ai.operation.name dropped by the attribute count limit"},
			wantLogs:   []string{"observation span rejected", "rollout_id=3-1"},
		},
		{
			name:       "values cut to nothing",
			opts:       []sdktrace.TracerProviderOption{spanLimits(func(l *sdktrace.SpanLimits) { l.AttributeValueLengthLimit = 0 })},
			wantCounts: map[string]int64{"observation/rejected": 2},
			wantReport: []string{"gen_ai.operation.name kept 0 of 12 bytes"},
			wantLogs:   []string{"observation span rejected", "rollout_id=3-1"},
		},
		{
			name:       "one attribute: the rollout id is gone",
			opts:       []sdktrace.TracerProviderOption{spanLimits(func(l *sdktrace.SpanLimits) { l.AttributeCountLimit = 1 })},
			wantCounts: map[string]int64{"observation/rejected": 2},
			wantReport: []string{"gymtrace.rollout.id dropped by the attribute count limit"},
			wantLogs:   []string{"observation span rejected", "rollout_id=3-1"},
		},
		{
			name:       "the rollout id cut",
			opts:       []sdktrace.TracerProviderOption{spanLimits(func(l *sdktrace.SpanLimits) { l.AttributeValueLengthLimit = 1 })},
			wantCounts: map[string]int64{"observation/rejected": 2},
			wantReport: []string{"gymtrace.rollout.id kept 1 of 3 bytes", `of rollout "3-1"`},
			wantLogs:   []string{"observation span rejected", "rollout_id=3-1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env != "" {
				t.Setenv("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", tt.env)
			}
			reported := otelErrors(t)
			rig := newLimitRig(t, tt.opts...)
			rec, err := agentobs.NewRecorder(rig.tp, "3-1")
			require.NoError(t, err)
			ctx, inv := rec.StartInvocation(t.Context(), "solver")
			tctx, tc := agentobs.StartToolCall(ctx, "bash", callID)
			for _, id := range []string{mc1, mc2, mc3} {
				require.NoError(t, agentobs.RecordModelCall(ctx, id))
			}
			tc.End(nil)
			_ = tctx
			inv.End(nil)

			require.NoError(t, rig.tp.ForceFlush(t.Context()))
			assert.Equal(t, tt.wantCounts, rig.counts())
			assert.NoFileExists(t, filepath.Join(rig.store.Dir(), capture.UnattributedObservationsFile), "nothing held and flushed elsewhere")
			b, exists, err := agentobs.ReadBundle(rig.store, "3-1")
			require.NoError(t, err)
			assert.Equal(t, tt.wantFile, exists, "observations file")
			if tt.sameBundle {
				assert.Equal(t, rec.Bundle(), b)
			}
			errs := reported()
			if len(tt.wantReport) == 0 {
				assert.Empty(t, errs)
			}
			var all []string
			for _, e := range errs {
				assert.ErrorIs(t, e, agentobs.ErrSpanLimits)
				all = append(all, e.Error())
			}
			joined := strings.Join(all, "\n")
			for _, w := range tt.wantReport {
				assert.Contains(t, joined, w)
			}
			for _, w := range tt.wantLogs {
				assert.Contains(t, rig.logs.String(), w)
			}
		})
	}
}

// TestObservationProcessorCutSpans: spans not made by a Recorder whose limits cut or dropped what
// their line keeps are never ignored or written silently.
func TestObservationProcessorCutSpans(t *testing.T) {
	rid := attribute.String("gymtrace.rollout.id", "r-1")
	tests := []struct {
		name       string
		attrs      []attribute.KeyValue
		events     int
		opts       []sdktrace.TracerProviderOption
		wantCounts map[string]int64
		wantLog    string
		flushErr   bool // ForceFlush returns the held span's rejection
	}{
		{
			name: "invoke_agent cut", attrs: []attribute.KeyValue{attribute.String("gen_ai.operation.name", "invoke_a"), rid},
			wantCounts: map[string]int64{"observation/rejected": 1},
			wantLog:    `span \"x\": gen_ai.operation.name \"invoke_a\" is a strict prefix of \"invoke_agent\": the producer's attribute value length limit cut it`,
		},
		{
			name: "execute_tool cut", attrs: []attribute.KeyValue{attribute.String("gen_ai.operation.name", "e"), rid},
			wantCounts: map[string]int64{"observation/rejected": 1},
			wantLog:    `\"e\" is a strict prefix of \"execute_tool\"`,
		},
		{
			name: "cut and naming no rollout: rejected at flush", attrs: []attribute.KeyValue{attribute.String("gen_ai.operation.name", "execute_to")},
			wantCounts: map[string]int64{"observation/rejected": 1, "observation/unattributed/flushed": 1}, flushErr: true,
			wantLog: `\"execute_to\" is a strict prefix of \"execute_tool\"`,
		},
		{
			name: "another operation", attrs: []attribute.KeyValue{attribute.String("gen_ai.operation.name", "chat"), rid},
			wantCounts: map[string]int64{"observation/ignored": 1},
		},
		{
			name: "empty operation", attrs: []attribute.KeyValue{attribute.String("gen_ai.operation.name", ""), rid},
			wantCounts: map[string]int64{"observation/ignored": 1},
		},
		{
			name: "longer than an observation operation", attrs: []attribute.KeyValue{attribute.String("gen_ai.operation.name", "invoke_agents"), rid},
			wantCounts: map[string]int64{"observation/ignored": 1},
		},
		{
			name: "events dropped", attrs: []attribute.KeyValue{attribute.String("gen_ai.operation.name", "invoke_agent"), rid},
			events: 3, opts: []sdktrace.TracerProviderOption{spanLimits(func(l *sdktrace.SpanLimits) { l.EventCountLimit = 1 })},
			wantCounts: map[string]int64{"observation/partial": 1},
			wantLog:    "dropped_events: 2 events dropped by the producer's span limits",
		},
		{
			name: "attributes dropped", attrs: []attribute.KeyValue{rid, attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.call.id", "t1")},
			opts:       []sdktrace.TracerProviderOption{spanLimits(func(l *sdktrace.SpanLimits) { l.AttributeCountLimit = 2 })},
			wantCounts: map[string]int64{"observation/partial": 1},
			wantLog:    "dropped_attributes: 1 span attributes dropped by the producer's span limits: the line may lack some it keeps",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rig := newLimitRig(t, tt.opts...)
			_, s := rig.tp.Tracer("test").Start(t.Context(), "x", trace.WithAttributes(tt.attrs...))
			for range tt.events {
				s.AddEvent("gymtrace.model_call", trace.WithAttributes(attribute.String("gymtrace.model_call.id", "mc")))
			}
			s.End()
			if err := rig.proc.ForceFlush(t.Context()); tt.flushErr {
				assert.ErrorIs(t, err, agentobs.ErrSpanLimits)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.wantCounts, rig.counts())
			if tt.wantLog != "" {
				assert.Contains(t, rig.logs.String(), tt.wantLog)
			}
		})
	}
}

// TestObservationLinesCutError: the rejection's cause matches ErrSpanLimits.
func TestObservationLinesCutError(t *testing.T) {
	s := capture.Span{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, Name: "invoke_agent x",
		Attributes: capture.Attributes{attribute.String("gen_ai.operation.name", "invoke_agen"), attribute.String("gymtrace.rollout.id", "r-1")}}
	rid, ok := agentobs.ObservationLines{}.Route(&s)
	assert.True(t, ok)
	assert.Equal(t, "r-1", rid)
	_, err := agentobs.ObservationLines{}.NewLine(rid, &s)
	require.Error(t, err)
	assert.True(t, errors.Is(err, agentobs.ErrSpanLimits))
	_, err = agentobs.ObservationLines{}.NewUnattributedLine(&s, "flushed")
	assert.ErrorIs(t, err, agentobs.ErrSpanLimits)
}
