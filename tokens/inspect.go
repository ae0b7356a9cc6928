package tokens

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/gymtrace/gymtrace/internal/python"
)

// captureFileSuffixes are the files that hold a rollout's token capture; the lock file is not one
// (every read creates it, [ST-02]).
var captureFileSuffixes = []string{EntriesFileSuffix, StateFileSuffix, IntentsFileSuffix, IncompleteFileSuffix}

// HasCapture reports whether rollout id has any token capture file in the store — entries, state
// (a tombstone included), intents or incomplete marks — the participation rule of gymtrace's
// finalization (docs/TOKENS.md §0 T6). It takes no lock and creates nothing (not even the lock
// file). The error is [ValidateRolloutID]'s for an id that is not a store file name, or a stat
// failure other than a missing file.
func (s *Store) HasCapture(id string) (bool, error) {
	if err := ValidateRolloutID(id); err != nil {
		return false, err
	}
	for _, suffix := range captureFileSuffixes {
		_, err := os.Lstat(s.path(id, suffix))
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return false, err
		}
	}
	return false, nil
}

// Inspection is what one rollout's token capture holds, read without changing it ([Store.Inspect]).
type Inspection struct {
	RolloutID string
	// HasFiles: any capture file exists ([Store.HasCapture]).
	HasFiles bool
	// The state file's flags and identity (TOKENS.md §2.3; the defaults when there is no state
	// file): Incomplete is the state's flag alone, as [Store.IsIncomplete] reads it.
	Frozen, Retired, Incomplete bool
	SnapshotID                  string
	Version                     int64
	// IndexErr is why the index recovery a freeze runs first (TOKENS.md §2.7, [planIndex]) would
	// refuse the capture, the error that freeze would fail with: an indexed_size below 0 or past
	// the file's end ([ST-18]), a line that does not parse before more content ([ST-14]), a line
	// that does not validate, or a call id with conflicting durable payloads ([ST-15]). nil when
	// the recovery would pass.
	IndexErr error
	// TornTail is the length in bytes of the torn final line — unparsable, with nothing but blanks
	// after it, never acknowledged — that the freeze's index recovery cuts from the JSONL file
	// ([ST-13]); 0 for none. Inspect leaves the file as it is and reads the entries without it.
	TornTail int64
	// Entries in file order, as a freeze reads them after its index recovery (a torn tail cut);
	// EntriesErr is why they could not be read (then Entries is nil), the error a freeze would
	// fail with when the recovery passes ([ST-19]–[ST-22]).
	Entries    []TokenEntry
	EntriesErr error
	// Intents are the model call ids of the intents file, Marks those of the incomplete marker
	// ("" for the unobserved-path mark), in file order; Dangling the distinct intents without an
	// entry (they make a freeze incomplete, [ST-09]).
	Intents, Marks, Dangling []string
}

// Inspect reads rollout id's token capture under the shared lock (TOKENS.md §2.4, §2.8) without
// freezing it, recovering its index or writing anything but the lock file (which every read
// creates, [ST-02]), but with the rules a freeze applies: its index recovery is computed
// ([planIndex], the function [Store.Freeze]'s recovery applies) and reported, not applied — a
// refusal in [Inspection].IndexErr, a torn final line in [Inspection].TornTail, left in the file
// but not read as an entry. Every file is read only as a regular file, never through a symbolic
// link (else an error wrapping [ErrNotRegularFile] naming the path), as the freeze reads it. An
// unreadable entries file is reported in [Inspection].EntriesErr, not as the error; the error is
// the id's ([ValidateRolloutID]), the lock's, or the state's or intents' reading (a state that is
// not a JSON object, an intent line that is not UTF-8).
func (s *Store) Inspect(id string) (Inspection, error) {
	in := Inspection{RolloutID: id}
	err := s.locked(id, true, func() error {
		var err error
		if in.HasFiles, err = s.HasCapture(id); err != nil {
			return err
		}
		st, err := s.readState(id)
		if err != nil {
			return err
		}
		in.Frozen, in.Retired, in.Incomplete = st.flag(stateFrozen), st.flag(stateRetired), st.flag(stateIncomplete)
		if v, ok := st.get(stateSnapshotID); ok {
			in.SnapshotID = python.Str(v)
		}
		if in.Version, err = st.version(); err != nil {
			return err
		}
		in.inspectEntries(s, id, st)
		if in.Intents, err = s.callIDLines(id, IntentsFileSuffix); err != nil {
			return err
		}
		if in.Marks, err = s.callIDLines(id, IncompleteFileSuffix); err != nil {
			return err
		}
		in.Dangling = dangling(in.Intents, in.Entries)
		return nil
	})
	return in, err
}

