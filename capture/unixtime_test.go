package capture

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/ojson"
)

// exactUnixSeconds is the reference for UnixSeconds: ns/1e9 as an exact rational, rounded once by
// math/big (to nearest, ties to even).
func exactUnixSeconds(ns int64) float64 {
	f, _ := new(big.Rat).SetFrac64(ns, 1e9).Float64()
	return f
}

// TestUnixSecondsMatchesExactQuotient checks UnixSeconds against the exact rational quotient over
// nanosecond counts around today, at the edges of the int64 range and at random, comparing the
// float64 bits and the text the record prints (ojson.AppendFloat).
func TestUnixSecondsMatchesExactQuotient(t *testing.T) {
	check := func(t *testing.T, ns int64) {
		t.Helper()
		want := exactUnixSeconds(ns)
		got := UnixSeconds(time.Unix(0, ns))
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("UnixSeconds(%d ns) = %s, want %s", ns, strconv.FormatFloat(got, 'g', -1, 64), strconv.FormatFloat(want, 'g', -1, 64))
		}
		if g, w := string(ojson.AppendFloat(nil, got)), string(ojson.AppendFloat(nil, want)); g != w {
			t.Fatalf("repr of UnixSeconds(%d ns) = %s, want %s", ns, g, w)
		}
	}
	t.Run("edges", func(t *testing.T) {
		for _, ns := range []int64{
			0, 1, -1, 999_999_999, 1_000_000_001, -999_999_999, -1_000_000_001,
			math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1,
			1 << 53, 1<<53 + 1, -(1 << 53) - 1, 1786032154_123456700, 1786032201_250000000,
			1953125, 1953125 * 3, // multiples of 5^9: ns/1e9 is a dyadic rational
		} {
			check(t, ns)
		}
	})
	t.Run("around now", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
		for range 200_000 {
			check(t, base+r.Int64N(20*365*24*int64(time.Hour)))
		}
	})
	t.Run("whole int64 range", func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for range 200_000 {
			check(t, int64(r.Uint64()))
		}
	})
	t.Run("small magnitudes", func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for range 100_000 {
			check(t, r.Int64N(1<<40)-1<<39)
		}
	})
}

func TestUnixSecondsDoesNotAllocate(t *testing.T) {
	tm := time.Unix(1786032154, 123456700)
	var f float64
	allocs := testing.AllocsPerRun(100, func() { f = UnixSeconds(tm) })
	require.Zero(t, allocs)
	assert.Equal(t, 1786032154.1234567, f)
}

func BenchmarkUnixSeconds(b *testing.B) {
	tm := time.Unix(1786032154, 123456700)
	b.ReportAllocs()
	for b.Loop() {
		if UnixSeconds(tm) == 0 {
			b.Fatal("zero")
		}
	}
}
