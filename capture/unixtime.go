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

// UnixSeconds returns t as UTC Unix seconds: t.UnixNano() / 1e9 computed exactly and rounded once to
// the nearest float64, ties to even (SPEC §0 "Durability contract": the reference's time.time()
// float), so times with few decimal digits stay exact (…201.25 s is 201.25, not 201.24999997). It
// does not allocate and is safe for concurrent use.
func UnixSeconds(t time.Time) float64 {
	ns := t.UnixNano()
	if ns%1e9 == 0 {
		return float64(ns / 1e9) // |ns/1e9| < 2^34: exact
	}
	// The decimal text "<ns>e-9" is the exact quotient, and strconv.ParseFloat rounds decimal text
	// correctly (IEEE 754 round to nearest, ties to even): one rounding of the exact value.
	var buf [24]byte
	b := strconv.AppendInt(buf[:0], ns, 10)
	b = append(b, "e-9"...)
	f, _ := strconv.ParseFloat(string(b), 64) // always a valid number well within float64 range
	return f
}

// TimeFromUnixSeconds returns the time, at nanosecond resolution, whose [UnixSeconds] is sec (the
// nearest nanosecond to sec's exact value). It is the inverse used to replay recorded times.
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
	if !n.IsInt64() {
		return time.Time{}, fmt.Errorf("capture: %s seconds is out of range", strconv.FormatFloat(sec, 'g', -1, 64))
	}
	return time.Unix(0, n.Int64()).UTC(), nil
}
