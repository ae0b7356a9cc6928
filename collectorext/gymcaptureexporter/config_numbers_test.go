package gymcaptureexporter

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

// TestTraceWindowIntegers: a number an integer setting of observations_trace_window cannot hold
// as written (fractional, not finite, out of range) is refused before decoding, with the key,
// the value and the rule; whole numbers, also written as floats, are decoded.
func TestTraceWindowIntegers(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // every substring the error must contain; none: accepted
		ok   func(t *testing.T, w TraceWindowConfig)
	}{
		{
			name: "max_traces above int64",
			yaml: "max_traces: 99999999999999999999",
			want: []string{"observations_trace_window::max_traces: 100000000000000000000 (the number as YAML read it) is out of range: at most 9223372036854775807"},
		},
		{
			name: "max_traces just above int64",
			yaml: "max_traces: 9223372036854775808",
			want: []string{"observations_trace_window::max_traces: 9223372036854775808 is out of range: at most 9223372036854775807"},
		},
		{
			name: "max_held_spans far below int64",
			yaml: "max_held_spans: -99999999999999999999",
			want: []string{"observations_trace_window::max_held_spans: -100000000000000000000 (the number as YAML read it) is out of range: at least -9223372036854775808"},
		},
		{
			name: "max_held_bytes fractional",
			yaml: "max_held_bytes: 65536.5",
			want: []string{"observations_trace_window::max_held_bytes: 65536.5 is not a whole number: an integer is required"},
		},
		{
			name: "max_held_bytes above int64",
			yaml: "max_held_bytes: 18446744073709551615",
			want: []string{"observations_trace_window::max_held_bytes: 18446744073709551615 is out of range"},
		},
		{
			name: "max_traces infinite",
			yaml: "max_traces: .inf",
			want: []string{"observations_trace_window::max_traces: +Inf is not a whole number"},
		},
		{
			name: "max_held_spans not a number",
			yaml: "max_held_spans: .nan",
			want: []string{"observations_trace_window::max_held_spans: NaN is not a whole number"},
		},
		{
			name: "duration fractional nanoseconds",
			yaml: "duration: 1.5",
			want: []string{"observations_trace_window::duration: 1.5 is not a whole number: an integer is required (a number without a unit is read as nanoseconds; write it with one, e.g. 1m)"},
		},
		{
			name: "duration above int64 nanoseconds",
			yaml: "duration: 1e20",
			want: []string{"observations_trace_window::duration: 100000000000000000000 (the number as YAML read it) is out of range"},
		},
		{
			name: "every key at once",
			yaml: "{duration: 0.5, max_traces: 1.5, max_held_spans: 2.5, max_held_bytes: 1e30}",
			want: []string{
				"observations_trace_window::duration: 0.5 is not",
				"observations_trace_window::max_traces: 1.5 is not",
				"observations_trace_window::max_held_spans: 2.5 is not",
				"observations_trace_window::max_held_bytes: 1000000000000000000000000000000 (the number as YAML read it) is out of range",
			},
		},
		{
			name: "whole numbers written as floats",
			yaml: "{max_traces: 10.0, max_held_spans: 1e3, max_held_bytes: 65536.0}",
			ok: func(t *testing.T, w TraceWindowConfig) {
				assert.Equal(t, 10, w.MaxTraces)
				assert.Equal(t, 1000, w.MaxHeldSpans)
				assert.Equal(t, int64(65536), w.MaxHeldBytes)
			},
		},
		{
			name: "largest int64",
			yaml: "max_held_bytes: 9223372036854775807",
			ok: func(t *testing.T, w TraceWindowConfig) {
				assert.Equal(t, int64(9223372036854775807), w.MaxHeldBytes)
			},
		},
		{
			name: "duration with a unit, others default",
			yaml: "duration: 30s",
			ok: func(t *testing.T, w TraceWindowConfig) {
				want := createDefaultConfig().(*Config).ObservationsTraceWindow
				want.Duration = 30 * time.Second
				assert.Equal(t, want, w)
			},
		},
		{
			name: "a string is left to the decoder",
			yaml: `max_traces: "10"`,
			want: []string{"max_traces", "expected type 'int'"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := confmap.NewRetrievedFromYAML([]byte("capture_dir: /srv/captures\nobservations_trace_window: " + indentFlow(tt.yaml)))
			require.NoError(t, err)
			conf, err := r.AsConf()
			require.NoError(t, err)
			cfg := createDefaultConfig().(*Config)
			err = conf.Unmarshal(cfg)
			if tt.want == nil {
				require.NoError(t, err)
				require.NoError(t, confmap.Validate(cfg))
				tt.ok(t, cfg.ObservationsTraceWindow)
				return
			}
			require.Error(t, err)
			for _, w := range tt.want {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}

// indentFlow makes a one-key "key: value" line a flow mapping; a flow mapping is kept.
func indentFlow(s string) string {
	if s[0] == '{' {
		return s
	}
	return "{" + s + "}"
}
