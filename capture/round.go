package capture

import (
	"strconv"
)

// RoundMS rounds a duration in milliseconds to two decimals exactly like Python's round(x, 2)
// (SPEC §3.1 latency_ms, latency_ttft_ms): the exact decimal value of the binary float is rounded
// half-to-even at the second decimal and the result is the float nearest that decimal. This
// differs from math.Round(x*100)/100 on values such as 121.345 (→ 121.34, as the double is
// slightly below the midpoint). NaN and ±Inf are returned unchanged.
func RoundMS(x float64) float64 {
	var buf [64]byte
	// strconv's fixed-precision formatting is exact (correctly rounded, ties to even).
	s := strconv.AppendFloat(buf[:0], x, 'f', 2, 64)
	r, err := strconv.ParseFloat(string(s), 64)
	if err != nil {
		return x
	}
	return r
}
