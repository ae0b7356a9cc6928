package gymcaptureexporter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/capturetest"
)

// otlpJSON is one OTLP/JSON request (what a user's agent sends gymtrace-otelcol) of one resource
// with attributes resAttrs (a JSON array) and spans (JSON objects).
func otlpJSON(t *testing.T, resAttrs string, spans ...string) ptrace.Traces {
	t.Helper()
	doc := `{"resourceSpans":[{"resource":{"attributes":` + resAttrs + `},"scopeSpans":[{"scope":{"name":"agent"},"spans":[` +
		strings.Join(spans, ",") + `]}]}]}`
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(doc))
	require.NoError(t, err)
	return td
}

// modelCallJSON is an OTLP/JSON model-call span of rollout r-1 with these timestamps.
func modelCallJSON(start, end string) string {
	return `{"traceId":"7a000000000000000000000000000001","spanId":"0c00000000000001","name":"chat m","kind":3,` +
		`"startTimeUnixNano":"` + start + `","endTimeUnixNano":"` + end + `","attributes":[` +
		`{"key":"gymtrace.rollout.id","value":{"stringValue":"r-1"}},{"key":"gymtrace.model_call.id","value":{"stringValue":"mc-1"}},` +
		`{"key":"gymtrace.dialect","value":{"stringValue":"chat"}},{"key":"gymtrace.latency_ms","value":{"doubleValue":1.5}}]}`
}

// toolJSON is an OTLP/JSON execute_tool span of trace 7a..01 with span id 0d..<n>, these
// timestamps and extra attributes (a JSON array's members, "" for none).
func toolJSON(n, start, end, attrs string) string {
	if attrs != "" {
		attrs = "," + attrs
	}
	return `{"traceId":"7a000000000000000000000000000001","spanId":"0d0000000000000` + n + `","name":"execute_tool bash","kind":1,` +
		`"startTimeUnixNano":"` + start + `","endTimeUnixNano":"` + end + `","attributes":[` +
		`{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"gen_ai.tool.call.id","value":{"stringValue":"call_1"}},` +
		`{"key":"gymtrace.agent.invocation.id","value":{"stringValue":"inv-1"}}` + attrs + `]}`
}

// TestOTLPJSONTimestamps: OTLP timestamps are unsigned nanosecond counts, 0 meaning unset; each
// becomes its exact seconds in the model-call record (SPEC §0 "Durability contract": seconds =
// UnixNano / 1e9), never a wrapped int64 or the zero time's year 1, and its exact count in an
// observation line that reads back.
func TestOTLPJSONTimestamps(t *testing.T) {
	const valid, later, maxU64 = "1796411786191516600", "1796411787191516600", "18446744073709551615"
	t.Run("model-call record", func(t *testing.T) {
		tests := []struct {
			name, start, end, want string
		}{
			{"valid", valid, later, `"started_at":1796411786.1915166,"completed_at":1796411787.1915166,`},
			{"end 0", valid, "0", `"started_at":1796411786.1915166,"completed_at":0.0,`},
			{"start 0", "0", valid, `"started_at":0.0,"completed_at":1796411786.1915166,`},
			{"both 2^64-1", maxU64, maxU64, `"started_at":18446744073.709553,"completed_at":18446744073.709553,`},
			{"both 2^63", "9223372036854775808", "9223372036854775808", `"started_at":9223372036.854776,"completed_at":9223372036.854776,`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				e, dir, _ := newStarted(t, nil)
				require.NoError(t, e.pushTraces(t.Context(), otlpJSON(t, `[]`, modelCallJSON(tt.start, tt.end))))
				b, err := os.ReadFile(filepath.Join(dir, "r-1"+capture.CaptureFileSuffix))
				require.NoError(t, err)
				assert.Contains(t, string(b), tt.want)
			})
		}
	})
	t.Run("observation line", func(t *testing.T) {
		tests := []struct {
			name, start, end, wantLine, wantBundle string
		}{
			{"valid", valid, later, `"start_time_unix_nano":1796411786191516600,"end_time_unix_nano":1796411787191516600,`,
				`"started_at":1796411786.1915166,"completed_at":1796411787.1915166,"duration_ms":1000.0,`},
			{"start 0, end 2^64-1", "0", maxU64, `"start_time_unix_nano":0,"end_time_unix_nano":18446744073709551615,`,
				`"started_at":0.0,"completed_at":18446744073.709553,`},
			{"end 0: not ended", valid, "0", `"start_time_unix_nano":1796411786191516600,"end_time_unix_nano":null,`,
				`"started_at":1796411786.1915166,"completed_at":null,`},
			{"both 2^64-1", maxU64, maxU64, `"start_time_unix_nano":18446744073709551615,"end_time_unix_nano":18446744073709551615,`,
				`"started_at":18446744073.709553,"completed_at":18446744073.709553,"duration_ms":0.0,`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				e, dir, _ := newStarted(t, nil)
				require.NoError(t, e.pushTraces(t.Context(), otlpJSON(t, `[]`,
					toolJSON("1", tt.start, tt.end, `{"key":"gymtrace.rollout.id","value":{"stringValue":"o-1"}}`))))
				b, err := os.ReadFile(filepath.Join(dir, "o-1"+capture.ObservationsFileSuffix))
				require.NoError(t, err)
				assert.Contains(t, string(b), tt.wantLine)
				store, err := capture.NewStore(dir)
				require.NoError(t, err)
				lines, damaged, _, err := agentobs.ReadObservations(store, "o-1")
				require.NoError(t, err)
				assert.Zero(t, damaged, "the line reads back")
				require.Len(t, lines, 1)
				assert.Equal(t, string(b), string(lines[0].AppendJSON(nil)), "and writes back the same bytes")
				bundle, err := agentobs.BuildBundle(lines).AppendJSON(nil)
				require.NoError(t, err)
				assert.Contains(t, string(bundle), tt.wantBundle)
			})
		}
	})
}

