package capture

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// JournalRecovery is what [Store.RecoverJournals] did.
type JournalRecovery struct {
	// Journals are the dead journals found and replayed (then removed); Live those of running
	// stores, left alone.
	Journals int `json:"journals"`
	Live     int `json:"live"`
	// Records are the intact records read from the dead journals, Appended those of them that were
	// missing from their rollout files and have been appended (the rest were there already).
	Records  int `json:"records"`
	Appended int `json:"appended"`
	// TornBytes are the bytes of torn segment tails cut (a crash during a journal write: records
	// whose call had not been answered).
	TornBytes int64 `json:"torn_bytes"`
	// DamagedBytes are the bytes of damaged or refused frames that intact frames follow in a
	// segment (the segment changed after it was written: a media error, an edit): the records they
	// held are lost from the journal (they may be in their files). The intact frames around them
	// are recovered, and each segment that had such bytes is kept, moved into the journal directory
	// as <owner>-<segment>.damaged (which later recoveries leave alone), and named in Kept.
	DamagedBytes int64    `json:"damaged_bytes"`
	Kept         []string `json:"kept,omitempty"`
	// Skipped are the entries of the journal directory that no store made (a directory whose name
	// is no owner's, a symbolic link, a file) and owner directories left in place because they hold
	// files a store did not write, each with the reason: never followed, read or removed.
	Skipped []string `json:"skipped,omitempty"`
}

// Warnings returns one line per thing a user should look at: each kept segment and each skipped
// entry. Empty when the recovery found nothing unusual.
func (r JournalRecovery) Warnings() []string {
	return append(slices.Clone(r.Kept), r.Skipped...)
}

// RecoverJournals replays the journals of journaled stores that ended without closing (a crash of
// their process or machine) into the store directory's rollout files (SPEC §0 D17): every intact
// record that is missing from its file is appended exactly once, durably (flock, write, fsync, as in
// per-record mode), and the journal is then removed. A record is missing when its file holds no
// line with its model_call_id (a rollout file, [CaptureFileSuffix]; a line without one, and a line
// of any other file, is missing when the file holds no identical line), so replaying is idempotent
// and a record the writer found already in its file is not appended again. A torn tail (a crash
// during a journal write) is cut. A journal whose owner is still running (its lock is held) is never
// touched. Recoveries exclude each other and a journal being set up with the journal directory's
// setup lock, so two concurrent recoveries append nothing twice, and one that returns has finished
// every dead journal there was when it started.
//
// Damage in the middle of a segment costs only the frames it hit: the intact frames after it are
// recovered, and the segment is kept aside (see [JournalRecovery.Kept]). Entries of the journal
// directory that no store made are left alone and reported ([JournalRecovery.Skipped]); a journal
// directory that is a symbolic link is an error (the store never follows one).
//
// A directory without [JournalDirName] costs one lstat and creates nothing; one whose journal
// directory holds no owner directory (what a cleanly closed store leaves) is only listed, without
// the setup lock, so a user without write access can still read it. The error names the
// journal or file that could not be read or written; that journal is then kept whole for the next
// recovery, and the counts say what was done. Safe for concurrent use, also across processes.
func (s *Store) RecoverJournals() (JournalRecovery, error) {
	var rec JournalRecovery
	root := filepath.Join(s.dir, JournalDirName)
	if ok, err := journalRootExists(root); err != nil || !ok {
		return rec, err
	}
	des, err := os.ReadDir(root)
	if err != nil {
		return rec, fmt.Errorf("capture journal: %w", err)
	}
	if slices.ContainsFunc(des, fs.DirEntry.IsDir) {
		// An owner directory may hold a dead journal: look again under the setup lock. Without
		// one there is nothing to replay, and no lock (nor write access, to create the lock file)
		// is needed, which lets a reader without write access read a cleanly closed store's files.
		setup, err := openSetupLock(root, s.cfg.fileMode, unix.LOCK_EX)
		if err != nil {
			return rec, err
		}
		defer closeFile(setup) //nolint:errcheck // releases LOCK_EX; nothing was written through it
		if des, err = os.ReadDir(root); err != nil {
			return rec, fmt.Errorf("capture journal: %w", err)
		}
	}
	var errs []error
	for _, de := range des {
		name := de.Name()
		switch {
		case name == journalSetupLock && de.Type().IsRegular(),
			strings.HasSuffix(name, journalKeptSuffix) && de.Type().IsRegular():
			continue
		case !de.IsDir():
			rec.Skipped = append(rec.Skipped, fmt.Sprintf("capture journal: left %s alone: no store made it (a store makes only directories here, besides %s and kept *%s segments)", filepath.Join(root, name), journalSetupLock, journalKeptSuffix))
			continue
		case !isJournalOwnerName(name):
			rec.Skipped = append(rec.Skipped, fmt.Sprintf("capture journal: left %s alone: no store made it (owner directories are named <host>-<pid>-<16 hex digits>)", filepath.Join(root, name)))
			continue
		}
		dir := filepath.Join(root, name)
		live, err := s.recoverJournal(dir, &rec)
		if live {
			rec.Live++
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("capture journal %s: %w", dir, err))
		}
	}
	return rec, errors.Join(errs...)
}

