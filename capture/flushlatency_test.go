package capture

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestFlushHistogramQuantiles(t *testing.T) {
	us := time.Microsecond
	for _, tc := range []struct {
		name     string
		observed []time.Duration
		q        float64
		want     time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"one", []time.Duration{123 * us}, 0.5, 125 * us},
		{"median of three", []time.Duration{50 * us, 251 * us, 900 * us}, 0.5, 255 * us},
		{"p99 of a hundred", append(repeat(99, 100*us), 3*time.Millisecond), 0.99, 105 * us},
		{"p99 reaches the tail", append(repeat(98, 100*us), 3*time.Millisecond, 3*time.Millisecond), 0.99, 3005 * us},
		{"past the last bucket", []time.Duration{time.Minute}, 0.5, 20*time.Millisecond - 5*us},
		{"negative (a clock step) counts as the first bucket", []time.Duration{-time.Second}, 0.5, 5 * us},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h flushHistogram
			for _, d := range tc.observed {
				h.observe(d)
			}
			assert.Equal(t, tc.want, h.quantile(tc.q))
			assert.Equal(t, int64(len(tc.observed)), h.n.Load())
		})
	}
}

func repeat(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

func TestFlushHistogramTimeKeepsTheError(t *testing.T) {
	var h flushHistogram
	boom := errors.New("boom")
	assert.ErrorIs(t, h.time(func() error { return boom }), boom)
	assert.NoError(t, h.time(func() error { return nil }))
	assert.Equal(t, int64(2), h.n.Load(), "a failed flush is waited on too")
}

func TestSyncStatsCountWaitedFlushes(t *testing.T) {
	for _, d := range []Durability{DurabilityPerRecord, DurabilityJournal} {
		t.Run(d.String(), func(t *testing.T) {
			s, err := NewStore(t.TempDir(), WithDurability(d))
			assert.NoError(t, err)
			line := []byte(`{"model_call_id":"a"}` + "\n")
			for range 3 {
				assert.NoError(t, s.Append(t.Context(), "r1", line))
			}
			st := s.SyncStats()
			assert.NoError(t, s.Close())
			assert.Equal(t, int64(3), st.WaitedFlushes, "one flush per append, each waited on")
			assert.Positive(t, st.WaitedFlushP50)
			assert.GreaterOrEqual(t, st.WaitedFlushP99, st.WaitedFlushP50)
		})
	}
}