// TestOTLPJSONRolloutIDRefused: an observation span whose gymtrace.rollout.id is present but names
// no rollout (OTLP {"intValue":"5"} on the span or its resource, "" on the span) is a permanent
// error naming the key and its type, as for a model-call span, and is written nowhere: not to its
// trace's rollout (o-good, named by a model-call span of the trace), not to its resource's, not held
// for the unattributed file (SPEC §0 D18: span, then resource; the span's wins).
func TestOTLPJSONRolloutIDRefused(t *testing.T) {
	const ts, te = "1796411786191516600", "1796411787191516600"
	goodCall := strings.Replace(strings.Replace(modelCallJSON(ts, te), `"r-1"`, `"o-good"`, 1), `"chat m"`, `"chat good"`, 1)
	intID := `{"key":"gymtrace.rollout.id","value":{"intValue":"5"}}`
	tests := []struct {
		name, resource, spanAttr string
		withCall                 bool
		wantErr                  string
	}{
		{name: "int on the span, the trace names o-good", resource: `[]`, spanAttr: intID, withCall: true,
			wantErr: "gymcapture: observation span: capture attributes: gymtrace.rollout.id must be a string, got int64"},
		{name: "int on the span, alone in its trace", resource: `[]`, spanAttr: intID,
			wantErr: "gymcapture: observation span: capture attributes: gymtrace.rollout.id must be a string, got int64"},
		{name: "int on the span, o-res on the resource", resource: `[{"key":"gymtrace.rollout.id","value":{"stringValue":"o-res"}}]`, spanAttr: intID,
			wantErr: "capture attributes: gymtrace.rollout.id must be a string, got int64"},
		{name: "int on the resource, the trace names o-good", resource: `[` + intID + `]`, withCall: true,
			wantErr: "capture attributes: gymtrace.rollout.id must be a string, got int64 (the span's resource attribute; the span has none)"},
		{name: "empty string on the span, the trace names o-good", resource: `[]`, withCall: true,
			spanAttr: `{"key":"gymtrace.rollout.id","value":{"stringValue":""}}`, wantErr: "gymcapture: observation span: Invalid rollout id: ''"},
		{name: "invalid string on the span", resource: `[]`, withCall: true,
			spanAttr: `{"key":"gymtrace.rollout.id","value":{"stringValue":"../../etc/x"}}`, wantErr: "Invalid rollout id: '../../etc/x'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, dir, m := newStarted(t, nil)
			if tt.withCall {
				require.NoError(t, e.pushTraces(t.Context(), otlpJSON(t, `[]`, goodCall)))
			}
			err := e.pushTraces(t.Context(), otlpJSON(t, tt.resource, toolJSON("1", ts, te, tt.spanAttr)))
			require.Error(t, err)
			assert.ErrorContains(t, err, tt.wantErr)
			assert.True(t, consumererror.IsPermanent(err))
			assert.Equal(t, int64(1), capturetest.Counts(t, m)["observation/rejected"])
			require.NoError(t, e.shutdown(t.Context()), "nothing held to flush")
			for name := range capturetest.DirContents(t, dir) {
				assert.NotContains(t, name, capture.ObservationsFileSuffix, "no observations file of any rollout, nor the unattributed one")
			}
		})
	}
}
