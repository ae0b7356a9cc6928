package rollouts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/tokens"
)

// ClearSummary is what [Clear] did.
type ClearSummary struct {
	// IDs lists the distinct rollout ids of the rows in first-seen order (empty when a row could not
	// be read, since then nothing is tried).
	IDs []string
	// Cleared lists the ids of IDs for which at least one file (capture file, marker or
	// observations file, in any store) or a token capture was removed, in the same order; a failed
	// id is listed too when part of it was removed.
	Cleared []string
	// Failed lists the ids of IDs for which a removal failed, in the same order (the error names
	// each one's file); the others were cleared or had nothing to remove.
	Failed []string
	// Files counts the files removed, capture files, markers and observations files, over every
	// store.
	Files int
	// TokenCaptures counts the rollouts whose token capture was deleted (in any token store).
	TokenCaptures int
}

// Untouched counts the ids of IDs that had nothing to remove: neither cleared nor failed.
func (s ClearSummary) Untouched() int {
	n := len(s.IDs) - len(s.Cleared)
	for _, id := range s.Failed {
		if !slices.Contains(s.Cleared, id) {
			n--
		}
	}
	return n
}

// Clear is the pre-dispatch clear of SPEC §2.6 (clear_model_call_captures_for_rollouts) over the
// rollout JSONL rows of in, the rows about to be dispatched (attempt suffixes already assigned).
//
// It first derives the rollout id of every row as [Attach] does, skipping blank lines and rows
// without an identity; if any row cannot be read, it removes nothing and returns the [RowError]s
// joined with errors.Join. Otherwise it removes, in every store, each id's capture file, incomplete
// marker ([capture.Store.ClearCount]) and observations file ([capture.Store.ClearObservations]);
// missing files are fine and other rollouts are untouched. With no stores nothing is removed (SPEC
// §2.6) but the rows are still validated.
//
// A failure while removing (a file system error, e.g. a directory where a capture file should be)
// does not stop the clear: every file of every id is still tried, in every store, and the error
// returned joins (errors.Join) one error per failed removal, each naming its id and file; the
// summary then covers every id, with the failed ones in [ClearSummary.Failed]. Unlike the reference,
// which raises at the first unlink, a re-dispatch after a partial failure so has as little stale
// capture left as the file system allows, and every file that is left is named at once.
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
	var errs []error
	for _, row := range rows {
		id := row.RolloutID
		if seen[id] {
			continue
		}
		seen[id] = true
		sum.IDs = append(sum.IDs, id)
		n, idErrs := clearCaptures(id, stores)
		sum.Files += n
		deleted, err := clearTokens(id, tokenStores)
		if deleted {
			sum.TokenCaptures++
		}
		if err != nil {
			idErrs = append(idErrs, err)
		}
		if n > 0 || deleted {
			sum.Cleared = append(sum.Cleared, id)
		}
		if len(idErrs) > 0 {
			sum.Failed = append(sum.Failed, id)
			errs = append(errs, idErrs...)
		}
	}
	if len(errs) > 0 {
		return sum, fmt.Errorf("rollouts clear: %d of %d rollouts failed: %w", len(sum.Failed), len(sum.IDs), errors.Join(errs...))
	}
	return sum, nil
}

// clearCaptures removes id's capture file, marker and observations file in every store, trying each
// even after a failure, and returns how many files it removed and the failures.
func clearCaptures(id string, stores []*capture.Store) (removed int, errs []error) {
	for _, s := range stores {
		n, err := s.ClearCount(id)
		removed += n
		if err != nil {
			errs = append(errs, err)
		}
		// Tried even when the capture file was not removed: a retried rollout must not be joined
		// with the earlier attempt's observations.
		obs, err := s.ClearObservations(id)
		if obs {
			removed++
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return removed, errs
}

// clearTokens deletes id's token capture in every store holding one, trying each store even after
// a failure, and reports whether any did; the error joins the failures.
func clearTokens(id string, stores []*tokens.Store) (deleted bool, err error) {
	var errs []error
	for _, s := range stores {
		has, err := s.HasCapture(id)
		if err == nil && has {
			err = s.Delete(id)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("token capture of rollout %s: %w", id, err))
			continue
		}
		deleted = deleted || has
	}
	return deleted, errors.Join(errs...)
}
