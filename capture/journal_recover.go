package capture

import (
	"errors"
	"fmt"
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
// A directory without [JournalDirName] costs one stat and creates nothing. The error names the
// journal or file that could not be read or written; that journal is then kept whole for the next
// recovery, and the counts say what was done. Safe for concurrent use, also across processes.
func (s *Store) RecoverJournals() (JournalRecovery, error) {
	var rec JournalRecovery
	root := filepath.Join(s.dir, JournalDirName)
	if ok, err := statExists(root); err != nil || !ok {
		return rec, pathErr("stat", root, err)
	}
	setup, err := openSetupLock(root, s.cfg.fileMode, unix.LOCK_EX)
	if err != nil {
		return rec, err
	}
	defer closeFile(setup) //nolint:errcheck // releases LOCK_EX; nothing was written through it
	des, err := os.ReadDir(root)
	if err != nil {
		return rec, fmt.Errorf("capture journal: %w", err)
	}
	var errs []error
	for _, de := range des {
		if !de.IsDir() { // the setup lock; a symbolic link is never followed
			continue
		}
		dir := filepath.Join(root, de.Name())
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
	for _, p := range segs {
		b, err := os.ReadFile(p)
		if err != nil {
			return false, err
		}
		r, torn, err := parseJournalSegment(b)
		if err != nil {
			return false, fmt.Errorf("%s: %w", p, err)
		}
		recs = append(recs, r...)
		rec.TornBytes += int64(torn)
	}
	rec.Records += len(recs)
	n, err := s.replay(recs)
	rec.Appended += n
	if err != nil {
		return false, err
	}
	rec.Journals++
	for _, p := range append(segs, lockPath) {
		if _, err := unlink(p); err != nil {
			return false, pathErr("remove", p, err)
		}
	}
	return false, pathErr("remove", dir, rmdir(dir))
}

// journalSegments returns the segment files of an owner directory in write order.
func journalSegments(dir string) ([]string, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var segs []string
	for _, de := range des {
		if de.Type().IsRegular() && strings.HasSuffix(de.Name(), journalSegSuffix) {
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
