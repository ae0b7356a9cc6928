package proxy

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/semconv"
	"github.com/gymtrace/gymtrace/tokens"
)

// TestTokenIDListLimits: ids int64 cannot hold are refused with T7's errors (docs/TOKENS.md §0
// T7, [TE-13], [TE-14]); every other refusal is the reference adapter's message; the first
// element that is not an int64 decides.
func TestTokenIDListLimits(t *testing.T) {
	cases := []struct {
		list    string
		want    []int64
		err     string
		inRange bool // the error matches tokens.ErrIntegerRange
	}{
		{list: `[1,2,3]`, want: []int64{1, 2, 3}},
		{list: `[]`, want: []int64{}},
		{list: `[9223372036854775807,-9223372036854775808]`, want: []int64{math.MaxInt64, math.MinInt64}},
		{list: `[1,9223372036854775808]`, err: "prompt_token_ids[1] is 9223372036854775808, outside the signed 64-bit range of token ids and indices in gymtrace (the reference accepts up to 2^64-1; docs/TOKENS.md §0 T7)", inRange: true},
		{list: `[18446744073709551615]`, err: "prompt_token_ids[0] is 18446744073709551615, outside the signed 64-bit range", inRange: true},
		{list: `[18446744073709551616]`, err: "Integer exceeds 64-bit range (prompt_token_ids[0] is 18446744073709551616; docs/TOKENS.md §0 T7)", inRange: true},
		{list: `[-9223372036854775809]`, err: "Integer exceeds 64-bit range (prompt_token_ids[0] is -9223372036854775809", inRange: true},
		{list: `[1.5,18446744073709551616]`, err: "`prompt_token_ids` must be a list of integer token IDs."},
		{list: `["1"]`, err: "`prompt_token_ids` must be a list of integer token IDs."},
		{list: `[NaN]`, err: "`prompt_token_ids` must be a list of integer token IDs."},
		{list: `{"a":1}`, err: "`prompt_token_ids` must be a list of integer token IDs."},
	}
	for _, c := range cases {
		t.Run(c.list, func(t *testing.T) {
			v, err := readAnswer([]byte(c.list))
			require.NoError(t, err)
			got, err := tokenIDList(v, "prompt_token_ids")
			if c.err == "" {
				require.NoError(t, err)
				assert.Equal(t, c.want, got)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.err)
			assert.Equal(t, c.inRange, errors.Is(err, tokens.ErrIntegerRange))
			want := semconv.TokensCauseAdapter
			if c.inRange {
				want = semconv.TokensCauseBuild
			}
			assert.Equal(t, want, adapterCause(err))
		})
	}
}

// TestFiniteLogProbs: a NaN or infinite log prob is refused with the token store's message (T7).
func TestFiniteLogProbs(t *testing.T) {
	cases := []struct {
		lps []float64
		err string
	}{
		{[]float64{-0.5, 0, -1e300}, ""},
		{nil, ""},
		{[]float64{-0.5, math.NaN()}, "generation_log_probs[1] is nan: gymtrace never writes a non-finite log prob"},
		{[]float64{math.Inf(-1)}, "generation_log_probs[0] is -inf:"},
		{[]float64{math.Inf(1), math.NaN()}, "generation_log_probs[0] is inf:"},
	}
	for _, c := range cases {
		err := finiteLogProbs(c.lps)
		if c.err == "" {
			assert.NoError(t, err, "%v", c.lps)
			continue
		}
		require.Error(t, err, "%v", c.lps)
		assert.Contains(t, err.Error(), c.err)
		assert.True(t, errors.Is(err, tokens.ErrNonFinite))
		assert.Equal(t, semconv.TokensCauseBuild, adapterCause(err))
	}
}
