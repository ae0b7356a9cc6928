package gymcaptureexporter

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/gymtrace/gymtrace/collectorext/gymcaptureexporter/internal/metadata"
)

// generated_component_test.go (mdatagen) creates, starts, feeds and shuts the exporter down with
// metadata.yaml's tests config; the tests here add what it does not check, with the capture
// directory in t.TempDir.

func lifecycleConfig(t *testing.T) *Config {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.CaptureDir = filepath.Join(t.TempDir(), "captures")
	return cfg
}

// TestComponentShutdownTwice: Shutdown is safe without Start and when called twice, before and
// after Start (exporterhelper's own Shutdown panics on a second call: onceShutdown).
func TestComponentShutdownTwice(t *testing.T) {
	for _, tt := range []struct {
		name  string
		start bool
	}{{"without start", false}, {"after start", true}} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewFactory().CreateTraces(t.Context(), exportertest.NewNopSettings(metadata.Type), lifecycleConfig(t))
			require.NoError(t, err)
			if tt.start {
				require.NoError(t, c.Start(t.Context(), componenttest.NewNopHost()))
			}
			require.NoError(t, c.Shutdown(t.Context()))
			require.NoError(t, c.Shutdown(t.Context()), "second Shutdown")
		})
	}
}

// TestComponentStartCreatesDir: Start creates capture_dir with dir_mode exactly; a capture_dir
// that cannot be a directory fails Start with an error naming it.
func TestComponentStartCreatesDir(t *testing.T) {
	factory := NewFactory()
	t.Run("created with dir_mode", func(t *testing.T) {
		cfg := lifecycleConfig(t)
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
		cfg := lifecycleConfig(t)
		require.NoError(t, os.WriteFile(cfg.CaptureDir, nil, 0o600))
		c, err := factory.CreateTraces(t.Context(), exportertest.NewNopSettings(metadata.Type), cfg)
		require.NoError(t, err)
		err = c.Start(t.Context(), componenttest.NewNopHost())
		require.Error(t, err)
		assert.ErrorContains(t, err, cfg.CaptureDir)
		require.NoError(t, c.Shutdown(t.Context()))
	})
	t.Run("create refuses an invalid mode", func(t *testing.T) {
		cfg := lifecycleConfig(t)
		cfg.FileMode = "0400"
		_, err := factory.CreateTraces(t.Context(), exportertest.NewNopSettings(metadata.Type), cfg)
		require.Error(t, err)
		assert.ErrorContains(t, err, "file_mode")
	})
}