// recoverJournal replays and removes the owner directory dir unless its owner is alive.
func (s *Store) recoverJournal(dir string, rec *JournalRecovery) (live bool, err error) {
	lockPath := filepath.Join(dir, journalOwnerLock)
	fd, err := openFile(lockPath, unix.O_RDONLY|unix.O_NOFOLLOW, 0)
	switch {
	case isNotExist(err): // its owner died setting up, or closed it and was removing it
	case err != nil:
		return false, pathErr("open", lockPath, err)
	default:
		defer closeFile(fd) //nolint:errcheck // releases the dead owner's lock, taken below
		var st unix.Stat_t
		if err := fstat(fd, &st); err != nil {
			return false, pathErr("fstat", lockPath, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFREG {
			rec.Skipped = append(rec.Skipped, fmt.Sprintf("capture journal: left %s alone: its %s is not a regular file, so no store made it", dir, journalOwnerLock))
			return false, nil
		}
		err := ignoringEINTR(func() error { return unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) })
		if errors.Is(err, unix.EWOULDBLOCK) {
			return true, nil
		}
		if err != nil {
			return false, pathErr("flock", lockPath, err)
		}
	}
	segs, err := journalSegments(dir)
	if err != nil {
		return false, err
	}
	var recs []journalRecord
	damaged := map[string]segmentScan{}
	for _, p := range segs {
		b, err := readNoFollow(p)
		if err != nil {
			return false, err
		}
		if header, ok := otherJournalVersion(b); ok {
			return false, fmt.Errorf("%s: journal format %q, not %q: written by another gymtrace version, which must recover it (kept whole)", p, header, strings.TrimSuffix(journalMagic, "\n"))
		}
		sc := parseJournalSegment(b)
		recs = append(recs, sc.recs...)
		rec.TornBytes += int64(sc.torn)
		if sc.isDamaged() {
			damaged[p] = sc
		}
	}
	rec.Records += len(recs)
	n, err := s.replay(recs)
	rec.Appended += n
	if err != nil {
		return false, err
	}
	rec.Journals++
	for _, p := range segs {
		if sc, ok := damaged[p]; ok {
			kept, err := keepDamagedSegment(p)
			if err != nil {
				return false, err
			}
			rec.DamagedBytes += int64(sc.damaged)
			rec.Kept = append(rec.Kept, keptMessage(kept, sc))
			continue
		}
		if _, err := unlink(p); err != nil {
			return false, pathErr("remove", p, err)
		}
	}
	if _, err := unlink(lockPath); err != nil {
		return false, pathErr("remove", lockPath, err)
	}
	err = rmdir(dir)
	if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
		rec.Skipped = append(rec.Skipped, fmt.Sprintf("capture journal: left %s in place: it holds files no store wrote (its journal, if any, was recovered)", dir))
		return false, nil
	}
	return false, pathErr("remove", dir, err)
}

// journalKeptSuffix ends the name of a damaged segment a recovery kept.
const journalKeptSuffix = ".damaged"

// keepDamagedSegment moves the segment p out of its owner directory into the journal directory
// as <owner>-<segment>.damaged (or <owner>-<segment>-<k>.damaged, k = 2, 3, ..., when that name is
// taken: nothing there is ever replaced), durably, and returns the new path.
func keepDamagedSegment(p string) (string, error) {
	owner := filepath.Dir(p)
	root := filepath.Dir(owner)
	base := filepath.Join(root, filepath.Base(owner)+"-"+strings.TrimSuffix(filepath.Base(p), journalSegSuffix))
	for k := 1; k <= 100; k++ {
		kept := base + journalKeptSuffix
		if k > 1 {
			kept = fmt.Sprintf("%s-%d%s", base, k, journalKeptSuffix)
		}
		err := ignoringEINTR(func() error { return unix.Renameat2(unix.AT_FDCWD, p, unix.AT_FDCWD, kept, unix.RENAME_NOREPLACE) })
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return "", pathErr("rename", p, err)
		}
		return kept, pathErr("fsync", root, syncDir(root))
	}
	return "", fmt.Errorf("capture journal: keep %s: %s and 99 numbered names after it are taken", p, base+journalKeptSuffix)
}

// keptMessage describes a kept damaged segment.
func keptMessage(kept string, sc segmentScan) string {
	where := "between intact frames"
	if len(sc.recs) == 0 {
		where = "and it holds no intact frame"
	}
	msg := fmt.Sprintf("capture journal: kept %s: %d byte%s of it %s damaged %s", kept, sc.damaged, pluralS(sc.damaged), wasWere(sc.damaged), where)
	if sc.headerless {
		msg += ", its header among them"
	}
	if len(sc.refused) > 0 {
		msg += " (" + strings.Join(sc.refused, "; ") + ")"
	}
	recovered := "no record could be recovered from it"
	if n := len(sc.recs); n > 0 {
		recovered = fmt.Sprintf("its %d intact record%s %s recovered", n, pluralS(n), wasWere(n))
	}
	return msg + "; " + recovered + ", those the damaged bytes held may be missing from their rollout files"
}

