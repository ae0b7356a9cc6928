package tokens

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// Default permissions of what the store creates, the capture files' (SPEC §2.1, DESIGN.md
// "Security"): applied exactly, the umask neither narrows nor widens them.
const (
	DefaultDirMode  fs.FileMode = 0o700
	DefaultFileMode fs.FileMode = 0o600
)

// Store is the reference's TokenCaptureStore (TOKENS.md §2): one flat directory holding, per
// rollout id, `<id>.tokens.jsonl` (canonical TokenEntry lines), `<id>.tokens.state.json` (the state
// index), `<id>.tokens.lock` (the flock target), `<id>.tokens.incomplete` and `<id>.tokens.intents`,
// byte for byte as the reference writes them, so Gym's own collector can read, freeze and retire
// what gymtrace captured and the other way round.
//
// Every operation on a rollout holds BSD flock on its lock file for its whole duration (exclusive,
// shared for [Store.ReadEntries] and [Store.IsIncomplete], TOKENS.md §2.4): a Store is safe for
// concurrent use by goroutines, and any number of processes (gymtrace's and Gym's Python ones) may
// use one directory at once. Different rollouts never wait for each other. Operations block while
// another holds the rollout's lock. A Store holds no open files and starts no goroutines; it needs
// no Close.
//
// *Store satisfies [Source] (Freeze, Drop) and is the sink the proxy writes through (BeginCall,
// Append, MarkIncomplete).
type Store struct {
	dir      string
	dirMode  fs.FileMode
	fileMode fs.FileMode

	// The vector tests replace these (they pin the reference's counters and clock).
	now        func() time.Time
	snapshotID func() string
}

// StoreOption configures a [Store] built by [OpenStore].
type StoreOption func(*Store)

// WithDirMode sets the mode of the store directory and of any missing parents [OpenStore] creates
// (default [DefaultDirMode], 0700), applied exactly. Existing directories keep theirs.
func WithDirMode(mode fs.FileMode) StoreOption { return func(s *Store) { s.dirMode = mode } }

// WithFileMode sets the mode of every file the store creates (default [DefaultFileMode], 0600),
// applied exactly; the state file gets it at each rewrite. Existing files keep theirs.
func WithFileMode(mode fs.FileMode) StoreOption { return func(s *Store) { s.fileMode = mode } }

// OpenStore returns the store rooted at dir, creating dir and missing parents (mkdir -p, TOKENS.md
// §2.1) with the directory mode. dir must be an absolute path (as the reference's
// token_id_capture.dir must be, §3.9); it is used as given. Modes must be permission bits only,
// with the owner's read and write (and search, for the directory). The error names dir or the mode
// and the rule, or wraps the mkdir failure.
func OpenStore(dir string, opts ...StoreOption) (*Store, error) {
	s := &Store{dir: dir, dirMode: DefaultDirMode, fileMode: DefaultFileMode, now: time.Now, snapshotID: newSnapshotID}
	for _, o := range opts {
		o(s)
	}
	switch {
	case dir == "" || !filepath.IsAbs(dir):
		return nil, fmt.Errorf("token store: directory %q must be an absolute path", dir)
	case s.dirMode&^fs.ModePerm != 0 || s.dirMode&0o700 != 0o700:
		return nil, fmt.Errorf("token store: directory mode %#o must be permission bits including owner rwx (0700)", uint32(s.dirMode))
	case s.fileMode&^fs.ModePerm != 0 || s.fileMode&0o600 != 0o600:
		return nil, fmt.Errorf("token store: file mode %#o must be permission bits including owner rw (0600)", uint32(s.fileMode))
	}
	if err := mkdirAll(dir, s.dirMode); err != nil {
		return nil, fmt.Errorf("token store: create directory %q: %w", dir, err)
	}
	return s, nil
}

// Dir returns the store's directory as given to [OpenStore].
func (s *Store) Dir() string { return s.dir }

