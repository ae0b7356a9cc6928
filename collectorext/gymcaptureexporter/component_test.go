package gymcaptureexporter

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/gymtrace/gymtrace/collectorext/gymcaptureexporter/internal/metadata"
)

// The tests in this file follow the shape of the Collector's mdatagen-generated component tests
// (generated_component_test.go), with the capture directory in t.TempDir.

func TestComponentFactoryType(t *testing.T) {
	require.Equal(t, metadata.Type, NewFactory().Type())
}

func TestComponentConfigStruct(t *testing.T) {
	require.NoError(t, componenttest.CheckConfigStruct(NewFactory().CreateDefaultConfig()))
}

func lifecycleConfig(t *testing.T) component.Config {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.CaptureDir = filepath.Join(t.TempDir(), "captures")
	return cfg
}

func TestComponentLifecycle(t *testing.T) {
	factory := NewFactory()
	create := func(t *testing.T) exporter.Traces {
		c, err := factory.CreateTraces(context.Background(), exportertest.NewNopSettings(metadata.Type), lifecycleConfig(t))
		require.NoError(t, err)
		return c
	}
	t.Run("traces-shutdown", func(t *testing.T) {
		c := create(t)
		require.NoError(t, c.Shutdown(context.Background()), "Shutdown without Start")
		require.NoError(t, c.Shutdown(context.Background()), "Shutdown twice")
	})
	t.Run("traces-lifecycle", func(t *testing.T) {
		c := create(t)
		require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
		require.NotPanics(t, func() {
			traces := generateLifecycleTestTraces()
			if !c.Capabilities().MutatesData {
				traces.MarkReadOnly()
			}
			require.NoError(t, c.ConsumeTraces(context.Background(), traces))
		})
		require.NoError(t, c.Shutdown(context.Background()))
		require.NoError(t, c.Shutdown(context.Background()), "Shutdown twice")
	})
}

func generateLifecycleTestTraces() ptrace.Traces {
	traces := ptrace.NewTraces()
	rs := traces.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("resource", "R1")
	span := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.Attributes().PutStr("test_attr", "value_1")
	span.SetName("test_span")
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(time.Now().Add(-1 * time.Second)))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(time.Now()))
	return traces
}

// TestComponentStartCreatesDir: Start creates capture_dir with dir_mode exactly; a capture_dir
// that cannot be a directory fails Start with an error naming it.
func TestComponentStartCreatesDir(t *testing.T) {
	factory := NewFactory()
	t.Run("created with dir_mode", func(t *testing.T) {
		cfg := lifecycleConfig(t).(*Config)
		cfg.DirMode = "0750"
		c, err := factory.CreateTraces(t.Context(), exportertest.NewNopSettings(metadata.Type), cfg)
		require.NoError(t, err)
		require.NoError(t, c.Start(t.Context(), componenttest.NewNopHost()))
		st, err := os.Stat(cfg.CaptureDir)
		require.NoError(t, err)
		assert.True(t, st.IsDir())
		assert.Equal(t, os.FileMode(0o750), st.Mode().Perm())
		require.NoError(t, c.Shutdown(t.Context()))
	})
	t.Run("capture_dir is a file", func(t *testing.T) {
		cfg := lifecycleConfig(t).(*Config)
		require.NoError(t, os.WriteFile(cfg.CaptureDir, nil, 0o600))
		c, err := factory.CreateTraces(t.Context(), exportertest.NewNopSettings(metadata.Type), cfg)
		require.NoError(t, err)
		err = c.Start(t.Context(), componenttest.NewNopHost())
		require.Error(t, err)
		assert.ErrorContains(t, err, cfg.CaptureDir)
		require.NoError(t, c.Shutdown(t.Context()))
	})
	t.Run("create refuses an invalid mode", func(t *testing.T) {
		cfg := lifecycleConfig(t).(*Config)
		cfg.FileMode = "0400"
		_, err := factory.CreateTraces(t.Context(), exportertest.NewNopSettings(metadata.Type), cfg)
		require.Error(t, err)
		assert.ErrorContains(t, err, "file_mode")
	})
}

// TestMetadata keeps metadata.yaml and internal/metadata in step.
func TestMetadata(t *testing.T) {
	cm, err := confmaptest.LoadConf("metadata.yaml")
	require.NoError(t, err)
	assert.Equal(t, metadata.Type.String(), cm.Get("type"))
	assert.Equal(t, "exporter", cm.Get("status::class"))
	assert.Equal(t, component.StabilityLevelAlpha, metadata.TracesStability)
	assert.Equal(t, []any{"traces"}, cm.Get("status::stability::alpha"))
	assert.Equal(t, false, cm.Get("sending_queue::overrides::enabled"))

	metrics, err := cm.Sub("telemetry::metrics")
	require.NoError(t, err)
	var names []string
	for name := range metrics.ToStringMap() {
		names = append(names, name)
	}
	require.Equal(t, []string{"exporter_gymcapture_spans"}, names)
	assert.Equal(t, metadata.SpansMetric, "otelcol_"+names[0])
	assert.Equal(t, []any{metadata.OutcomeKey}, metrics.Get(names[0]+"::attributes"))
	var outcomes []any
	for o := range numOutcomes {
		outcomes = append(outcomes, o.String())
	}
	assert.Equal(t, outcomes, cm.Get("attributes::"+metadata.OutcomeKey+"::enum"))
}
