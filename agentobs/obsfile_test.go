package agentobs_test

import (
	"bytes"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
)

// goldenSpan is an invocation span with every part the line keeps, and some it drops.
func goldenSpan() agentobs.ObservationSpan {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.FixedZone("X", 3600))
	return agentobs.ObservationSpan{
		TraceID:      trace.TraceID{0x0a, 0x0b, 15: 0x01},
		SpanID:       trace.SpanID{0x01, 7: 0x02},
		ParentSpanID: trace.SpanID{0x03, 7: 0x04},
		Name:         "invoke_agent planner \u2028",
		Kind:         trace.SpanKindInternal,
		StartTime:    t0,
		EndTime:      t0.Add(1500 * time.Millisecond),
		StatusCode:   codes.Error,
		Attributes: kvs{
			attribute.String("gen_ai.operation.name", "invoke_agent"),
			attribute.String("gen_ai.input.messages", "[...large, not kept...]"),
			attribute.String("gymtrace.rollout.id", "r-1"),
			attribute.Float64("gymtrace.sandbox.wall_time_s", 100),
			attribute.Float64("gymtrace.sandbox.cpu_time_s", math.NaN()),
			attribute.Int64("gymtrace.sandbox.exit_code", -9),
			attribute.StringSlice("gymtrace.model_call.ids", []string{"a\"b", "c"}),
			attribute.Bool("gen_ai.conversation.compacted", true),
			attribute.Int64Slice("gymtrace.compaction.summary", []int64{1, 2}),
			attribute.Float64Slice("gymtrace.compaction.trigger", []float64{1, 2.5}),
			attribute.BoolSlice("gymtrace.sandbox.id", []bool{true}),
			attribute.StringSlice("gymtrace.sandbox.provider", nil),
		},
		Events: []agentobs.SpanEvent{
			{Name: "gymtrace.model_call", Time: t0.Add(time.Millisecond), Attributes: kvs{attribute.String("gymtrace.model_call.id", "c"), attribute.String("x", "dropped")}},
			{Name: "exception", Time: t0, Attributes: kvs{attribute.String("gymtrace.model_call.id", "not kept")}},
		},
		Links: []agentobs.SpanLink{
			{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, Attributes: kvs{attribute.String("gen_ai.response.id", "resp-1"),
				attribute.String("gymtrace.model_ref.name", "policy"), attribute.String("gymtrace.model_ref.type", "responses_api_models")}},
			{TraceID: trace.TraceID{3}, SpanID: trace.SpanID{4}, Attributes: kvs{attribute.String("other", "no ref: not kept")}},
		},
		DroppedEvents: 2,
		DroppedLinks:  1,
	}
}

const goldenLine = `{"rollout_id":"r-1","trace_id":"0a0b0000000000000000000000000001","span_id":"0100000000000002","parent_span_id":"0300000000000004",` +
	`"name":"invoke_agent planner ` + "\u2028" + `","kind":"internal","start_time_unix_nano":1767319445123456789,"end_time_unix_nano":1767319446623456789,"status_code":"error",` +
	`"attributes":{"gen_ai.conversation.compacted":true,"gen_ai.operation.name":"invoke_agent","gymtrace.compaction.summary":[1,2],"gymtrace.compaction.trigger":[1.0,2.5],` +
	`"gymtrace.model_call.ids":["a\"b","c"],"gymtrace.rollout.id":"r-1","gymtrace.sandbox.cpu_time_s":"NaN","gymtrace.sandbox.exit_code":-9,"gymtrace.sandbox.id":[true],` +
	`"gymtrace.sandbox.provider":[],"gymtrace.sandbox.wall_time_s":100.0},` +
	`"events":[{"name":"gymtrace.model_call","time_unix_nano":1767319445124456789,"attributes":{"gymtrace.model_call.id":"c"}}],` +
	`"links":[{"trace_id":"01000000000000000000000000000000","span_id":"0200000000000000","attributes":{"gen_ai.response.id":"resp-1","gymtrace.model_ref.name":"policy","gymtrace.model_ref.type":"responses_api_models"}}],` +
	`"dropped_events":2,"dropped_links":1}` + "\n"