// newSnapshotID is the reference's uuid4().hex in shape: 32 lowercase hex digits from crypto/rand.
func newSnapshotID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand.Read)
	return hex.EncodeToString(b[:])
}

// mkdirAll creates dir and its missing parents with exactly mode.
func mkdirAll(dir string, mode fs.FileMode) error {
	var missing []string
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], mode); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		} else if err == nil {
			if err := os.Chmod(missing[i], mode); err != nil {
				return err
			}
		}
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// locked runs fn holding flock on id's lock file (created with the file mode if missing, as every
// locked operation does, reads included: [ST-02]); id is validated first.
func (s *Store) locked(id string, shared bool, fn func() error) error {
	if err := ValidateRolloutID(id); err != nil {
		return err
	}
	f, _, err := openCreate(s.path(id, LockFileSuffix), os.O_RDWR|os.O_APPEND, s.fileMode)
	if err != nil {
		return err
	}
	defer f.Close()
	how := unix.LOCK_EX
	if shared {
		how = unix.LOCK_SH
	}
	if err := flock(f, how); err != nil {
		return fmt.Errorf("token store: lock %s: %w", f.Name(), err)
	}
	defer flock(f, unix.LOCK_UN) //nolint:errcheck // closing the file releases it anyway
	return fn()
}

// liveState reads id's state and refuses a retired rollout, and a frozen one unless frozenOK, with
// the reference's RuntimeErrors (TOKENS.md §2.6).
func (s *Store) liveState(id string, frozenOK bool) (*state, error) {
	st, err := s.readState(id)
	switch {
	case err != nil:
		return nil, err
	case st.flag(stateRetired):
		return nil, pyErr("RuntimeError", "Token capture for rollout "+id+" is retired", ErrRetired)
	case !frozenOK && st.flag(stateFrozen):
		return nil, pyErr("RuntimeError", "Token capture for rollout "+id+" is already frozen", ErrFrozen)
	}
	return st, nil
}

// Append durably appends e to its rollout's JSONL file, once per model_call_id (the reference's
// append/put, TOKENS.md §3.1, §2.5, §2.7): the canonical line ([TokenEntry.Line]) is appended and
// fsynced, then the state index gets its digest, indexed_size and version+1 (a rewrite without
// fsync: the index is rebuilt from the JSONL if lost). Appending the same call id with the same
// canonical bytes again is a no-op; with other bytes the state is marked incomplete (version+1,
// durably) and the reference's ValueError "Model call id '<cid>' was reused with a different payload
// for rollout '<rid>'" is returned ([ST-04]; no marker line is written on this path). A frozen or
// retired rollout refuses with the reference's RuntimeError ([ErrFrozen], [ErrRetired]); index
// recovery errors (§2.7) are returned as they are.
//
// Before any lock is taken or file touched, e must be writable and readable back (TOKENS.md §4 item
// 4): it must pass [TokenEntry.Validate] and serialize ([TokenEntry.CanonicalJSON]), and, unlike the
// reference, which writes a NaN or infinite log prob as null and so poisons every later read of the
// rollout ([ST-19]) or writes an entry its readers refuse ([ST-22]), gymtrace refuses such an entry
// (T7, [ErrNonFinite] for non-finite floats): the caller then marks the rollout incomplete. When the
// JSONL file is created, the directory is fsynced too (the reference does not, §6 #15).
func (s *Store) Append(e TokenEntry) error {
	if err := e.Validate(); err != nil {
		return err
	}
	for i, f := range e.GenerationLogProbs {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return pyErr("ValueError", fmt.Sprintf("generation_log_probs[%d] is %s: gymtrace never writes a non-finite log prob, which the reference would write as null and could not read back (docs/TOKENS.md §0 T7)", i, python.ReprFloat(f)), ErrNonFinite)
		}
	}
	if math.IsNaN(e.CreatedAt) || math.IsInf(e.CreatedAt, 0) {
		return pyErr("ValueError", "created_at is "+python.ReprFloat(e.CreatedAt)+": gymtrace never writes a non-finite float (docs/TOKENS.md §0 T7)", ErrNonFinite)
	}
	canonical, err := e.CanonicalJSON()
	if err != nil {
		return err
	}
	digest := EntryDigest(canonical)
	id := e.RolloutID
	return s.locked(id, false, func() error {
		st, err := s.liveState(id, false)
		if err != nil {
			return err
		}
		changed, err := s.syncIndex(id, st)
		if err != nil {
			return err
		}
		digests, _ := st.get(stateEntryDigests)
		if existing, ok := digests.Get(e.ModelCallID); ok && !existing.IsNull() {
			if d, isStr := existing.AsString(); isStr && d == digest {
				if changed {
					return s.writeState(id, st, true)
				}
				return nil
			}
			st.set(stateIncomplete, ojson.Bool(true))
			if err := st.bumpVersion(1); err != nil {
				return err
			}
			if err := s.writeState(id, st, true); err != nil {
				return err
			}
			return pyErr("ValueError", fmt.Sprintf("Model call id %s was reused with a different payload for rollout %s",
				python.ReprStr(e.ModelCallID), python.ReprStr(id)), nil)
		}
		size, created, err := appendDurably(s.path(id, EntriesFileSuffix), append(canonical, '\n'), s.fileMode)
		if err != nil {
			return err
		}
		if created {
			if err := syncDir(s.dir); err != nil {
				return err
			}
		}
		st.set(stateIndexedSize, ojson.Int(size))
		digests = digests.Clone()
		digests.Set(e.ModelCallID, ojson.String(digest))
		st.set(stateEntryDigests, digests)
		if err := st.bumpVersion(1); err != nil {
			return err
		}
		return s.writeState(id, st, false)
	})
}

