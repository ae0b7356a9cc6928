package capture

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"
)

// errNoTime is returned by TimeFromUnixSeconds for values that are not finite.
var errNoTime = errors.New("not a finite time")

var nanosPerSecond = big.NewRat(1e9, 1)

// UnixSeconds returns t as UTC Unix seconds: t's nanoseconds since the Unix epoch / 1e9 computed
// exactly and rounded once to the nearest float64, ties to even (SPEC §0 "Durability contract":
// seconds = UnixNano / 1e9 as a float64, the reference's time.time() float), so times with few
// decimal digits stay exact (…201.25 s is 201.25, not 201.24999997). It holds for every t, not only
// the int64 nanoseconds of t.UnixNano (years 1678 to 2262): an OTLP timestamp is an unsigned
// nanosecond count, and 2^64−1 ns (year 2554) is 18446744073.709552 s, never a wrapped negative
// time. The zero time is an unset timestamp (OTLP's 0, what an SDK exporter sends for it) and gives
// 0.0, not the seconds of year 1. It does not allocate and is safe for concurrent use.
func UnixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	if t.Nanosecond() == 0 {
		return float64(t.Unix()) // one rounding of an integer (exact below 2^53 s)
	}
	// The decimal text "<nanoseconds>e-9" is the exact value, and strconv.ParseFloat rounds decimal
	// text correctly (IEEE 754 round to nearest, ties to even): one rounding of it.
	var buf [32]byte
	b := append(AppendUnixNano(buf[:0], t), "e-9"...)
	f, _ := strconv.ParseFloat(string(b), 64) // always a valid number well within float64 range
	return f
}

// AppendUnixNano appends t's nanoseconds since the Unix epoch to dst as an exact decimal integer
// ("-" before the epoch), for every t: not only the int64 range of t.UnixNano (years 1678 to
// 2262), so an OTLP timestamp past MaxInt64 (up to 2^64−1 ns, year 2554) is written as OTLP counts
// it. The zero time is no special case (callers decide what an unset time is written as). It is
// the exact text [UnixSeconds] rounds and the observation lines' times. Safe for concurrent use.
func AppendUnixNano(dst []byte, t time.Time) []byte {
	sec, ns := t.Unix(), int64(t.Nanosecond())
	if sec < 0 {
		// -(sec·1e9 + ns) = (-sec-1)·1e9 + (1e9-ns) for 0 < ns < 1e9, else -sec·1e9.
		dst = append(dst, '-')
		if sec, ns = -sec, -ns; ns < 0 {
			sec, ns = sec-1, ns+1e9
		}
	}
	if sec == 0 {
		return strconv.AppendInt(dst, ns, 10)
	}
	dst = strconv.AppendUint(dst, uint64(sec), 10)
	var frac [9]byte
	for i := len(frac) - 1; i >= 0; i-- {
		frac[i] = byte('0' + ns%10)
		ns /= 10
	}
	return append(dst, frac[:]...)
}

// TimeFromUnixSeconds returns the time, at nanosecond resolution, whose [UnixSeconds] is sec (the
// nearest nanosecond to sec's exact value; 0 is the epoch, not the zero time), for any finite sec
// whose whole seconds fit an int64. It is the inverse used to replay recorded times.
func TimeFromUnixSeconds(sec float64) (time.Time, error) {
	if math.IsNaN(sec) || math.IsInf(sec, 0) {
		return time.Time{}, fmt.Errorf("capture: %s: %w", strconv.FormatFloat(sec, 'g', -1, 64), errNoTime)
	}
	r := new(big.Rat).SetFloat64(sec)
	r.Mul(r, nanosPerSecond)
	// Round half away from zero to an integer number of nanoseconds.
	n := new(big.Int).Quo(r.Num(), r.Denom())
	rem := new(big.Rat).Sub(r, new(big.Rat).SetInt(n))
	half := big.NewRat(1, 2)
	if rem.Sign() > 0 && rem.Cmp(half) >= 0 {
		n.Add(n, big.NewInt(1))
	} else if rem.Sign() < 0 && rem.Cmp(new(big.Rat).Neg(half)) <= 0 {
		n.Sub(n, big.NewInt(1))
	}
	s, ns := new(big.Int).DivMod(n, big.NewInt(1e9), new(big.Int)) // Euclidean: 0 <= ns < 1e9
	if !s.IsInt64() {
		return time.Time{}, fmt.Errorf("capture: %s seconds is out of range", strconv.FormatFloat(sec, 'g', -1, 64))
	}
	return time.Unix(s.Int64(), ns.Int64()).UTC(), nil
}
