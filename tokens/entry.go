package tokens

import "github.com/go-json-experiment/json/jsontext"

// TokenEntry is one captured call's token ids and log probabilities: one line of
// `<rollout_id>.tokens.jsonl` (TOKENS.md §2.2, schema version 1).
//
// OutputItems are JSON objects with the four token fields removed (TOKENS.md §3.2); RoutedExperts
// is opaque JSON (nil means absent, written as null). Extra holds the members beyond the schema,
// kept and written back (the reference's extra="allow").
type TokenEntry struct {
	SchemaVersion      int64
	RolloutID          string
	ModelCallID        string
	Model              string
	PromptTokenIDs     []int64
	GenerationTokenIDs []int64
	GenerationLogProbs []float64
	RoutedExperts      jsontext.Value
	OutputItems        []jsontext.Value
	TokenItemIndex     *int64
	CreatedAt          float64
	Extra              map[string]jsontext.Value
}
