package tokens

import (
	"errors"
	"time"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// Sink receives a captured call's entry or its incomplete mark (the reference's TokenSink, TOKENS.md
// §3.8; *[Store] is one). Append must be durable when it returns nil.
type Sink interface {
	Append(e TokenEntry) error
	MarkIncomplete(rolloutID, modelCallID string) error
}

// IntentSink is the optional extension of a [Sink] that records a call before it is dispatched
// (the reference's begin_call); *[Store] has it.
type IntentSink interface {
	BeginCall(rolloutID, modelCallID string) error
}

// Cause says why a captured call left its rollout incomplete (TOKENS.md §3.3), for the proxy's
// counters and logs (T8).
type Cause string

// The causes of [Outcome.Cause].
const (
	CauseNone             Cause = ""                  // an entry was written (or nothing was due)
	CauseNoTokenIDs       Cause = "no_token_ids"      // the response carries no token ids
	CauseNotAnObject      Cause = "not_an_object"     // the response is not a JSON object
	CauseBuild            Cause = "build"             // extraction or entry validation failed
	CauseWrite            Cause = "write"             // the sink refused or failed the entry
	CauseIdentityMismatch Cause = "identity_mismatch" // CommitEntry got another call's entry
)

// Call is one token-captured model call (the reference's CaptureContext, TOKENS.md §3.1): the
// rollout and model call ids (one model_call_id for the entry, the model-call record and the span,
// T4), the model that overrides the response's own when set, and the sink (nil: a framework stages
// the records elsewhere, "external staging", [SK-16], [SK-17]). A Call is used by one request at a
// time; it is not safe for concurrent use.
type Call struct {
	RolloutID   string
	ModelCallID string
	Model       string
	Sink        Sink

	committed bool
}

// Outcome is what [Call.CaptureTokens] or [Call.CommitEntry] did. Written: the sink holds the
// entry. Otherwise Cause (when not CauseNone) says why the rollout was marked incomplete, Reason is
// the reference's log text and Err the failure behind it (nil for CauseNoTokenIDs and
// CauseNotAnObject); MarkErr is the mark's own failure (the rollout could then be trained on with a
// missing call: log it loudly). Marked reports whether the mark succeeded.
type Outcome struct {
	Written bool
	Entry   TokenEntry
	Cause   Cause
	Reason  string
	Err     error
	Marked  bool
	MarkErr error
}

// Committed reports whether an entry of this call reached the sink (or, with no sink, was handed
// over): a later CaptureTokens without ids then marks nothing ([SK-09]).
func (c *Call) Committed() bool { return c.committed }

// RegisterIntent is the reference's register_call_intent (TOKENS.md §3.1): with a sink that is an
// [IntentSink], BeginCall is called and its error returned; the caller must then refuse the call
// before forwarding it (the reference fails it, [SK-13], [SK-14]; gymtrace answers 409 when the
// error matches [ErrFrozen] or [ErrRetired], T5). Without a sink it does nothing.
func (c *Call) RegisterIntent() error {
	if is, ok := c.Sink.(IntentSink); ok {
		return is.BeginCall(c.RolloutID, c.ModelCallID)
	}
	return nil
}

// CaptureTokens is the reference's capture_tokens (TOKENS.md §3.1) over a complete response body:
// the body is read as json.loads reads it; a JSON object goes through [EntryFromResponse] and the
// entry to [Call.CommitEntry]; a body without token ids, or that is not an object, or whose entry
// cannot be built, marks the rollout incomplete with this call's id (unless the call was already
// committed or has no sink, [SK-09], [SK-16]). It never fails the call: everything is in the
// Outcome. createdAt is the entry's created_at (the wall clock when the upstream's answer is
// complete).
func (c *Call) CaptureTokens(body []byte, createdAt time.Time) Outcome {
	payload, err := python.Loads(body)
	if err != nil {
		return c.failed(CauseBuild, "build", pyErr("JSONDecodeError", err.Error(), err))
	}
	if payload.Kind() != ojson.KindObject {
		return c.missing(CauseNotAnObject, "the response is a "+python.TypeName(payload))
	}
	e, err := EntryFromResponse(payload, c.RolloutID, c.ModelCallID, c.Model, createdAt)
	if errors.Is(err, ErrNoTokenIDs) {
		return c.missing(CauseNoTokenIDs, "the response carries no token ids")
	}
	if err != nil {
		return c.failed(CauseBuild, "build", err)
	}
	return c.CommitEntry(e)
}

// CommitEntry is the reference's commit_entry (TOKENS.md §3.1): an entry whose rollout or call id
// is not this call's marks the rollout incomplete ([SK-10]); with no sink the call is marked
// committed and nothing is written ([SK-17]); else the entry is appended, and a failure marks the
// rollout incomplete with this call's id ([SK-15]: an entry for a frozen rollout).
func (c *Call) CommitEntry(e TokenEntry) Outcome {
	if e.RolloutID != c.RolloutID || e.ModelCallID != c.ModelCallID {
		o := Outcome{Cause: CauseIdentityMismatch,
			Reason: "Training-token capture identity mismatch for model call " + c.ModelCallID + " of rollout " + c.RolloutID + "."}
		return c.mark(o)
	}
	if c.Sink == nil {
		c.committed = true
		return Outcome{Entry: e}
	}
	if err := c.Sink.Append(e); err != nil {
		return c.failed(CauseWrite, "write", err)
	}
	c.committed = true
	return Outcome{Written: true, Entry: e}
}

// MarkIncomplete marks the call's rollout incomplete with its model_call_id for a cause the
// reference's capture_tokens does not know (TOKENS.md §0 T2, T3: a held answer that passed the
// capture bound, a stream whose ids could not be completed); cause names it for the counters, err
// is the failure behind it, if any. It marks even a committed call (its entry may be incomplete).
func (c *Call) MarkIncomplete(cause Cause, reason string, err error) Outcome {
	return c.mark(Outcome{Cause: cause, Err: err, Reason: reason})
}

// missing is _capture_missing: nothing for a committed call or one without a sink.
func (c *Call) missing(cause Cause, reason string) Outcome {
	if c.committed || c.Sink == nil {
		return Outcome{}
	}
	return c.mark(Outcome{Cause: cause,
		Reason: "Training-token capture has no token ids for model call " + c.ModelCallID + " of rollout " + c.RolloutID + ": " + reason + "."})
}

// failed is _capture_failed.
func (c *Call) failed(cause Cause, stage string, err error) Outcome {
	return c.mark(Outcome{Cause: cause, Err: err,
		Reason: "Training-token capture failed to " + stage + " the record for model call " + c.ModelCallID + " of rollout " + c.RolloutID + "."})
}

// mark is _mark_incomplete: the mark's own error is reported, not raised.
func (c *Call) mark(o Outcome) Outcome {
	if c.Sink == nil {
		o.MarkErr = errors.New("no sink: rollout " + c.RolloutID + " cannot be marked incomplete and may be trained on with a missing call")
		return o
	}
	o.MarkErr = c.Sink.MarkIncomplete(c.RolloutID, c.ModelCallID)
	o.Marked = o.MarkErr == nil
	return o
}

// ErrNoTokenIDs is [EntryFromResponse]'s error for a response with no token ids on any item
// (TOKENS.md §3.3, the first row: a non-vLLM upstream, vLLM's context-length fallback).
var ErrNoTokenIDs = errors.New("the response carries no token ids")

// EntryFromResponse builds the TokenEntry of one captured call from its complete response object
// (the reference's capture_tokens steps 2–4, TOKENS.md §3.1): [ExtractTokenFields] finds the one
// carrier (none → an error matching [ErrNoTokenIDs]); the output items are
// [ResponseToOutputItems] without the token fields ([StripTokenFields]), with the carrier's index;
// model is the given one, else str(payload.model) when truthy, else ""; created_at is createdAt in
// seconds. The fields are then validated as TokenEntry(...) validates them ([EntryFromValue]: lax
// ints, so string ids from vLLM's completions mode become ints [VC-01]). Errors are the
// reference's ([*Error], [*ValidationError]).
func EntryFromResponse(payload ojson.Value, rolloutID, modelCallID, model string, createdAt time.Time) (TokenEntry, error) {
	info, err := ExtractTokenFields(payload)
	if err != nil {
		return TokenEntry{}, err
	}
	if info == nil {
		return TokenEntry{}, ErrNoTokenIDs
	}
	items, err := ResponseToOutputItems(payload)
	if err != nil {
		return TokenEntry{}, err
	}
	stripped, carrier, err := StripTokenFields(items)
	if err != nil {
		return TokenEntry{}, err
	}
	if model == "" {
		if m := member(payload, keyModel); python.Truthy(m) {
			model = python.Str(m)
		}
	}
	index := ojson.Null()
	if carrier != nil {
		index = ojson.Int(int64(*carrier))
	}
	seconds := float64(createdAt.Unix()) + float64(createdAt.Nanosecond())/1e9
	return EntryFromValue(ojson.Object(
		ojson.Member{Key: keyRolloutID, Value: ojson.String(rolloutID)},
		ojson.Member{Key: keyModelCallID, Value: ojson.String(modelCallID)},
		ojson.Member{Key: keyModel, Value: ojson.String(model)},
		ojson.Member{Key: keyPromptTokenIDs, Value: info.PromptTokenIDs},
		ojson.Member{Key: keyGenerationTokenIDs, Value: info.GenerationTokenIDs},
		ojson.Member{Key: keyGenerationLogProbs, Value: info.GenerationLogProbs},
		ojson.Member{Key: keyRoutedExperts, Value: info.RoutedExperts},
		ojson.Member{Key: keyOutputItems, Value: ojson.Array(stripped...)},
		ojson.Member{Key: keyTokenItemIndex, Value: index},
		ojson.Member{Key: keyCreatedAt, Value: ojson.Float(seconds)},
	))
}
