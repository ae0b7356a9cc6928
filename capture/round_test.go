package capture

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
)

func TestRoundMS(t *testing.T) {
	// Expected values computed with Python 3 round(x, 2); the first block are values where
	// math.Round(x*100)/100 gives the other neighbour.
	tests := []struct{ in, want float64 }{
		{9221.285, 9221.28},
		{5475.915, 5475.91},
		{121.345, 121.34},
		{1813.935, 1813.93},
		{2155.625, 2155.62},
		{0.125, 0.12},
		{0.375, 0.38},
		{2.675, 2.67},
		{842.7000000001499, 842.7},
		{213.39999999963766, 213.4},
		{254.99999999999545, 255.0},
		{3.0000000000001137, 3.0},
		{2.100000000000435, 2.1},
		{57.10000000000015, 57.1},
		{100.00000000000009, 100.0},
		{0, 0},
		{1e300, 1e300},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, RoundMS(tc.in), "round(%v, 2)", tc.in)
	}
	neg := RoundMS(-0.001)
	assert.True(t, neg == 0 && math.Signbit(neg), "round(-0.001, 2) is -0.0")
	assert.True(t, math.IsNaN(RoundMS(math.NaN())))
	assert.True(t, math.IsInf(RoundMS(math.Inf(1)), 1))
}

func TestRoundMSGoldenLatencies(t *testing.T) {
	for _, c := range testvectors.Load(t, "raw_record_golden.json") {
		t.Run(c.Name, func(t *testing.T) {
			in := testvectors.Value(t, c.Input)
			line := testvectors.Value(t, []byte(mustString(t, testvectors.Value(t, c.Expected))))
			for _, k := range [][2]string{{"latency_ms_unrounded", "latency_ms"}, {"latency_ttft_ms_unrounded", "latency_ttft_ms"}} {
				want := vecFloat(t, get(line, k[1]))
				require.NotNil(t, want)
				assert.Equal(t, *want, RoundMS(*vecFloat(t, get(in, k[0]))), k[0])
			}
		})
	}
}
