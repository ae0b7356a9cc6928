package gymcaptureexporter

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/otel/attribute"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/capturetest"
	"github.com/gymtrace/gymtrace/collectorext/gymcaptureexporter/internal/metadata"
)

// TestConfigObservations: observations defaults to true, can be turned off, and the example
// configuration spells out the default.
func TestConfigObservations(t *testing.T) {
	tests := []struct {
		id   component.ID
		want bool
	}{
		{id: component.NewIDWithName(metadata.Type, "default"), want: true},
		{id: component.NewIDWithName(metadata.Type, "on"), want: true},
		{id: component.NewIDWithName(metadata.Type, "off"), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg, err := loadConfig(t, "observations.yaml", tt.id)
			require.NoError(t, err)
			require.NoError(t, confmap.Validate(cfg))
			assert.Equal(t, tt.want, cfg.Observations)
			e, err := newCaptureExporter(cfg, exportertest.NewNopSettings(metadata.Type))
			require.NoError(t, err)
			assert.Equal(t, tt.want, e.observations)
		})
	}
	t.Run("not a boolean", func(t *testing.T) {
		_, err := loadConfig(t, "observations.yaml", component.NewIDWithName(metadata.Type, "bad"))
		require.Error(t, err)
		assert.ErrorContains(t, err, "observations")
	})
	t.Run("example configuration", func(t *testing.T) {
		cm, err := confmaptest.LoadConf("../config/gymtrace-otelcol.yaml")
		require.NoError(t, err)
		assert.Equal(t, true, cm.Get("exporters::gymcapture::observations"))
	})
}

// TestObservationsTraceWindowConfigured: observations_trace_window reaches the observations writer
// (SPEC §0 D18): with max_held_spans 1, a second held span of another trace writes the first to
// the unattributed file at once (reason window_full); Shutdown writes the second (flushed).
func TestObservationsTraceWindowConfigured(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.CaptureDir = t.TempDir()
	cfg.ObservationsTraceWindow.MaxHeldSpans = 1
	exp, err := NewFactory().CreateTraces(t.Context(), exportertest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(t.Context(), componenttest.NewNopHost()))

	now := time.Unix(1_800_000_000, 0)
	tool := func(trace, span byte) capturetest.Span {
		return capturetest.Span{Name: "execute_tool x", Start: now, End: now.Add(time.Second),
			TraceID: oteltrace.TraceID{trace}, SpanID: oteltrace.SpanID{span},
			Attributes: []attribute.KeyValue{attribute.String("gen_ai.operation.name", "execute_tool")}}
	}
	path := filepath.Join(cfg.CaptureDir, capture.UnattributedObservationsFile)
	require.NoError(t, exp.ConsumeTraces(t.Context(), toTraces([]capturetest.Span{tool(1, 1)})))
	assert.NoFileExists(t, path, "one held span fits the window")
	require.NoError(t, exp.ConsumeTraces(t.Context(), toTraces([]capturetest.Span{tool(2, 2)})))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, 1, bytes.Count(data, []byte("\n")))
	assert.Contains(t, string(data), `"unattributed_reason":"window_full"`)

	require.NoError(t, exp.Shutdown(context.Background()))
	data, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, 2, bytes.Count(data, []byte("\n")))
	assert.Contains(t, string(data), `"unattributed_reason":"flushed"`)
}

// TestObservationsTraceWindowHeldBytes: max_held_bytes reaches the observations writer (SPEC §0
// D18): a held span whose kept attributes alone pass the bound is written to the unattributed file
// at once (reason window_full), while a small span of another trace stays held until Shutdown.
func TestObservationsTraceWindowHeldBytes(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.CaptureDir = t.TempDir()
	cfg.ObservationsTraceWindow.MaxHeldBytes = minHeldBytes
	exp, err := NewFactory().CreateTraces(t.Context(), exportertest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(t.Context(), componenttest.NewNopHost()))

	now := time.Unix(1_800_000_000, 0)
	tool := func(trace, span byte, name string) capturetest.Span {
		return capturetest.Span{Name: "execute_tool", Start: now, End: now.Add(time.Second),
			TraceID: oteltrace.TraceID{trace}, SpanID: oteltrace.SpanID{span},
			Attributes: []attribute.KeyValue{attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", name)}}
	}
	path := filepath.Join(cfg.CaptureDir, capture.UnattributedObservationsFile)
	require.NoError(t, exp.ConsumeTraces(t.Context(), toTraces([]capturetest.Span{tool(1, 1, "small")})))
	require.NoError(t, exp.ConsumeTraces(t.Context(), toTraces([]capturetest.Span{tool(2, 2, strings.Repeat("x", minHeldBytes))})))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, 1, bytes.Count(data, []byte("\n")), "only the large span went out")
	assert.Contains(t, string(data), `"unattributed_reason":"window_full"`)
	assert.Contains(t, string(data), `"span_id":"0200000000000000"`)

	require.NoError(t, exp.Shutdown(context.Background()))
	data, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, 2, bytes.Count(data, []byte("\n")))
	assert.Contains(t, string(data), `"unattributed_reason":"flushed"`)
}
