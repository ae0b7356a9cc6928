package claudecode

import (
	"math"
	"time"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// compaction detects a compaction marker in e (SPEC §6.4 "Compaction detection") and builds its
// observation; isSummary tells a summary event from a boundary/metadata event for the merge.
func (x *extractor) compaction(e event, invocationID string) (c *agentobs.ContextCompactionObservation, isSummary, ok bool) {
	message, _ := e.get("message")
	isSummary = isTrue(e.get("isCompactSummary")) || isTrue(message.Get("isCompactSummary"))
	typ, _ := e.get("type")
	subtype, _ := e.get("subtype")
	t, _ := typ.AsString()
	st, _ := subtype.AsString()
	isBoundary := t == "system" && st == "compact_boundary"
	metadata := compactMetadata(e.v, message)
	if !isSummary && !isBoundary && metadata.Len() == 0 {
		return nil, false, false
	}

	c = &agentobs.ContextCompactionObservation{InvocationID: invocationID, ObservedAt: timestampIn(e, x.loc)}
	if trig, ok := metadata.Get("trigger"); ok {
		if s, ok := trig.AsString(); ok {
			c.Trigger = &s
		}
	}
	c.TokensBefore = nonNegativeInt(metadata, "tokensBefore", "preTokens")
	c.TokensAfter = nonNegativeInt(metadata, "tokensAfter", "postTokens")
	if isSummary && message.Kind() == ojson.KindObject {
		if s := textOf(message.Get("content")); s != "" {
			c.Summary = &s
		}
	}
	c.Outcome = compactionOutcome(e, message, metadata, isSummary || isBoundary)
	return c, isSummary, true
}

// timestampIn is ts(event.timestamp) with naive times read in loc.
func timestampIn(e event, loc *time.Location) *float64 {
	v, ok := e.get("timestamp")
	return timestampOf(v, ok, loc)
}

// compactMetadata returns the first object among event.compactMetadata, event.compact_metadata,
// message.compactMetadata and message.compact_metadata, or an empty object (SPEC §6.4). An empty
// object found first is returned as is (and counts as no metadata), as in the reference.
func compactMetadata(ev, message ojson.Value) ojson.Value {
	for _, owner := range []ojson.Value{ev, message} {
		for _, key := range []string{"compactMetadata", "compact_metadata"} {
			if m, ok := owner.Get(key); ok && m.Kind() == ojson.KindObject {
				return m
			}
		}
	}
	return ojson.Object()
}

// nonNegativeInt returns the first of keys whose value is a JSON integer (not a boolean, not a
// float) >= 0. Integers beyond int64 cannot be represented and are skipped like other misfits.
func nonNegativeInt(metadata ojson.Value, keys ...string) *int {
	for _, key := range keys {
		v, ok := metadata.Get(key)
		if !ok {
			continue
		}
		if n, ok := v.Int64(); ok && n >= 0 && n <= math.MaxInt {
			return ptr(int(n))
		}
	}
	return nil
}

// compactionOutcome is the reference's outcome rule (SPEC §6.4).
func compactionOutcome(e event, message, metadata ojson.Value, hasCompletionMarker bool) agentobs.CompactionOutcome {
	value, _ := metadata.Get("outcome")
	if value.Kind() != ojson.KindString {
		value, _ = metadata.Get("status")
	}
	normalized, isString := value.AsString()
	normalized = python.Lower(normalized)
	if isString {
		switch normalized {
		case "failed", "failure", "error":
			return agentobs.CompactionOutcomeFailed
		case "aborted", "cancelled", "canceled", "interrupted":
			return agentobs.CompactionOutcomeAborted
		}
	}
	if isTrue(metadata.Get("is_error")) || isTrue(e.get("is_error")) || isTrue(message.Get("is_error")) {
		return agentobs.CompactionOutcomeFailed
	}
	if isString {
		switch normalized {
		case "completed", "complete", "success", "succeeded":
			return agentobs.CompactionOutcomeCompleted
		}
	}
	if hasCompletionMarker {
		return agentobs.CompactionOutcomeCompleted
	}
	return agentobs.CompactionOutcomeUnknown
}

// mergeCompaction folds next (the adjacent boundary or summary event) into prior: null fields are
// filled, and the outcome replaced when prior's is unknown or next's is failed/aborted.
func mergeCompaction(prior, next *agentobs.ContextCompactionObservation) {
	if prior.ObservedAt == nil {
		prior.ObservedAt = next.ObservedAt
	}
	if prior.Trigger == nil {
		prior.Trigger = next.Trigger
	}
	if prior.TokensBefore == nil {
		prior.TokensBefore = next.TokensBefore
	}
	if prior.TokensAfter == nil {
		prior.TokensAfter = next.TokensAfter
	}
	if prior.Summary == nil {
		prior.Summary = next.Summary
	}
	if prior.Outcome == agentobs.CompactionOutcomeUnknown || prior.Outcome == "" ||
		next.Outcome == agentobs.CompactionOutcomeFailed || next.Outcome == agentobs.CompactionOutcomeAborted {
		prior.Outcome = next.Outcome
	}
}
