package capture

import (
	"math"
	"strconv"
)

// Metrics is the aggregate of a rollout's call records (SPEC §5.2): for each token field the sum
// of the non-null values over the calls, nil when every value is null or there are no calls (a
// null is skipped, never counted as 0); LatencyTotalMS likewise, in milliseconds; NumCalls is the
// number of valid call records. cache_creation_tokens and latency_ttft_ms are not aggregated. A
// rollout's metrics (`gymtrace metrics`, [Attachment.Metrics]) aggregate the tolerant read (SPEC
// §0 D14, see [Aggregate]); the reference's aggregate_model_call_metrics reads strictly and raises
// on the first damaged line, its merge (the attachment) reads tolerantly, as ours does.
type Metrics struct {
	TokensIn, TokensOut, TokensReasoning, TokensTotal, CachedTokens *int64
	LatencyTotalMS                                                  *float64
	NumCalls                                                        int
}

// Aggregate sums records into [Metrics] in record order (SPEC §5.2). For a rollout, pass the
// records of the tolerant read, so that a damaged line costs only its own call (SPEC §0 D14, see
// [Metrics]); the count of skipped lines is the read's invalid count. Latencies are summed with
// Neumaier's compensated summation exactly as Python ≥ 3.12's sum() does (0.1+0.2+0.3 gives 0.6).
// A token sum that would overflow int64 is nil (the reference's ints are unbounded; no real rollout
// gets near 2^63).
func Aggregate(records []ModelCallRecord) Metrics {
	m := Metrics{NumCalls: len(records)}
	fields := []struct {
		dst *(*int64)
		get func(*ModelCallRecord) *int64
	}{
		{&m.TokensIn, func(r *ModelCallRecord) *int64 { return r.TokensIn }},
		{&m.TokensOut, func(r *ModelCallRecord) *int64 { return r.TokensOut }},
		{&m.TokensReasoning, func(r *ModelCallRecord) *int64 { return r.TokensReasoning }},
		{&m.TokensTotal, func(r *ModelCallRecord) *int64 { return r.TokensTotal }},
		{&m.CachedTokens, func(r *ModelCallRecord) *int64 { return r.CachedTokens }},
	}
	for _, f := range fields {
		var sum int64
		seen, overflow := false, false
		for i := range records {
			v := f.get(&records[i])
			if v == nil {
				continue
			}
			seen = true
			s := sum + *v
			if (*v > 0 && s < sum) || (*v < 0 && s > sum) {
				overflow = true
			}
			sum = s
		}
		if seen && !overflow {
			total := sum
			*f.dst = &total
		}
	}

	var sum neumaier
	for i := range records {
		if v := records[i].LatencyTotalMS; v != nil {
			sum.add(*v)
		}
	}
	if sum.n > 0 {
		total := sum.result()
		m.LatencyTotalMS = &total
	}
	return m
}

// neumaier is CPython's compensated float sum (builtin sum(), Python ≥ 3.12).
type neumaier struct {
	sum, c float64
	n      int
}

func (s *neumaier) add(x float64) {
	s.n++
	t := s.sum + x
	if math.Abs(s.sum) >= math.Abs(x) {
		s.c += (s.sum - t) + x
	} else {
		s.c += (x - t) + s.sum
	}
	s.sum = t
}

func (s *neumaier) result() float64 {
	// CPython adds the compensation only when it is non-zero and finite, so an infinite or
	// overflowed sum does not turn into NaN and a negative zero keeps its sign.
	if s.c != 0 && !math.IsInf(s.c, 0) && !math.IsNaN(s.c) {
		return s.sum + s.c
	}
	return s.sum
}

// AppendJSON appends m to dst as the SPEC §5.1/§5.2 metrics object, keys in order tokens_in,
// tokens_out, tokens_reasoning, tokens_total, cached_tokens, latency_total_ms, num_calls; nil
// fields as null; the latency as a float (e.g. 3.0).
func (m Metrics) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"tokens_in":`...)
	dst = appendIntPtr(dst, m.TokensIn)
	dst = append(dst, `,"tokens_out":`...)
	dst = appendIntPtr(dst, m.TokensOut)
	dst = append(dst, `,"tokens_reasoning":`...)
	dst = appendIntPtr(dst, m.TokensReasoning)
	dst = append(dst, `,"tokens_total":`...)
	dst = appendIntPtr(dst, m.TokensTotal)
	dst = append(dst, `,"cached_tokens":`...)
	dst = appendIntPtr(dst, m.CachedTokens)
	dst = append(dst, `,"latency_total_ms":`...)
	dst = appendFloatPtr(dst, m.LatencyTotalMS)
	dst = append(dst, `,"num_calls":`...)
	dst = strconv.AppendInt(dst, int64(m.NumCalls), 10)
	return append(dst, '}')
}
