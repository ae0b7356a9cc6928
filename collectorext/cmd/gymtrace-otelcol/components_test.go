package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
)

func TestComponents(t *testing.T) {
	f, err := components()
	require.NoError(t, err)
	require.NotNil(t, f.Telemetry)
	tests := []struct {
		kind  string
		got   func(component.Type) bool
		types []string
	}{
		{kind: "receivers", got: func(ty component.Type) bool { _, ok := f.Receivers[ty]; return ok }, types: []string{"otlp"}},
		{kind: "processors", got: func(ty component.Type) bool { _, ok := f.Processors[ty]; return ok }, types: []string{"batch", "memory_limiter"}},
		{kind: "exporters", got: func(ty component.Type) bool { _, ok := f.Exporters[ty]; return ok },
			types: []string{"debug", "otlp_grpc", "otlp", "otlp_http", "otlphttp", "gymcapture"}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			for _, ty := range tt.types {
				assert.True(t, tt.got(component.MustNewType(ty)), "%s %s", tt.kind, ty)
			}
		})
	}
	assert.Len(t, f.Receivers, 1)
	assert.Len(t, f.Processors, 2)
	assert.Len(t, f.Exporters, 6, "4 exporters, 2 of them also under their deprecated aliases")
}

func TestSettings(t *testing.T) {
	s := settings()
	assert.Equal(t, "gymtrace-otelcol", s.BuildInfo.Command)
	assert.Equal(t, version, s.BuildInfo.Version)
	assert.Len(t, s.ConfigProviderSettings.ResolverSettings.ProviderFactories, 3)
}
