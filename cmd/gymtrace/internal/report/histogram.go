package report

import (
	"math"
	"slices"
)

// HistogramBins is a histogram over equal-width bins: bin i counts the values in
// [Start+i*Width, Start+(i+1)*Width).
type HistogramBins struct {
	Start  float64 // lower bound of the first bin (0 for non-negative values)
	Width  float64 // bin width: 1, 2, 2.5 or 5 times a power of ten
	Counts []int   // values per bin; len ≥ 1
}

// Histogram bins values (NaN and ±Inf ignored) into about target bins (at least 1) of a "nice" width
// starting at 0 (or at the floor of the smallest value, when negative), so every value is counted in
// exactly one bin. With no value it returns one empty bin of width 1.
func Histogram(values []float64, target int) HistogramBins {
	target = max(target, 1)
	notFinite := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	values = slices.DeleteFunc(slices.Clone(values), notFinite)
	if len(values) == 0 {
		return HistogramBins{Width: 1, Counts: make([]int, 1)}
	}
	lo, hi := slices.Min(values), slices.Max(values)
	start := math.Min(0, math.Floor(lo))
	width := niceStep((hi - start) / float64(target))
	n := int(math.Floor((hi-start)/width)) + 1
	h := HistogramBins{Start: start, Width: width, Counts: make([]int, n)}
	for _, v := range values {
		h.Counts[h.Bin(v)]++
	}
	return h
}

// Bin returns the index of the bin v falls in, clamped to the histogram's bins.
func (h HistogramBins) Bin(v float64) int {
	i := int(math.Floor((v - h.Start) / h.Width))
	return min(max(i, 0), len(h.Counts)-1)
}

// niceStep returns the smallest of 1, 2, 2.5 and 5 times a power of ten that is at least x (1 for
// x ≤ 0 or a value too small to matter).
func niceStep(x float64) float64 {
	if !(x > 1e-9) || math.IsInf(x, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= x*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}