// BeginCall durably records that call modelCallID of rollout id is about to be dispatched (the
// reference's begin_call, TOKENS.md §3.1): "<modelCallID>\n" is appended to `<id>.tokens.intents`
// and fsynced (the state is not touched), so that a call whose entry never arrives masks the
// rollout at [Store.Freeze] ([ST-09], [SK-12]). A retired or frozen rollout refuses with the
// reference's RuntimeError ([ErrRetired], [ErrFrozen]): the proxy then refuses the call (T5). When
// the intents file is created, the directory is fsynced too.
func (s *Store) BeginCall(id, modelCallID string) error {
	return s.locked(id, false, func() error {
		if _, err := s.liveState(id, false); err != nil {
			return err
		}
		_, created, err := appendDurably(s.path(id, IntentsFileSuffix), []byte(modelCallID+"\n"), s.fileMode)
		if err == nil && created {
			err = syncDir(s.dir)
		}
		return err
	})
}

// MarkIncomplete durably records that a call of rollout id was lost (the reference's
// mark_incomplete, TOKENS.md §3.1, §3.3): the state gets incomplete: true and version+1 (written
// durably), then "<modelCallID>\n" is appended to `<id>.tokens.incomplete` (a bare "\n" for "", the
// unobserved-path mark) and fsynced, then the directory. A frozen rollout is marked too (its
// snapshot can then no longer be dropped, [ST-05]); a retired one refuses ([ErrRetired]). It is the
// state flag that readers use; the marker file is evidence only ([ST-08]).
func (s *Store) MarkIncomplete(id, modelCallID string) error {
	return s.locked(id, false, func() error {
		st, err := s.liveState(id, true)
		if err != nil {
			return err
		}
		st.set(stateIncomplete, ojson.Bool(true))
		if err := st.bumpVersion(1); err != nil {
			return err
		}
		if err := s.writeState(id, st, true); err != nil {
			return err
		}
		if _, _, err := appendDurably(s.path(id, IncompleteFileSuffix), []byte(modelCallID+"\n"), s.fileMode); err != nil {
			return err
		}
		return syncDir(s.dir)
	})
}

