package rollouts

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/tokens"
)

// ClearSummary is what [Clear] did.
type ClearSummary struct {
	// IDs lists the distinct rollout ids of the rows in first-seen order: all of them on success; on
	// a failure while removing, those cleared in every store before it.
	IDs []string
	// Cleared lists the ids of IDs for which at least one file (capture file or marker, in any
	// store) was removed, in the same order; the other ids had nothing to remove.
	Cleared []string
	// Files counts the files removed, capture files and markers, over every store.
	Files int
	// TokenCaptures counts the rollouts whose token capture was deleted (in any token store).
	TokenCaptures int
}

// Clear is the pre-dispatch clear of SPEC §2.6 (clear_model_call_captures_for_rollouts) over the
// rollout JSONL rows of in, the rows about to be dispatched (attempt suffixes already assigned).
//
// It first derives the rollout id of every row as [Attach] does, skipping blank lines and rows
// without an identity; if any row cannot be read, it removes nothing and returns the [RowError]s
// joined with errors.Join. Otherwise it removes, in every store, each id's capture file, incomplete
// marker ([capture.Store.ClearCount]) and observations file ([capture.Store.ClearObservations]);
// missing files are fine and other rollouts are untouched. On a failure while removing, the summary
// covers the ids cleared before it (the error names the id and file). With no stores nothing is
// removed (SPEC §2.6) but the rows are still validated.
//
// The token captures of the same ids are cleared with them (the reference's
// clear_token_captures_for_rollouts, docs/TOKENS.md §3.6, §1.7 step 4): in every token store, an
// id with any token capture file ([tokens.Store.HasCapture]) is deleted ([tokens.Store.Delete]:
// entries, marks, intents and state, a retired tombstone included), so a re-dispatched rollout
// starts afresh; an id without one is not touched (no lock file is created for it).
func Clear(in io.Reader, stores []*capture.Store, tokenStores ...*tokens.Store) (ClearSummary, error) {
	var sum ClearSummary
	rows, rowErrs, err := readIDs(context.Background(), in, "rollouts clear")
	if err != nil {
		return sum, err
	}
	if len(rowErrs) > 0 {
		return sum, fmt.Errorf("rollouts clear: nothing removed: %w", errors.Join(asErrors(rowErrs)...))
	}
	seen := make(map[string]bool)
	for _, row := range rows {
		id := row.RolloutID
		if seen[id] {
			continue
		}
		seen[id] = true
		n := 0
		for _, s := range stores {
			removed, err := s.ClearCount(id)
			if err == nil { // a retried rollout must not be joined with the earlier attempt's observations
				var obs bool
				obs, err = s.ClearObservations(id)
				if obs {
					removed++
				}
			}
			n += removed
			sum.Files += removed
			if err != nil {
				if n > 0 {
					// Part of this id was removed: list it as cleared, though not in IDs.
					sum.Cleared = append(sum.Cleared, id)
				}
				return sum, fmt.Errorf("rollouts clear: %w", err)
			}
		}
		deleted, err := clearTokens(id, tokenStores)
		if deleted {
			sum.TokenCaptures++
		}
		if err != nil {
			if n > 0 || deleted {
				sum.Cleared = append(sum.Cleared, id)
			}
			return sum, fmt.Errorf("rollouts clear: %w", err)
		}
		sum.IDs = append(sum.IDs, id)
		if n > 0 || deleted {
			sum.Cleared = append(sum.Cleared, id)
		}
	}
	return sum, nil
}

// clearTokens deletes id's token capture in every store holding one, and reports whether any did.
func clearTokens(id string, stores []*tokens.Store) (deleted bool, err error) {
	for _, s := range stores {
		has, err := s.HasCapture(id)
		if err == nil && has {
			err = s.Delete(id)
		}
		if err != nil {
			return deleted, fmt.Errorf("token capture of rollout %s: %w", id, err)
		}
		deleted = deleted || has
	}
	return deleted, nil
}
