package gymcaptureexporter

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/attribute"
)

// TestSpanAttributesLookup: every attribute.Value survives the trip to its OTLP form and back
// through the lookup.
func TestSpanAttributesLookup(t *testing.T) {
	tests := []struct {
		name string
		v    attribute.Value
	}{
		{name: "string", v: attribute.StringValue("policy é")},
		{name: "empty string", v: attribute.StringValue("")},
		{name: "int", v: attribute.Int64Value(-7)},
		{name: "float", v: attribute.Float64Value(842.7)},
		{name: "bool", v: attribute.BoolValue(true)},
		{name: "string slice", v: attribute.StringSliceValue([]string{"stop", "length"})},
		{name: "int slice", v: attribute.Int64SliceValue([]int64{1, 2})},
		{name: "float slice", v: attribute.Float64SliceValue([]float64{0.5})},
		{name: "bool slice", v: attribute.BoolSliceValue([]bool{false, true})},
		{name: "bytes", v: attribute.ByteSliceValue([]byte{0, 1, 2})},
		{name: "mixed slice", v: attribute.SliceValue(attribute.StringValue("a"), attribute.Int64Value(1))},
		{name: "map", v: attribute.MapValue(attribute.String("k", "v"), attribute.Int("n", 1))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := pcommon.NewMap()
			putValue(m.PutEmpty("k"), tt.v)
			got, ok := spanAttributes(m).Lookup("k")
			require.True(t, ok)
			assert.Equal(t, tt.v.Type(), got.Type())
			assert.Equal(t, tt.v.Emit(), got.Emit())
			_, ok = spanAttributes(m).Lookup("missing")
			assert.False(t, ok)
		})
	}
	t.Run("empty value", func(t *testing.T) {
		m := pcommon.NewMap()
		m.PutEmpty("k")
		got, ok := spanAttributes(m).Lookup("k")
		require.True(t, ok)
		assert.Equal(t, attribute.EMPTY, got.Type())
	})
}