func TestObservationLineGolden(t *testing.T) {
	line := agentobs.NewObservationLine("r-1", goldenSpan())
	got := line.AppendJSON(nil)
	assert.Equal(t, goldenLine, string(got))

	back, err := agentobs.DecodeObservationLine(got)
	require.NoError(t, err)
	want := line
	want.Attributes = slices.Clone(line.Attributes)
	for i, kv := range want.Attributes {
		if kv.Key == "gymtrace.sandbox.cpu_time_s" {
			want.Attributes[i] = attribute.String(string(kv.Key), "NaN") // the one lossy value
		}
	}
	assert.Equal(t, want, back, "decode(encode(line)) == line")
	assert.Equal(t, goldenLine, string(back.AppendJSON(nil)))

	v, ok := back.Span().Attributes.Lookup("gymtrace.sandbox.wall_time_s")
	require.True(t, ok)
	assert.Equal(t, attribute.FLOAT64, v.Type(), "an integral float stays a float")
	v, _ = back.Span().Attributes.Lookup("gymtrace.sandbox.exit_code")
	assert.Equal(t, attribute.INT64, v.Type())
	v, _ = back.Span().Attributes.Lookup("gymtrace.sandbox.cpu_time_s")
	assert.Equal(t, attribute.STRING, v.Type(), "a non-finite float is written as a string")
	_, ok = back.Span().Attributes.Lookup("gen_ai.input.messages")
	assert.False(t, ok, "attributes the mapping does not read are not kept")
}

func TestObservationLineNotEnded(t *testing.T) {
	s := goldenSpan()
	s.EndTime = time.Time{}
	s.ParentSpanID = trace.SpanID{}
	s.Events, s.Links, s.Attributes = nil, nil, nil
	got := string(agentobs.NewObservationLine("r-1", s).AppendJSON(nil))
	assert.Contains(t, got, `"parent_span_id":null,`)
	assert.Contains(t, got, `"end_time_unix_nano":null,`)
	assert.Contains(t, got, `"attributes":{},"events":[],"links":[]`)
	back, err := agentobs.DecodeObservationLine([]byte(got))
	require.NoError(t, err)
	assert.True(t, back.EndTime.IsZero())
	assert.False(t, back.ParentSpanID.IsValid())
}