// IsIncomplete reports the state file's incomplete flag under the shared lock (the reference's
// is_incomplete, TOKENS.md §3.1): the marker file and dangling intents are not consulted.
func (s *Store) IsIncomplete(id string) (bool, error) {
	var incomplete bool
	err := s.locked(id, true, func() error {
		st, err := s.readState(id)
		incomplete = err == nil && st.flag(stateIncomplete)
		return err
	})
	return incomplete, err
}

// ReadEntries returns rollout id's entries in file order under the shared lock (TOKENS.md §2.8): no
// file is no entries; blank lines are skipped; any line that does not parse ([ParseEntry]) fails the
// whole read (there is no tolerant reader, [ST-19]–[ST-21]). Identical duplicate lines are returned
// twice ([ST-16]). The file is read only as a regular file, never through a symbolic link (else an
// error wrapping [ErrNotRegularFile] naming the path).
func (s *Store) ReadEntries(id string) ([]TokenEntry, error) {
	var entries []TokenEntry
	err := s.locked(id, true, func() error {
		var err error
		entries, err = s.readEntries(id)
		return err
	})
	return entries, err
}

func (s *Store) readEntries(id string) ([]TokenEntry, error) {
	b, err := readRegular(s.path(id, EntriesFileSuffix))
	if errors.Is(err, fs.ErrNotExist) {
		return []TokenEntry{}, nil
	}
	if err != nil {
		return nil, err
	}
	return parseEntries(b)
}

