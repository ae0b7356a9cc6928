package capture

import (
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/ojson"
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

// TestMetricsOfDamagedFile is SPEC §0 D14: a rollout's metrics (the metrics command, the
// attachment) aggregate what the tolerant read returns, so a file with damaged lines gives the
// metrics of its good lines plus the count of the others, where the reference's strict
// aggregate_model_call_metrics raises.
func TestMetricsOfDamagedFile(t *testing.T) {
	good := []string{
		`{"model_call_id":"a","response":{"usage":{"input_tokens":10,"output_tokens":5,"total_tokens":15}},"latency_ms":2.5}`,
		`{"model_call_id":"b","response":{"usage":{"input_tokens":20,"output_tokens":3,"total_tokens":23,"input_tokens_details":{"cached_tokens":4}}},"latency_ms":1.25}`,
		`{"model_call_id":"c","latency_ms":0.1}`,
	}
	damaged := []string{
		`{not-json`, // not JSON
		`[1,2]`,     // JSON, not an object
		`{"model_call_id":"d","model_ref":{"type":"x"}}`, // an object that builds no record (SPEC §3.2 model_ref)
	}
	content := good[0] + "\n" + damaged[0] + "\n\n" + good[1] + "\n" + damaged[1] + "\n" + damaged[2] + "\n" + good[2] + "\n"

	s := newTestStore(t)
	path, err := s.CapturePath("0-0")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))

	var want []ModelCallRecord
	for i, l := range good {
		r, err := BuildModelCallRecord([]byte(l), i)
		require.NoError(t, err)
		want = append(want, r)
	}
	const wantJSON = `{"tokens_in":30,"tokens_out":8,"tokens_reasoning":null,"tokens_total":38,"cached_tokens":4,"latency_total_ms":3.85,"num_calls":3}`
	require.Equal(t, wantJSON, string(Aggregate(want).AppendJSON(nil)), "the good lines alone")

	records, invalid, err := s.ReadAvailableModelCallRecords("0-0")
	require.NoError(t, err)
	assert.Equal(t, len(damaged), invalid, "damaged lines counted")
	assert.Equal(t, wantJSON, string(Aggregate(records).AppendJSON(nil)), "tolerant read: the good lines' metrics")

	a, err := BuildAttachment([]*Store{s}, "0-0", false)
	require.NoError(t, err)
	assert.Equal(t, wantJSON, string(a.Metrics.AppendJSON(nil)), "attachment metrics")
	assert.Equal(t, []Gap{{Code: GapRecordsUnreadable, Detail: "count=3"}}, a.Gaps)

	_, err = s.ReadModelCallRecords("0-0")
	assert.Error(t, err, "the strict read (the reference's aggregate) fails on the first damaged line")
}