func TestDecodeObservationLineErrors(t *testing.T) {
	// Each case replaces one part of the golden line; the error names the key, never the content.
	tests := []struct {
		name, old, new, want string
	}{
		{"not json", `{"rollout_id"`, `{rollout_id"`, "not strict JSON"},
		{"missing key", `"dropped_links":1`, `"dropped_linkz":1`, "dropped_links is missing"},
		{"bad rollout id", `"rollout_id":"r-1"`, `"rollout_id":"SECRET/x"`, "rollout_id is not a valid rollout id"},
		{"upper-case hex", `"span_id":"0100000000000002"`, `"span_id":"01000000000000AB"`, "span_id is not 16 lowercase hex characters"},
		{"short trace id", `"trace_id":"0a0b0000000000000000000000000001"`, `"trace_id":"0a0b"`, "trace_id is not 32 lowercase hex characters"},
		{"zero span id", `"span_id":"0100000000000002"`, `"span_id":"0000000000000000"`, "span_id is all zeros"},
		{"parent not nullable as number", `"parent_span_id":"0300000000000004"`, `"parent_span_id":3`, "parent_span_id is not 16"},
		{"bad kind", `"kind":"internal"`, `"kind":"SECRET"`, "kind is not a span kind"},
		{"bad status", `"status_code":"error"`, `"status_code":"Error"`, "status_code is not unset, ok or error"},
		{"float time", `"start_time_unix_nano":1767319445123456789`, `"start_time_unix_nano":1.5`, "start_time_unix_nano is not an integer"},
		{"null start", `"start_time_unix_nano":1767319445123456789`, `"start_time_unix_nano":null`, "start_time_unix_nano is required"},
		{"mixed array", `"gymtrace.sandbox.id":[true]`, `"gymtrace.sandbox.id":[true,"SECRET"]`, "attributes.gymtrace.sandbox.id is not a typed attribute value"},
		{"nested object", `"gymtrace.sandbox.id":[true]`, `"gymtrace.sandbox.id":{"a":1}`, "is not a typed attribute value"},
		{"null attribute", `"gymtrace.sandbox.id":[true]`, `"gymtrace.sandbox.id":null`, "is not a typed attribute value"},
		{"huge int", `"gymtrace.sandbox.exit_code":-9`, `"gymtrace.sandbox.exit_code":18446744073709551615`, "is not a typed attribute value"},
		{"attributes not object", `"attributes":{"gen_ai`, `"attributes":[],"x":{"gen_ai`, "attributes is not a JSON object"},
		{"event without time", `"time_unix_nano":1767319445124456789`, `"time_unix_nano":null`, "events[0].time_unix_nano is required"},
		{"event not object", `"events":[{"name"`, `"events":[1,{"name"`, "events[0]. is not a JSON object"},
		{"link bad id", `"span_id":"0200000000000000"`, `"span_id":"SECRET"`, "links[0].span_id is not 16"},
		{"negative count", `"dropped_events":2`, `"dropped_events":-2`, "dropped_events is not a count"},
		{"array line", `{"rollout_id"`, `[{"rollout_id"`, "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, goldenLine, tt.old)
			line := strings.Replace(goldenLine, tt.old, tt.new, 1)
			if tt.name == "array line" {
				line = strings.TrimSuffix(line, "\n") + "]"
			}
			_, err := agentobs.DecodeObservationLine([]byte(line))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "SECRET", "errors never carry the line's content")
		})
	}
	_, err := agentobs.DecodeObservationLine([]byte(`"a string"`))
	assert.ErrorContains(t, err, "not a JSON object")

	// Unknown keys are ignored (a later writer may add keys).
	l, err := agentobs.DecodeObservationLine([]byte(strings.Replace(goldenLine, `{"rollout_id"`, `{"future":[1,{"x":2}],"rollout_id"`, 1)))
	require.NoError(t, err)
	assert.Equal(t, "r-1", l.RolloutID)
}

func TestReadObservations(t *testing.T) {
	store, err := capture.NewStore(t.TempDir())
	require.NoError(t, err)

	_, exists, err := agentobs.ReadBundle(store, "r-1")
	require.NoError(t, err)
	assert.False(t, exists, "no file: no bundle")

	mk := func(rid string, id byte, kind string) []byte {
		s := spanSpec{id: id, kind: kind, endMS: 5}.span()
		return agentobs.NewObservationLine(rid, s).AppendJSON(nil)
	}
	require.NoError(t, store.AppendObservation(t.Context(), "r-1", mk("r-1", 1, "agent")))
	path, err := store.ObservationsPath("r-1")
	require.NoError(t, err)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte("{not json SECRET}\n\n   \n[1,2]\n" + strings.Replace(string(mk("r-1", 2, "agent")), `"kind":"unspecified"`, `"kind":"?"`, 1) +
		string(mk("r-2", 3, "agent")) + `{"torn":`))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, store.AppendObservation(t.Context(), "r-1", mk("r-1", 4, "agent")), "D7: the torn tail stays one damaged line")

	lines, damaged, exists, err := agentobs.ReadObservations(store, "r-1")
	require.NoError(t, err)
	assert.True(t, exists)
	assert.Equal(t, 5, damaged, "not json, array, bad kind, other rollout, torn tail")
	require.Len(t, lines, 2)

	b, exists, err := agentobs.ReadBundle(store, "r-1")
	require.NoError(t, err)
	assert.True(t, exists)
	assert.Len(t, b.Records, 2)
	assert.Equal(t, []string{"observation_lines_unreadable <nil> count=5"}, gapCodes(b))
	assert.NotContains(t, dump(t, b), "SECRET")

	_, _, _, err = agentobs.ReadObservations(store, "../x")
	assert.ErrorContains(t, err, "Invalid rollout id")
	_, _, _, err = agentobs.ReadObservations(nil, "r-1")
	assert.Error(t, err)
}