// pluralS returns "s" unless n is 1.
func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// wasWere returns "was" for 1, "were" otherwise.
func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

// journalRootExists reports whether the journal directory root exists; one that is a symbolic
// link or not a directory is an error naming it (the store never follows a link, SPEC §0 D17).
func journalRootExists(root string) (bool, error) {
	var st unix.Stat_t
	err := ignoringEINTR(func() error { return unix.Lstat(root, &st) })
	switch {
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR):
		return false, nil
	case err != nil:
		return false, pathErr("lstat", root, err)
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return false, fmt.Errorf("capture journal: %s is a symbolic link: the store never follows one (SPEC §0 D17); put the directory it points to in its place (a link's target may hold journals to recover)", root)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return false, fmt.Errorf("capture journal: %s is not a directory (SPEC §0 D17); move it away", root)
	}
	return true, nil
}

// isJournalOwnerName reports whether name has the shape of an owner directory's name
// (journalOwnerName): a host, a decimal pid and 16 hex digits, joined by "-".
func isJournalOwnerName(name string) bool {
	rest, hexPart, ok := cutLast(name, "-")
	if !ok || len(hexPart) != 16 || strings.Trim(hexPart, "0123456789abcdef") != "" {
		return false
	}
	host, pid, ok := cutLast(rest, "-")
	return ok && host != "" && pid != "" && strings.Trim(pid, "0123456789") == ""
}

// isJournalSegmentName reports whether name is a segment's: 20 decimal digits and ".seg"
// (journalSegPattern). Other files of an owner directory are not the store's: left in place.
func isJournalSegmentName(name string) bool {
	digits, ok := strings.CutSuffix(name, journalSegSuffix)
	return ok && len(digits) == 20 && strings.Trim(digits, "0123456789") == ""
}

// cutLast is strings.Cut at the last sep.
func cutLast(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// readNoFollow reads the regular file p without following a symbolic link, in one buffer of its
// size.
func readNoFollow(p string) ([]byte, error) {
	fd, err := openFile(p, unix.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	defer closeFile(fd) //nolint:errcheck // read-only
	var st unix.Stat_t
	if err := fstat(fd, &st); err != nil {
		return nil, pathErr("fstat", p, err)
	}
	b, err := readAll(fd, st.Size)
	return b, pathErr("read", p, err)
}

// journalSegments returns the segment files of an owner directory in write order.
func journalSegments(dir string) ([]string, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var segs []string
	for _, de := range des {
		if de.Type().IsRegular() && isJournalSegmentName(de.Name()) {
			segs = append(segs, filepath.Join(dir, de.Name()))
		}
	}
	slices.Sort(segs) // zero-padded numbers: name order is number order
	return segs, nil
}

// replay appends the records missing from their files, one durable commit per file (in journal
// order within each file), with a store of its own so that its line indexes (keyed by
// replayKeyOf) are never shared with a writer's. It returns how many lines it appended.
func (s *Store) replay(recs []journalRecord) (int, error) {
	byFile := map[string][]*appendReq{}
	var order []string
	for _, r := range recs {
		if _, ok := byFile[r.name]; !ok {
			order = append(order, r.name)
		}
		keyOf := replayKeyOf(r.name)
		byFile[r.name] = append(byFile[r.name], &appendReq{line: r.line, key: keyOf(trimASCIISpace(r.line)), keyOf: keyOf})
	}
	rs := newStore(s.dir, s.cfg)
	appended := 0
	var errs []error
	for _, name := range order {
		reqs := byFile[name]
		path := filepath.Join(s.dir, name)
		for len(reqs) > 0 {
			batch := reqs[:min(len(reqs), maxBatchLines)]
			reqs = reqs[len(batch):]
			if err := rs.commit(path, batch); err != nil && !errors.Is(err, ErrDirNotSynced) {
				errs = append(errs, err)
				break
			}
			for _, r := range batch {
				if !r.dup {
					appended++
				}
			}
		}
	}
	s.counts.lines.Add(rs.counts.lines.Load())
	s.counts.fileSyncs.Add(rs.counts.fileSyncs.Load())
	s.counts.dirSyncs.Add(rs.counts.dirSyncs.Load())
	return appended, errors.Join(errs...)
}

// replayKeyOf returns the identity of a journaled line in the file name: its model_call_id in a
// rollout file ([ModelCallLines.KeyOf]), else (and for any other file) the line itself.
func replayKeyOf(name string) func(line []byte) string {
	exact := func(line []byte) string { return "\x00" + string(line) }
	if !strings.HasSuffix(name, CaptureFileSuffix) {
		return exact
	}
	return func(line []byte) string {
		if k := (ModelCallLines{}).KeyOf(line); k != "" {
			return k
		}
		return exact(line)
	}
}
