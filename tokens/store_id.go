package tokens

import (
	"path/filepath"
	"strings"

	"github.com/gymtrace/gymtrace/internal/python"
)

// File name suffixes of one rollout's token capture (TOKENS.md §2.1): <id> plus one of these, in
// the store's one flat directory.
const (
	EntriesFileSuffix    = ".tokens.jsonl"      // the TokenEntry lines
	StateFileSuffix      = ".tokens.state.json" // the state index (§2.3)
	LockFileSuffix       = ".tokens.lock"       // the flock target (§2.4)
	IncompleteFileSuffix = ".tokens.incomplete" // one "<model_call_id>\n" per mark
	IntentsFileSuffix    = ".tokens.intents"    // one "<model_call_id>\n" per dispatched call
	stateTempPrefix      = ".tokens-state-"     // a state write's temporary file (§2.3)
	rolloutIDChars       = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
	rolloutIDRuleText    = "want one or more ASCII letters, digits, '.', '_' or '-'"
)

// ValidateRolloutID is the reference's validate_rollout_id, the store's file-name rule (TOKENS.md
// §2.1, the same as SPEC §2.2): valid iff id is non-empty and every character is an ASCII letter, an
// ASCII digit, '.', '_' or '-', with no length limit (".hidden" and ".." are valid, [ID-07], [ID-08]).
// It is deliberately the reference's rule, not gymtrace's stricter rollout.ValidateID (SPEC §0 D12,
// which the proxy applies to the ids it accepts): the vectors ID-01..11 and Gym's own collector use
// this one, and every id that passes it is a safe file name. The error is an [*Error] of type
// ValueError with the reference's message `Invalid rollout id: '<id as Python repr>'` (its
// [ExceptionText]) and the rule as its Hint (in Error()); it matches [ErrInvalidRolloutID].
func ValidateRolloutID(id string) error {
	if id != "" && strings.Trim(id, rolloutIDChars) == "" {
		return nil
	}
	e := pyErr("ValueError", "Invalid rollout id: "+python.ReprStr(id), ErrInvalidRolloutID)
	e.Hint = rolloutIDRuleText
	return e
}

// path returns <dir>/<id><suffix>; id must have passed ValidateRolloutID.
func (s *Store) path(id, suffix string) string { return filepath.Join(s.dir, id+suffix) }
