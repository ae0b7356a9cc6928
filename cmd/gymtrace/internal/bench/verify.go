package bench

import (
	"errors"
	"fmt"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/capturedir"
	"github.com/gymtrace/gymtrace/tokens"
)

// verifyCaptures reads every rollout file of captureDir tolerantly (SPEC §2.5) and compares their
// records with calls, the number of calls whose answer was read to its end. With withTokens (a
// token workload) it also reads each rollout's token capture (docs/TOKENS.md §2, read only) and
// counts its entries, intents without entries and incomplete marks; entries that do not read, an
// index a finalization's freeze would refuse and a torn final line are errors.
func verifyCaptures(captureDir string, calls int, withTokens bool) Verification {
	v := Verification{Calls: calls}
	store, err := capture.NewStore(captureDir)
	if err != nil {
		v.Err = err.Error()
		return v
	}
	var toks *tokens.Store
	if withTokens {
		v.Tokens = &TokenVerification{}
		if toks, err = tokens.OpenStore(captureDir); err != nil {
			v.Err = err.Error()
			return v
		}
	}
	entries, err := capturedir.List(captureDir)
	if err != nil {
		v.Err = err.Error()
		return v
	}
	var errs []error
	for _, e := range entries {
		id := e.RolloutID
		recs, invalid, err := store.ReadAvailableModelCallRecords(id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		v.Records += len(recs)
		v.Invalid += invalid
		for j := range recs {
			if recs[j].ErrorCategory != nil {
				v.WithError++
			}
			if recs[j].Response == nil {
				v.WithoutResponse++
			}
		}
		if e.HasMarker {
			v.Incomplete++
		}
		if toks != nil {
			in, err := toks.Inspect(id)
			switch {
			case err != nil:
				errs = append(errs, err)
			case in.EntriesErr != nil:
				errs = append(errs, fmt.Errorf("token entries of %s: %w", id, in.EntriesErr))
			case in.IndexErr != nil: // a finalization's freeze would fail (docs/TOKENS.md §2.7)
				errs = append(errs, fmt.Errorf("token index of %s: %w", id, in.IndexErr))
			case in.TornTail > 0:
				errs = append(errs, fmt.Errorf("token entries of %s: a torn final line of %d bytes", id, in.TornTail))
			default:
				v.Tokens.Entries += len(in.Entries)
				v.Tokens.IntentsWithoutEntries += len(in.Dangling)
				if in.Incomplete || len(in.Marks) > 0 {
					v.Tokens.IncompleteRollouts++
				}
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		v.Err = err.Error()
	}
	return v
}