// inspectEntries reads id's JSONL file into in: the index recovery a freeze would run on it with
// st ([planIndex], nothing changed), then its entries, without the torn tail that recovery cuts.
func (in *Inspection) inspectEntries(s *Store, id string, st *state) {
	b, err := readRegular(s.path(id, EntriesFileSuffix))
	if errors.Is(err, fs.ErrNotExist) {
		b, err = nil, nil // no file: no entries, and the index must say 0 bytes
	}
	if err != nil {
		in.EntriesErr = err
		return
	}
	p, err := planIndex(id, st, int64(len(b)), func(offset int64) ([]byte, error) { return b[offset:], nil })
	switch {
	case err != nil:
		in.IndexErr = err
	case p.conflict != nil:
		in.IndexErr = p.conflict
	case p.cut:
		in.TornTail = int64(len(b)) - p.size
		b = b[:p.size]
	}
	in.Entries, in.EntriesErr = parseEntries(b)
}

// Peek returns the snapshot a [Store.Freeze] would return now, without freezing (its SnapshotID is
// "" and its Version the current one when the rollout is not frozen yet): the entries, incomplete
// when the state says so or an intent has no entry. It fails as Freeze would, in Freeze's order:
// the reference's RuntimeError for a retired rollout ([ErrRetired]), then [Inspection].IndexErr,
// then [Inspection].EntriesErr.
func (in *Inspection) Peek() (Snapshot, error) {
	switch {
	case in.Retired:
		return Snapshot{}, pyErr("RuntimeError", "Token capture for rollout "+in.RolloutID+" is retired", ErrRetired)
	case in.IndexErr != nil:
		return Snapshot{}, in.IndexErr
	case in.EntriesErr != nil:
		return Snapshot{}, in.EntriesErr
	}
	return Snapshot{RolloutID: in.RolloutID, Entries: in.Entries, Incomplete: in.Incomplete || len(in.Dangling) > 0,
		SnapshotID: in.SnapshotID, Version: in.Version}, nil
}

// callIDLines returns the model call ids of id's intents or marker file (no file: none), read only
// as a regular file, never through a symbolic link ([readRegular]). Intent lines are split on '\n'
// and '\r' as the reference's freeze splits them, stripped, blank ones skipped; marker lines are
// split on '\n' alone and kept when blank (the unobserved-path mark is a bare "\n"). Lines must be
// UTF-8.
func (s *Store) callIDLines(id, suffix string) ([]string, error) {
	b, err := readRegular(s.path(id, suffix))
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(b) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var lines []string
	if suffix == IncompleteFileSuffix {
		lines = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	} else {
		lines = strings.FieldsFunc(string(b), func(r rune) bool { return r == '\n' || r == '\r' })
	}
	out := lines[:0]
	for _, line := range lines {
		line = strings.Trim(line, asciiSpace)
		if line == "" && suffix != IncompleteFileSuffix {
			continue
		}
		if !utf8.ValidString(line) {
			return nil, pyErr("UnicodeDecodeError", "'utf-8' codec can't decode a line of "+id+suffix, nil)
		}
		out = append(out, line)
	}
	return out, nil
}

// dangling returns the distinct intents without an entry, in first-seen order.
func dangling(intents []string, entries []TokenEntry) []string {
	recorded := make(map[string]bool, len(entries)+len(intents))
	for _, e := range entries {
		recorded[e.ModelCallID] = true
	}
	var out []string
	for _, id := range intents {
		if !recorded[id] {
			recorded[id] = true
			out = append(out, id)
		}
	}
	return out
}
