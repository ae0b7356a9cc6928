package capture

import (
	"github.com/gymtrace/gymtrace/ojson"
)

// tokenStats is the token accounting of one response's usage object (SPEC §3.5). Every field is
// nil when unknown, which is not the same as 0.
type tokenStats struct {
	TokensIn, TokensOut, TokensReasoning, TokensTotal *int64
	CachedTokens, CacheCreationTokens                 *int64
	CacheHit                                          *bool
}

// tokenCount is SPEC §3.5's tc(x): x when it is a JSON integer (written without '.' or exponent;
// never a boolean) that is >= 0, else nil. Integers beyond int64 are treated as invalid (the
// reference's Python ints are unbounded; no real usage reaches 2^63).
func tokenCount(v ojson.Value, ok bool) *int64 {
	if !ok {
		return nil
	}
	n, isInt := v.Int64()
	if !isInt || n < 0 {
		return nil
	}
	return &n
}

func getCount(obj ojson.Value, key string) *int64 {
	return tokenCount(obj.Get(key))
}

// detailCount is the reference's _usage_detail_token: the first valid count among fields of the
// groups, group by group (each group only when it is an object).
func detailCount(usage ojson.Value, groups, fields []string) *int64 {
	for _, g := range groups {
		d, ok := usage.Get(g)
		if !ok || d.Kind() != ojson.KindObject {
			continue
		}
		for _, f := range fields {
			if n := getCount(d, f); n != nil {
				return n
			}
		}
	}
	return nil
}

// countOr0 is *n, or 0 when n is nil.
func countOr0(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}

// addCounts returns a+b, or nil when the sum overflows int64 (treated like an invalid count).
func addCounts(a, b int64) *int64 {
	s := a + b
	if (s > a) != (b > 0) {
		return nil
	}
	return &s
}

// extractTokenStats derives the token accounting from a usage value of any JSON shape, exactly as
// the reference's extract_token_stats and _cache_signal do (SPEC §3.5): shape-driven, not
// dialect-driven. When usage is not an object every field is nil. Otherwise:
//   - TokensIn = input_tokens ?? prompt_tokens; TokensOut = output_tokens ?? completion_tokens;
//   - Anthropic cache fold: when cache_read_input_tokens or cache_creation_input_tokens is valid,
//     their sum is added to TokensIn if TokensIn is known or the sum is > 0;
//   - TokensTotal = total_tokens ?? TokensIn+TokensOut (after the fold);
//   - TokensReasoning = reasoning_tokens of output_tokens_details, then completion_tokens_details,
//     then top-level reasoning_output_tokens;
//   - CacheCreationTokens = cache_creation_input_tokens;
//   - CachedTokens = cached_tokens/cached_input_tokens of prompt_tokens_details then
//     input_tokens_details, then cache_read_input_tokens, then cached_input_tokens; CacheHit =
//     CachedTokens > 0 when known.
//
// A count is valid only when it is a JSON integer >= 0 that fits int64; a sum that would overflow
// int64 is nil.
func extractTokenStats(usage ojson.Value) tokenStats {
	var s tokenStats
	if usage.Kind() != ojson.KindObject {
		return s
	}
	s.TokensIn = getCount(usage, "input_tokens")
	if s.TokensIn == nil {
		s.TokensIn = getCount(usage, "prompt_tokens")
	}
	s.TokensOut = getCount(usage, "output_tokens")
	if s.TokensOut == nil {
		s.TokensOut = getCount(usage, "completion_tokens")
	}
	cacheRead := getCount(usage, "cache_read_input_tokens")
	cacheCreation := getCount(usage, "cache_creation_input_tokens")
	if cacheRead != nil || cacheCreation != nil {
		total := addCounts(countOr0(cacheRead), countOr0(cacheCreation))
		switch {
		case total == nil:
			s.TokensIn = nil
		case s.TokensIn != nil:
			s.TokensIn = addCounts(*s.TokensIn, *total)
		case *total > 0:
			s.TokensIn = total
		}
	}
	s.TokensTotal = getCount(usage, "total_tokens")
	if s.TokensTotal == nil && s.TokensIn != nil && s.TokensOut != nil {
		s.TokensTotal = addCounts(*s.TokensIn, *s.TokensOut)
	}
	s.TokensReasoning = detailCount(usage, []string{"output_tokens_details", "completion_tokens_details"}, []string{"reasoning_tokens"})
	if s.TokensReasoning == nil {
		s.TokensReasoning = getCount(usage, "reasoning_output_tokens")
	}
	s.CacheCreationTokens = cacheCreation

	s.CachedTokens = detailCount(usage, []string{"prompt_tokens_details", "input_tokens_details"}, []string{"cached_tokens", "cached_input_tokens"})
	if s.CachedTokens == nil {
		s.CachedTokens = cacheRead
	}
	if s.CachedTokens == nil {
		s.CachedTokens = getCount(usage, "cached_input_tokens")
	}
	if s.CachedTokens != nil {
		hit := *s.CachedTokens > 0
		s.CacheHit = &hit
	}
	return s
}