// parseEntries parses the content b of a JSONL file with the rules of [Store.ReadEntries].
func parseEntries(b []byte) ([]TokenEntry, error) {
	entries := []TokenEntry{}
	for line := range bytes.Lines(b) {
		if line = bytes.Trim(line, asciiSpace); len(line) == 0 {
			continue
		}
		e, err := ParseEntry(line)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// Freeze freezes rollout id and returns its snapshot (the reference's freeze_now, TOKENS.md §2.6,
// §3.8), under the exclusive lock: the index is recovered (§2.7); the first freeze sets frozen,
// mints the snapshot id (32 lowercase hex from crypto/rand) and bumps the version, and writes the
// state durably (a later freeze writes it only if recovery changed it, and returns the same
// snapshot id); then the entries are read, and the snapshot is incomplete when the state says so or
// when an intent has no entry. Freeze is idempotent. A retired rollout refuses ([ErrRetired]). As in
// the reference, a line that fails to read makes Freeze fail after the frozen state was written
// ([ST-22]).
func (s *Store) Freeze(id string) (Snapshot, error) {
	var snap Snapshot
	err := s.locked(id, false, func() error {
		st, err := s.liveState(id, true)
		if err != nil {
			return err
		}
		changed, err := s.syncIndex(id, st)
		if err != nil {
			return err
		}
		if !st.flag(stateFrozen) {
			st.set(stateFrozen, ojson.Bool(true))
			st.set(stateSnapshotID, ojson.String(s.snapshotID()))
			if err := st.bumpVersion(1); err != nil {
				return err
			}
			changed = true
		}
		if changed {
			if err := s.writeState(id, st, true); err != nil {
				return err
			}
		}
		entries, err := s.readEntries(id)
		if err != nil {
			return err
		}
		dangling, err := s.danglingIntents(id, entries)
		if err != nil {
			return err
		}
		snapID, ok := st.get(stateSnapshotID)
		if !ok {
			return pyErr("KeyError", python.ReprStr(stateSnapshotID), nil)
		}
		version, err := st.version()
		if err != nil {
			return err
		}
		snap = Snapshot{RolloutID: id, Entries: entries, Incomplete: st.flag(stateIncomplete) || dangling,
			SnapshotID: python.Str(snapID), Version: version}
		return nil
	})
	return snap, err
}

// danglingIntents reports whether an intent line names a call with no entry ([Store.callIDLines]).
func (s *Store) danglingIntents(id string, entries []TokenEntry) (bool, error) {
	intents, err := s.callIDLines(id, IntentsFileSuffix)
	if err != nil {
		return false, err
	}
	return len(dangling(intents, entries)) > 0, nil
}

// Drop retires rollout id's capture when it is frozen at exactly (snapshotID, version), and reports
// whether it did (the reference's drop, TOKENS.md §2.6, [ST-05], [ST-25], [ST-26]): the JSONL,
// marker and intents files are removed and the state is rewritten durably as a tombstone
// (indexed_size 0, entry_digests {}, retired true; frozen, incomplete, snapshot_id and version
// kept), after which every operation but Delete and SweepRetired refuses. A rollout that is not
// frozen, or frozen at another identity, is left as it is (false, nil).
func (s *Store) Drop(id, snapshotID string, version int64) (bool, error) {
	var dropped bool
	err := s.locked(id, false, func() error {
		st, err := s.readState(id)
		if err != nil {
			return err
		}
		if !st.flag(stateFrozen) {
			return nil
		}
		if v, _ := st.get(stateSnapshotID); v.Kind() != ojson.KindString || python.Str(v) != snapshotID {
			return nil
		}
		n, err := st.intOf(stateVersion, false)
		if err != nil {
			return err
		}
		if !n.IsInt64() || n.Int64() != version {
			return nil
		}
		for _, suffix := range []string{EntriesFileSuffix, IncompleteFileSuffix, IntentsFileSuffix} {
			if err := removeIfExists(s.path(id, suffix)); err != nil {
				return err
			}
		}
		st.set(stateIndexedSize, ojson.Int(0))
		st.set(stateEntryDigests, ojson.Object())
		st.set(stateRetired, ojson.Bool(true))
		if err := s.writeState(id, st, true); err != nil {
			return err
		}
		dropped = true
		return syncDir(s.dir)
	})
	return dropped, err
}

// Delete removes rollout id's JSONL, marker, intents and state files (tombstone included) under the
// exclusive lock, keeping the lock file, and fsyncs the directory (the reference's delete, the
// collector's pre-dispatch clear, TOKENS.md §2.6, [ST-06]): the id starts afresh (version 1 at the
// next append). Deleting what does not exist is not an error.
func (s *Store) Delete(id string) error {
	return s.locked(id, false, func() error {
		for _, suffix := range []string{EntriesFileSuffix, IncompleteFileSuffix, IntentsFileSuffix, StateFileSuffix} {
			if err := removeIfExists(s.path(id, suffix)); err != nil {
				return err
			}
		}
		return syncDir(s.dir)
	})
}

// SweepRetired removes the tombstones of retired rollouts whose state file was last modified at
// least olderThan ago: their state, intents, marker and lock files, each under its rollout's
// exclusive lock; it returns how many it removed and fsyncs the directory once if any (the
// reference's sweep_retired, TOKENS.md §2.6, [ST-24]). State files whose name is not a valid id are
// skipped; a state file that cannot be read stops the sweep with its error.
func (s *Store) SweepRetired(olderThan time.Duration) (int, error) {
	cutoff := s.now().Add(-olderThan)
	names, err := os.ReadDir(s.dir)
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, de := range names {
		id, ok := strings.CutSuffix(de.Name(), StateFileSuffix)
		if !ok || ValidateRolloutID(id) != nil {
			continue
		}
		err := s.locked(id, false, func() error {
			fi, err := os.Lstat(s.path(id, StateFileSuffix)) // readState refuses what is not a regular file
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			if fi.ModTime().After(cutoff) {
				return nil
			}
			st, err := s.readState(id)
			if err != nil || !st.flag(stateRetired) {
				return err
			}
			for _, suffix := range []string{StateFileSuffix, IntentsFileSuffix, IncompleteFileSuffix, LockFileSuffix} {
				if err := removeIfExists(s.path(id, suffix)); err != nil {
					return err
				}
			}
			removed++
			return nil
		})
		if err != nil {
			return removed, err
		}
	}
	if removed > 0 {
		return removed, syncDir(s.dir)
	}
	return removed, nil
}

// The store is the finalization's Source and the proxy's sink.
var (
	_ Source     = (*Store)(nil)
	_ Sink       = (*Store)(nil)
	_ IntentSink = (*Store)(nil)
)
