package report

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPercentile(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		p      float64
		want   *float64
	}{
		{"empty", nil, 50, nil},
		{"one", []float64{7}, 50, ptr(7)},
		{"median even count takes the lower", []float64{4, 1, 3, 2}, 50, ptr(2)},
		{"median odd count", []float64{5, 1, 3}, 50, ptr(3)},
		{"p95 of 20", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 95, ptr(19)},
		{"p100 is the max", []float64{3, 9, 1}, 100, ptr(9)},
		{"NaN ignored", []float64{math.NaN(), 2}, 50, ptr(2)},
		{"p out of range", []float64{1}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.values...)
			got := Percentile(tt.values, tt.p)
			if tt.want == nil {
				assert.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			assert.Equal(t, *tt.want, *got)
			assert.Equal(t, len(in), len(tt.values))
		})
	}
}

func ptr(v float64) *float64 { return &v }

func TestHistogram(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		target int
		width  float64
		counts []int
	}{
		{"empty", nil, 10, 1, []int{0}},
		{"zeros", []float64{0, 0}, 10, 1, []int{2}},
		{"latencies", []float64{12, 198, 250, 300, 412, 640}, 6, 200, []int{2, 2, 1, 1}},
		{"nice 2.5", []float64{0, 24}, 10, 2.5, []int{1, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
		{"max on an edge goes in its own bin", []float64{0, 10}, 10, 1, []int{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
		{"NaN and Inf ignored", []float64{1, math.NaN(), math.Inf(1)}, 4, 0.25, []int{0, 0, 0, 0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := Histogram(tt.values, tt.target)
			assert.Equal(t, tt.width, h.Width)
			assert.Equal(t, tt.counts, h.Counts)
			total := 0
			for _, c := range h.Counts {
				total += c
			}
			n := 0
			for _, v := range tt.values {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					n++
				}
			}
			assert.Equal(t, n, total, "every value counted once")
		})
	}
}

func TestNiceStep(t *testing.T) {
	for x, want := range map[float64]float64{0: 1, -3: 1, 0.3: 0.5, 1: 1, 1.2: 2, 2.2: 2.5, 3: 5, 7: 10, 130: 200, 4500: 5000} {
		assert.Equal(t, want, niceStep(x), "niceStep(%v)", x)
	}
}

func TestFormatDuration(t *testing.T) {
	for ms, want := range map[float64]string{0: "0", 0.5: "0.50ms", 12.4: "12ms", 999.4: "999ms", 1500: "1.5s", 59_940: "59.9s", 61_000: "1m01s", 3_599_000: "59m59s", 7_380_000: "2h03m", -5: "-5ms"} {
		assert.Equal(t, want, formatDuration(ms), "formatDuration(%v)", ms)
	}
	assert.Equal(t, "-", fmtMS(nil))
	nan := math.NaN()
	assert.Equal(t, "-", fmtMS(&nan))
}

// TestBinLabels: narrow bins get as many decimals as their start labels need to differ (a TTFT
// histogram of 0.5 ms bins read "1ms, 2ms, 2ms" before); wide ones keep formatDuration's text.
func TestBinLabels(t *testing.T) {
	narrow := HistogramBins{Start: 0, Width: 0.5, Counts: make([]int, 7)}
	labels, digits := binLabels(narrow, "")
	assert.Equal(t, []string{"0", "0.500ms", "1.0ms", "1.5ms", "2.0ms", "2.5ms", "3.0ms"}, labels)
	assert.Equal(t, 1, digits)
	wide := HistogramBins{Start: 10, Width: 20, Counts: make([]int, 3)}
	labels, digits = binLabels(wide, "+")
	assert.Equal(t, []string{"+10ms", "+30ms", "+50ms"}, labels)
	assert.Equal(t, 0, digits)
	tiny := HistogramBins{Start: 1, Width: 1e-9, Counts: make([]int, 3)}
	labels, digits = binLabels(tiny, "")
	assert.Len(t, labels, 3)
	assert.Equal(t, maxLabelDigits, digits, "labels stop at maxLabelDigits decimals")
}

func TestTrimAndClean(t *testing.T) {
	assert.Equal(t, "short", tailTrim("short", 16))
	assert.Equal(t, "…-attempt-2", tailTrim("task-1-rollout-7-attempt-2", 11))
	assert.Equal(t, "gpt-4o-mi…", headTrim("gpt-4o-mini-2024-07-18", 10))
	assert.Equal(t, "a?[31mred?", clean("a\x1b[31mred\n"))
}

func TestCompactNumber(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 3: "3", 2.5: "2.5", 1200: "1200", 12000: "12k", 1_500_000: "1.5M", 2_000_000: "2M"} {
		assert.Equal(t, want, compactNumber(v), "compactNumber(%v)", v)
	}
}
