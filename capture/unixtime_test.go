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
	"github.com/gymtrace/gymtrace/semconv"
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

// TestUnixSecondsOutOfInt64Nanos: times whose nanoseconds since the epoch an int64 cannot hold (an
// OTLP timestamp past MaxInt64, up to 2^64-1 ns; any time.Time) and the zero time (an unset
// timestamp) give their exact seconds, never a wrapped or year-1 value (SPEC §0 "Durability
// contract": seconds = UnixNano / 1e9).
func TestUnixSecondsOutOfInt64Nanos(t *testing.T) {
	exact := func(sec int64, ns int) float64 {
		r := new(big.Rat).SetFrac(new(big.Int).Add(new(big.Int).Mul(big.NewInt(sec), big.NewInt(1e9)), big.NewInt(int64(ns))), big.NewInt(1e9))
		f, _ := r.Float64()
		return f
	}
	fromUint := func(ns uint64) time.Time { return time.Unix(int64(ns/1e9), int64(ns%1e9)) }
	tests := []struct {
		name string
		t    time.Time
		want float64
	}{
		{"zero time: an unset timestamp", time.Time{}, 0},
		{"the epoch", time.Unix(0, 0), 0},
		{"2^64-1 ns", fromUint(math.MaxUint64), 1.8446744073709552e10},
		{"MaxInt64+1 ns", fromUint(1 << 63), 9.223372036854776e9},
		{"year 9999", time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC), exact(253402300799, 999_999_999)},
		{"year 1000", time.Date(1000, 1, 1, 0, 0, 0, 1, time.UTC), exact(-30610224000, 1)},
		{"year 1 plus 1 ns (not the zero time)", time.Time{}.Add(1), exact(-62135596800, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, math.Float64bits(tt.want), math.Float64bits(UnixSeconds(tt.t)), "%v", UnixSeconds(tt.t))
		})
	}
	t.Run("whole uint64 range", func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		for range 200_000 {
			ns := r.Uint64()
			tm := fromUint(ns)
			want, _ := new(big.Rat).SetFrac(new(big.Int).SetUint64(ns), big.NewInt(1e9)).Float64()
			if got := UnixSeconds(tm); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("UnixSeconds(%d ns) = %v, want %v", ns, got, want)
			}
		}
	})
	t.Run("any second of time.Time", func(t *testing.T) {
		r := rand.New(rand.NewPCG(9, 10))
		for range 100_000 {
			sec, ns := r.Int64N(1<<62)-1<<61, r.IntN(1e9)
			if got, want := UnixSeconds(time.Unix(sec, int64(ns))), exact(sec, ns); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("UnixSeconds(%d s %d ns) = %v, want %v", sec, ns, got, want)
			}
		}
	})
	t.Run("inverse", func(t *testing.T) {
		for _, tm := range []time.Time{fromUint(math.MaxUint64), time.Unix(0, 0)} {
			back, err := TimeFromUnixSeconds(UnixSeconds(tm))
			require.NoError(t, err)
			assert.Equal(t, UnixSeconds(tm), UnixSeconds(back))
		}
	})
}

func TestUnixSecondsDoesNotAllocate(t *testing.T) {
	tm := time.Unix(1786032154, 123456700)
	var f float64
	allocs := testing.AllocsPerRun(100, func() { f = UnixSeconds(tm) })
	require.Zero(t, allocs)
	early := time.Unix(-62135596800, 1)
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = UnixSeconds(early) }), "before the epoch")
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

// TestModelCallLineTimes: a model-call span's start and end become the record's started_at and
// completed_at exactly (SPEC §0 "Durability contract": seconds = UnixNano / 1e9), whatever the
// adapter's view holds: an unset timestamp (the zero time: OTLP's 0) is 0.0 and a time past the
// int64 nanoseconds (up to OTLP's 2^64-1 ns) its seconds, never a wrapped or year-1 value.
func TestModelCallLineTimes(t *testing.T) {
	valid := time.Unix(1796411786, 191516600)
	maxOTLP := time.Unix(int64(uint64(math.MaxUint64)/1e9), int64(uint64(math.MaxUint64)%1e9))
	tests := []struct {
		name       string
		start, end time.Time
		want       string
	}{
		{"valid", valid, valid.Add(time.Second), `"started_at":1796411786.1915166,"completed_at":1796411787.1915166,`},
		{"end unset", valid, time.Time{}, `"started_at":1796411786.1915166,"completed_at":0.0,`},
		{"start unset", time.Time{}, valid, `"started_at":0.0,"completed_at":1796411786.1915166,`},
		{"both 2^64-1 ns", maxOTLP, maxOTLP, `"started_at":18446744073.709553,"completed_at":18446744073.709553,`},
		{"2^63 ns", time.Unix(9223372036, 854775808), time.Unix(9223372036, 854775808), `"started_at":9223372036.854776,"completed_at":9223372036.854776,`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Span{StartTime: tt.start, EndTime: tt.end, Attributes: Attributes{
				semconv.GymtraceRolloutID("r-1"), semconv.GymtraceModelCallIDKey.String("mc-1"),
				semconv.GymtraceDialectKey.String("chat"), semconv.GymtraceLatencyMSKey.Float64(1),
			}}
			l, err := ModelCallLines{}.NewLine("r-1", s)
			require.NoError(t, err)
			assert.Contains(t, string(l.AppendTo(nil)), tt.want)
		})
	}
}

// AppendUnixNano writes the exact count on both sides of the epoch and past int64's range.
func TestAppendUnixNano(t *testing.T) {
	for _, tt := range []struct {
		t    time.Time
		want string
	}{
		{time.Unix(0, 0), "0"},
		{time.Unix(0, 5), "5"},
		{time.Unix(1, 5), "1000000005"},
		{time.Unix(1700000000, 123456789), "1700000000123456789"},
		{time.Unix(0, -5), "-5"},
		{time.Unix(-1, 0), "-1000000000"},
		{time.Unix(-2, 999999999), "-1000000001"},
		{time.Unix(0, math.MinInt64), "-9223372036854775808"},
		{time.Unix(int64(uint64(math.MaxUint64)/1e9), int64(uint64(math.MaxUint64)%1e9)), "18446744073709551615"},
	} {
		assert.Equal(t, tt.want, string(AppendUnixNano([]byte("x"), tt.t))[1:], tt.want)
	}
}
