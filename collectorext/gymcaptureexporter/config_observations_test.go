package gymcaptureexporter

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/exporter/exportertest"

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