func FuzzParseObservations(f *testing.F) {
	f.Add([]byte(goldenLine))
	f.Add([]byte(goldenLine + goldenLine + "{}\n\n"))
	f.Add([]byte(strings.Replace(goldenLine, `"dropped_links":1`, `"dropped_links":1,"x":[1.5e300,-0.0]`, 1)))
	f.Add([]byte(`{"rollout_id":"r","trace_id":"00000000000000000000000000000001","span_id":"0000000000000001","parent_span_id":null,"name":"","kind":"unspecified","start_time_unix_nano":-1,"end_time_unix_nano":null,"status_code":"ok","attributes":{"a":[],"b":[1,2.0]},"events":[],"links":[],"dropped_events":0,"dropped_links":0}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, damaged := agentobs.ParseObservations(data)
		nonBlank := 0
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(bytes.Trim(l, " \t\n\r\v\f")) > 0 {
				nonBlank++
			}
		}
		if len(lines)+damaged > nonBlank {
			t.Fatalf("%d lines + %d damaged > %d non-blank lines", len(lines), damaged, nonBlank)
		}
		for _, l := range lines {
			enc := l.AppendJSON(nil)
			back, err := agentobs.DecodeObservationLine(enc)
			if err != nil {
				t.Fatalf("a decoded line does not decode after encoding: %v", err)
			}
			if again := back.AppendJSON(nil); !bytes.Equal(enc, again) {
				t.Fatalf("encoding is not stable:\n%s\n%s", enc, again)
			}
		}
		b := agentobs.BuildBundle(lines)
		if err := b.Validate(); err != nil {
			t.Fatalf("BuildBundle gave an invalid bundle: %v", err)
		}
		if _, err := b.AppendJSON(nil); err != nil {
			t.Fatalf("bundle dump: %v", err)
		}
	})
}

// TestObservationLineUnsupportedValues: a kept key whose value the line format cannot hold (bytes,
// a map or a mixed array, as an OTLP sender may send) is written as its type only — the line stays
// readable, the rest of the span's observation survives, and the mapping reports the key's wrong
// type from the file exactly as from the span (a user trial's mixed gymtrace.model_call.ids
// vanished without a gap).
func TestObservationLineUnsupportedValues(t *testing.T) {
	for _, kv := range []attribute.KeyValue{
		attribute.ByteSlice("gymtrace.sandbox.provider", []byte("x")),
		attribute.Map("gymtrace.sandbox.provider", attribute.String("a", "b")),
		attribute.Slice("gymtrace.sandbox.provider", attribute.StringValue("a"), attribute.Int64Value(1)),
		attribute.Slice("gymtrace.model_call.ids", attribute.StringValue("c1"), attribute.Int64Value(2)),
	} {
		t.Run(string(kv.Key)+"/"+kv.Value.Type().String(), func(t *testing.T) {
			s := goldenSpan()
			s.Attributes = append(kvs{kv}, attribute.String("gymtrace.rollout.id", "r-1"), attribute.String("gen_ai.operation.name", "invoke_agent"))
			line := agentobs.NewObservationLine("r-1", s).AppendJSON(nil)
			assert.Contains(t, string(line), `"`+string(kv.Key)+`":{"unsupported_type":"`+kv.Value.Type().String()+`"}`)
			back, err := agentobs.DecodeObservationLine(line)
			require.NoError(t, err, "%s", line)
			_, ok := back.Span().Attributes.Lookup("gymtrace.rollout.id")
			assert.True(t, ok)
			got, ok := back.Span().Attributes.Lookup(string(kv.Key))
			require.True(t, ok)
			assert.Equal(t, kv.Value.Type(), got.Type())

			fromSpan := agentobs.BundleFromSpans([]agentobs.ObservationSpan{s})
			fromFile := agentobs.BundleFromSpans([]agentobs.ObservationSpan{back.Span()})
			assert.Equal(t, fromSpan, fromFile, "the file gives the span's bundle")
			if kv.Key != "gymtrace.model_call.ids" {
				return // not read for an invocation
			}
			assert.True(t, slices.ContainsFunc(fromFile.Gaps, func(g agentobs.ObservationGap) bool {
				return g.Detail != nil && strings.Contains(*g.Detail, string(kv.Key)+" is "+kv.Value.Type().String())
			}), "a gap names the key and its type: %+v", fromFile.Gaps)
		})
	}
}
