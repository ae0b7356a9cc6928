package proxy

import (
	"time"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/sdk/stream"
	"github.com/gymtrace/gymtrace/tokens"
)

// servedAnswer is the response object the reference's adapter serves (docs/TOKENS.md §1.5 step 4)
// for one call, kept small: body is that object with the token bundle's three lists empty, ids
// holds what they hold, and whole builds the object with them, as the reference serves it. An
// answer of millions of ids and log probs is then never written out and read back as a JSON tree
// (72 bytes per value) only to be turned into the entry's slices again (README "Token capture
// memory").
type servedAnswer struct {
	body  []byte
	ids   *stream.TokenIDs
	whole func() []byte
}

// captureServed is call.CaptureTokens of the whole served object (the reference's capture_tokens),
// without building it: the entry is built from body, whose empty lists mark the same carrier, and
// gets the ids, which payload read and checked as the entry's rules want them (int64 ids, finite
// log probs, as many as generated ids); EntryFromResponse would read the same values back from
// their JSON text. Whatever this path would not commit as it stands (any error, a validation that
// fails with the real lists) goes through CaptureTokens of the whole object, so that the outcome,
// its cause and its message are the reference's.
func captureServed(call *tokens.Call, s servedAnswer, createdAt time.Time) tokens.Outcome {
	if s.ids == nil {
		return call.CaptureTokens(s.body, createdAt)
	}
	if v, err := python.Loads(s.body); err == nil && v.Kind() == ojson.KindObject {
		if e, err := tokens.EntryFromResponse(v, call.RolloutID, call.ModelCallID, call.Model, createdAt); err == nil {
			e.PromptTokenIDs = orEmpty(s.ids.Prompt)
			e.GenerationTokenIDs = orEmpty(s.ids.Generation)
			e.GenerationLogProbs = orEmpty(s.ids.LogProbs)
			if e.Validate() == nil {
				return call.CommitEntry(e)
			}
		}
	}
	return call.CaptureTokens(s.whole(), createdAt)
}

// orEmpty is s, or an empty slice for nil (EntryFromResponse's lists are never nil).
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
