package capture

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/ojson"
	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
)

func TestMetricsVectors(t *testing.T) {
	cases := testvectors.Load(t, "metrics.json")
	require.Len(t, cases, 10)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			var recs []ModelCallRecord
			for _, call := range testvectors.Value(t, c.Input).Elems() {
				require.Equal(t, ojson.KindObject, call.Kind())
				recs = append(recs, ModelCallRecord{
					TokensIn:            vecInt64(t, get(call, "tokens_in")),
					TokensOut:           vecInt64(t, get(call, "tokens_out")),
					TokensReasoning:     vecInt64(t, get(call, "tokens_reasoning")),
					TokensTotal:         vecInt64(t, get(call, "tokens_total")),
					CachedTokens:        vecInt64(t, get(call, "cached_tokens")),
					CacheCreationTokens: vecInt64(t, get(call, "cache_creation_tokens")),
					LatencyTotalMS:      vecFloat(t, get(call, "latency_total_ms")),
					LatencyTTFTMS:       vecFloat(t, get(call, "latency_ttft_ms")),
				})
			}
			assert.Equal(t, testvectors.Canonical(t, c.Expected), string(Aggregate(recs).AppendJSON(nil)))
		})
	}
}

func TestAggregateEdges(t *testing.T) {
	i64 := func(n int64) *int64 { return &n }
	m := Aggregate([]ModelCallRecord{{TokensIn: i64(math.MaxInt64), TokensOut: i64(1)}, {TokensIn: i64(1)}})
	assert.Nil(t, m.TokensIn, "overflowing sum is null")
	require.NotNil(t, m.TokensOut)
	assert.Equal(t, int64(1), *m.TokensOut)

	m = Aggregate([]ModelCallRecord{{LatencyTotalMS: floatPtr(math.MaxFloat64)}, {LatencyTotalMS: floatPtr(math.MaxFloat64)}})
	require.NotNil(t, m.LatencyTotalMS)
	assert.True(t, math.IsInf(*m.LatencyTotalMS, 1), "overflow stays inf, not NaN (CPython)")

	m = Aggregate([]ModelCallRecord{{LatencyTotalMS: floatPtr(math.Copysign(0, -1))}})
	assert.Equal(t, `{"tokens_in":null,"tokens_out":null,"tokens_reasoning":null,"tokens_total":null,"cached_tokens":null,"latency_total_ms":0.0,"num_calls":1}`, string(m.AppendJSON(nil)),
		"Python's sum starts at int 0, so sum([-0.0]) is 0.0")
	assert.Equal(t, `{"tokens_in":null,"tokens_out":null,"tokens_reasoning":null,"tokens_total":null,"cached_tokens":null,"latency_total_ms":null,"num_calls":0}`, string(Aggregate(nil).AppendJSON(nil)))
}
