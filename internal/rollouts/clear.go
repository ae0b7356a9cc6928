package rollouts

import (
	"errors"
	"fmt"
	"io"

	"github.com/gymtrace/gymtrace/capture"
)

// Clear is the pre-dispatch clear of SPEC §2.6 (clear_model_call_captures_for_rollouts) over the
// rollout JSONL rows of in, the rows about to be dispatched (attempt suffixes already assigned).
//
// It reads every row first and derives its rollout id (SPEC §1.2); blank lines and rows without an
// identity are skipped. If any row is not a JSON object, has a malformed id (SPEC §1.2's error) or an
// id that is not a capture file name ([capture.ValidateRolloutID]), Clear removes nothing and returns
// an error naming each bad line, its value and the rule (the errors are [RowError]s joined with
// errors.Join). Otherwise it removes, in every store, each id's capture file and incomplete marker
// ([capture.Store.Clear]; missing files are fine; other rollouts are untouched).
//
// ids lists the distinct rollout ids in first-seen order: all of them on success; on a failure while
// removing, those cleared in every store before it (the error names the id and file). With no stores
// nothing is removed (SPEC §2.6: no capture dirs is a no-op) but the rows are still validated. A
// failure reading in is returned before anything is removed.
func Clear(in io.Reader, stores []*capture.Store) (ids []string, err error) {
	lr := newLineReader(in)
	seen := make(map[string]bool)
	var all []string
	var bad []error
	for {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("rollouts clear: read line %d: %w", lr.line+1, err)
		}
		if isBlank(line) {
			continue
		}
		_, id, ok, err := parseRow(line)
		switch {
		case err != nil:
			bad = append(bad, RowError{Line: lr.line, Err: err})
		case ok && !seen[id]:
			seen[id] = true
			all = append(all, id)
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("rollouts clear: nothing removed: %w", errors.Join(bad...))
	}
	for _, id := range all {
		for _, s := range stores {
			if err := s.Clear(id); err != nil {
				return ids, fmt.Errorf("rollouts clear: %w", err)
			}
		}
		ids = append(ids, id)
	}
	return all, nil
}
