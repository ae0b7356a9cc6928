package capture

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gymtrace/gymtrace/internal/python"
)

// File name suffixes of the store layout (SPEC §2.1): <root>/<rollout_id>.capture.jsonl holds the
// records, <root>/<rollout_id>.capture.incomplete is the empty marker meaning "at least one write for
// this rollout failed".
const (
	CaptureFileSuffix = ".capture.jsonl"
	MarkerFileSuffix  = ".capture.incomplete"
)

// Default permissions of what the store creates (DESIGN.md "Security"). The store applies its modes
// exactly: a directory or file it creates is chmod'ed to the mode after creation, so the process umask
// neither narrows nor widens it.
const (
	DefaultDirMode  fs.FileMode = 0o700
	DefaultFileMode fs.FileMode = 0o600
)

// maxBatchLines bounds how many queued lines one group commit takes (the rest go to the next commit),
// so one writev never exceeds the kernel's iovec limit (one extra buffer for the D7 repair newline).
const maxBatchLines = maxIOV - 1

// maxReopen bounds how often one commit reopens a capture file that was unlinked (by Clear) between
// its open and its lock.
const maxReopen = 8

// ErrInvalidRolloutID is wrapped by every error about a rollout id that is not a safe file name
// (SPEC §2.2). Its text is Gym's ValueError text, so messages read `Invalid rollout id: '<repr>' ...`.
var ErrInvalidRolloutID = errors.New("Invalid rollout id") //nolint:staticcheck // Gym's exact message (SPEC §2.2)

// ValidateRolloutID checks id as a capture file name (SPEC §2.2): valid iff it is non-empty and
// every character is an ASCII letter, an ASCII digit, '.', '_' or '-'. Leading '.', '_' or '-' are
// allowed (".." is valid and names the file "...capture.jsonl"); this is looser than the explicit-id
// pattern of SPEC §1.1. The error wraps [ErrInvalidRolloutID]; its message starts with Gym's
// `Invalid rollout id: '<id as Python repr>'` and then names the rule.
func ValidateRolloutID(id string) error {
	if id != "" && strings.Trim(id, rolloutIDChars) == "" {
		return nil
	}
	return fmt.Errorf("%w: %s (want one or more ASCII letters, digits, '.', '_' or '-')",
		ErrInvalidRolloutID, python.ReprStr(id))
}

// rolloutIDChars are the characters of a valid rollout id.
const rolloutIDChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"

// StoreOption configures a [Store] built by [NewStore].
type StoreOption interface {
	apply(*storeConfig)
}

type storeConfig struct {
	dirMode     fs.FileMode
	fileMode    fs.FileMode
	syncHook    func(path string) error
	dirSyncHook func(dir string) error
	writeHook   func(path string, size int) (int, error) // WithWriteHook (writehook.go)

	durability      Durability    // WithDurability (durability.go)
	journalInterval time.Duration // WithJournalSyncInterval

	// syncedHook, set only by tests, learns each file's size after every fsync or fdatasync of it
	// (rollout files and journal segments): the part a machine crash cannot take back.
	syncedHook func(path string, size int64)
}

type storeOptionFunc func(*storeConfig)

func (f storeOptionFunc) apply(c *storeConfig) { f(c) }

// WithDirMode sets the mode of the capture directory and of any missing parents when the store
// creates them ([NewStore], and an [Store.Append] or [Store.MarkIncomplete] that finds the directory
// removed). Default [DefaultDirMode], 0700. The mode is applied exactly (chmod after mkdir; the umask
// does not narrow it). It must pass [ValidateDirMode] (permission bits only, including owner rwx),
// else NewStore fails. Existing directories are left as they are.
func WithDirMode(mode fs.FileMode) StoreOption {
	return storeOptionFunc(func(c *storeConfig) { c.dirMode = mode })
}

// WithFileMode sets the mode of the capture files and markers the store creates (default
// [DefaultFileMode], 0600). The mode is applied exactly (fchmod after creation; the umask does not
// narrow it). It must pass [ValidateFileMode] (permission bits only, including owner rw), else
// NewStore fails. Existing files keep their mode.
func WithFileMode(mode fs.FileMode) StoreOption {
	return storeOptionFunc(func(c *storeConfig) { c.fileMode = mode })
}

// WithSyncHook installs a function called with the capture file's path once per group commit, after
// the batch was written and while the file's exclusive flock is held, right before fsync. If it
// returns an error the fsync is skipped and every [Store.Append] of the batch returns that error.
// In journal mode ([DurabilityJournal]) it is called with the journal segment's path instead, once
// per journal batch, after the batch was written and right before the fdatasync (and still with the
// file's path for a line given in pieces, which is fsynced in its file).
// It is meant for tests (a slow or blocking fsync, counting commits, injecting failures); default none.
// The hook may be called from many goroutines at once (one per file being committed).
func WithSyncHook(hook func(path string) error) StoreOption {
	return storeOptionFunc(func(c *storeConfig) { c.syncHook = hook })
}

// WithDirSyncHook installs a function called with the store directory once per group commit that
// created its file, after the file's own fsync succeeded, right before the directory's fsync. If it
// returns an error the directory fsync is skipped and the commit's error wraps [ErrDirNotSynced]
// (its lines are on stable storage, their new directory entry may not be). It is meant for tests
// (injecting the directory fsync failure); default none. It may be called from many goroutines at once.
func WithDirSyncHook(hook func(dir string) error) StoreOption {
	return storeOptionFunc(func(c *storeConfig) { c.dirSyncHook = hook })
}

// ErrDirNotSynced is wrapped by the error of an [Store.Append] (or [Store.AppendStream]) whose line
// is in the file and fsynced, in a file the commit created, when only the fsync of the store
// directory failed afterwards: the line is there and readable, but the file's directory entry may
// not survive a power loss or OS crash (a process crash does not lose it). A retry finds the line
// and does not append it again. The [Writer] reports it as [OutcomeWrittenDirUnsynced].
var ErrDirNotSynced = errors.New("line written and fsynced, but the fsync of the directory holding its new file failed (the file's directory entry may not survive a power loss)")

// Store is a capture directory (SPEC §2): one flat directory holding, per rollout id, the append-only
// record file <id>.capture.jsonl and the marker <id>.capture.incomplete.
//
// Appends are durable (flock LOCK_EX, write, fsync) and group-committed: concurrent Appends to the same
// file from this process share one lock, one write and one fsync; different files never wait for each
// other. Other processes (including Gym's Python writers and readers) are excluded by BSD flock.
//
// In journal mode ([WithDurability], SPEC §0 D17) a line is made durable in the store's own journal
// first (one fdatasync for a batch of concurrent appends to any files), then appended to its file
// under the same flock without an fsync of its own; the files are fsynced in the background. Such a
// store holds its journal open and runs one goroutine until [Store.Close].
//
// A per-record Store holds no open files and starts no goroutines; Close is then a no-op. It is
// safe for concurrent use by multiple goroutines.
type Store struct {
	dir     string
	cfg     storeConfig
	journal *journal // journal mode only
	counts  syncCounters

	mu      sync.Mutex            // guards files and indexes; never held across I/O
	files   map[string]*fileQueue // capture path -> in-process append queue, present while in use
	indexes map[string]*lineIndex // path -> keys already in the file (lineindex.go), bounded
}

// NewStore returns the store rooted at dir, creating dir and missing parents (mkdir -p, SPEC §2.1)
// with exactly the directory mode (default 0700, [WithDirMode]). dir must be an absolute path (SPEC
// §7); it is used as given, without "~" expansion, and may itself be or pass through a symbolic link
// (only the files inside it are never opened through one). The error names dir or the mode and the
// rule, or wraps the mkdir failure.
func NewStore(dir string, opts ...StoreOption) (*Store, error) {
	cfg := storeConfig{dirMode: DefaultDirMode, fileMode: DefaultFileMode, journalInterval: DefaultJournalSyncInterval}
	for _, o := range opts {
		if o != nil { // a nil option is skipped, as in NewWriter
			o.apply(&cfg)
		}
	}
	if dir == "" || !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("capture store: directory %q must be an absolute path", dir)
	}
	if err := ValidateDirMode(cfg.dirMode); err != nil {
		return nil, err
	}
	if err := ValidateFileMode(cfg.fileMode); err != nil {
		return nil, err
	}
	if cfg.durability > DurabilityJournal {
		return nil, fmt.Errorf("capture store: unknown durability %v", cfg.durability)
	}
	if cfg.journalInterval <= 0 {
		return nil, fmt.Errorf("capture store: journal sync interval %v must be positive", cfg.journalInterval)
	}
	if err := mkdirAllMode(dir, cfg.dirMode); err != nil {
		return nil, fmt.Errorf("capture store: create directory %q: %w", dir, err)
	}
	s := newStore(dir, cfg)
	if cfg.durability == DurabilityJournal {
		j, err := openJournal(s)
		if err != nil {
			return nil, fmt.Errorf("capture store: %w", err)
		}
		s.journal = j
	}
	return s, nil
}

func newStore(dir string, cfg storeConfig) *Store {
	return &Store{dir: dir, cfg: cfg, files: make(map[string]*fileQueue), indexes: make(map[string]*lineIndex)}
}

// Durability returns the store's durability mode ([WithDurability]).
func (s *Store) Durability() Durability { return s.cfg.durability }

// Close ends a journaled store ([DurabilityJournal]): later appends fail, every rollout file it
// appended to is fsynced, then its journal is removed. When a file cannot be made durable, the
// journal segments that cover it are kept (the next recovery, [Store.RecoverJournals], replays them
// once this process has ended) and the error names the file. Call it after the last Append has
// returned. For a per-record store it does nothing. Safe to call more than once: later calls return
// the first result.
func (s *Store) Close() error {
	if s.journal == nil {
		return nil
	}
	return s.journal.close()
}

// Dir returns the store's root directory exactly as given to [NewStore].
func (s *Store) Dir() string { return s.dir }

// CapturePath returns <dir>/<id>.capture.jsonl after validating id ([ValidateRolloutID]).
func (s *Store) CapturePath(id string) (string, error) { return s.validPath(id, CaptureFileSuffix) }

// MarkerPath returns <dir>/<id>.capture.incomplete after validating id ([ValidateRolloutID]).
func (s *Store) MarkerPath(id string) (string, error) { return s.validPath(id, MarkerFileSuffix) }

func (s *Store) validPath(id, suffix string) (string, error) {
	if err := ValidateRolloutID(id); err != nil {
		return "", err
	}
	return filepath.Join(s.dir, id+suffix), nil
}

func (s *Store) capturePath(id string) string { return filepath.Join(s.dir, id+CaptureFileSuffix) }
func (s *Store) markerPath(id string) string  { return filepath.Join(s.dir, id+MarkerFileSuffix) }

// Append durably appends one record line to id's capture file (SPEC §2.3, §0 D7, DESIGN.md
// "Durability before completion"). line must be one complete JSON object text ending in "\n" with no
// other newline (the output of the record encoder); anything else is refused before any I/O.
//
// The file is opened in append mode (created with exactly the file mode if missing; never through a
// symbolic link, and only if it is a regular file with one link (checked at the open and again once
// locked), else the error wraps [ErrNotRegularFile] and names the path; if the store directory was removed meanwhile it is recreated once), locked with
// flock(LOCK_EX), repaired if its last byte is not "\n" (D7: a "\n" is written first so a torn line
// from a crashed writer stays one unreadable line), written with one writev, fsynced, unlocked and
// closed. When the file was created, its directory is fsynced too. Concurrent Appends to the same file
// within this process are batched into one such commit; Append returns nil only after its own line is
// on stable storage, or returns the commit's error (then the line may or may not be in the file;
// callers mark the rollout incomplete), except an error wrapping [ErrDirNotSynced]: the line is on
// stable storage in a file this commit created, only the directory's fsync failed. A batch whose
// write fails is cut back to the file's previous length, so no partial line of ours stays behind.
// In journal mode ([DurabilityJournal], SPEC §0 D17) the line is first made durable in the
// store's journal (one fdatasync shared with the concurrent Appends to any files), then appended
// as above without the fsyncs (the background sync makes the file and a new directory entry
// durable), and Append returns after both.
//
// ctx is checked once before the line is queued (an already cancelled ctx returns its error and
// writes nothing); once queued, the write is never abandoned, so the result always tells whether the
// line is durable. Callers run it on a detached context (context.WithoutCancel). Safe for concurrent use.
func (s *Store) Append(ctx context.Context, id string, line []byte) error {
	return s.appendTo(ctx, "capture append", id, CaptureFileSuffix, &appendReq{line: line}, checkLine(line))
}

// AppendStream is [Store.Append] for a record line produced in pieces, so that a large record (a
// 1 MiB stream's) is never held whole in memory: write is called exactly once, by the goroutine
// committing the batch that holds the request, while the file is locked (after the lines queued
// before it, before those queued after it), and must pass the line's consecutive pieces to emit,
// which writes each one to the file before returning (the piece's memory may be reused afterwards).
// Together the pieces must form one JSON object text ending in "}\n" with no other newline; a line
// that breaks this, an error returned by write or a failed emit fails the whole commit, which is
// then cut back like any failed batch (no partial line of ours stays behind). sizeHint is the
// expected line length in bytes, given to the write hook ([WithWriteHook]) as part of the commit's
// size. Durability, locking, D7 repair and errors are as for Append; write is not called when
// Append would refuse before any I/O (invalid id, ctx done). Safe for concurrent use.
func (s *Store) AppendStream(ctx context.Context, id string, sizeHint int, write func(emit func(piece []byte) error) error) error {
	var lineErr error
	if write == nil {
		lineErr = errors.New("nil line writer")
	}
	req := &appendReq{write: write, hint: max(sizeHint, 0)}
	return s.appendTo(ctx, "capture append", id, CaptureFileSuffix, req, lineErr)
}

// appendTo queues req for <dir>/<id><suffix> after checking id, then lineErr (the line's own
// check), then ctx; op starts every error's text.
func (s *Store) appendTo(ctx context.Context, op, id, suffix string, req *appendReq, lineErr error) error {
	if err := ValidateRolloutID(id); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	err := cmp.Or(lineErr, ctx.Err())
	if err == nil {
		err = s.enqueue(filepath.Join(s.dir, id+suffix), req)
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", op, id, err)
	}
	return nil
}

// enqueue queues req on path's group-commit queue and waits for its commit's result. In journal
// mode a whole line is made durable in the journal first (SPEC §0 D17), and its commit then skips
// the file's fsync.
func (s *Store) enqueue(path string, req *appendReq) error {
	if s.journal != nil && req.write == nil {
		seg, err := s.journal.append(path, req.line)
		if err != nil {
			return err
		}
		defer s.journal.finish(seg, path)
		req.journaled = true
	}
	q := s.acquire(path)
	defer s.release(path, q)
	return q.append(s, path, req)
}

// checkLine enforces Append's contract on line.
func checkLine(line []byte) error {
	n := len(line)
	if n < 3 || line[0] != '{' || line[n-2] != '}' || line[n-1] != '\n' {
		return errors.New(`line must be one JSON object ending in "}\n"`)
	}
	if i := bytes.IndexByte(line[:n-1], '\n'); i >= 0 {
		return fmt.Errorf(`line must hold exactly one record: newline at byte %d`, i)
	}
	return nil
}

// fileQueue is the in-process group-commit state of one capture file.
type fileQueue struct {
	refs int // Appends using this queue; guarded by Store.mu

	mu      sync.Mutex
	pending []*appendReq // queued, not yet taken by a committer; pending[0] leads next
	busy    bool         // a committer is running (or has been handed the lead)
}

// appendReq is one queued line: whole (line), or produced in pieces while committing (write, with
// its size hint). A keyed line (key set, keyOf reading the key of a line already in the file) is
// not written when its key is already in the file: dup is set instead (lineindex.go). wake receives
// exactly one signal: either the request was committed (done, err set) or it was handed the lead of
// the next commit (lead set).
type appendReq struct {
	line   []byte
	write  func(emit func([]byte) error) error
	hint   int
	key    string
	keyOf  func(line []byte) string
	keyNew bool // key added to the file's index by this request's commit
	dup    bool
	// journaled: the line is already durable in the store's journal, so its commit needs no fsync.
	journaled bool
	wake      chan struct{}
	lead      bool
	done      bool
	err       error
}

func (s *Store) acquire(path string) *fileQueue {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.files[path]
	if q == nil {
		q = &fileQueue{}
		s.files[path] = q
	}
	q.refs++
	return q
}

func (s *Store) release(path string, q *fileQueue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q.refs--
	if q.refs == 0 {
		delete(s.files, path)
	}
}

// append queues line and either waits for a committer to write it or becomes the committer. The first
// request that finds no committer running leads; when a leader finishes it hands the lead to the
// oldest request still queued, so every request waits for at most the commit in flight plus its own.
func (q *fileQueue) append(s *Store, path string, req *appendReq) error {
	req.wake = make(chan struct{}, 1)
	q.mu.Lock()
	q.pending = append(q.pending, req)
	if q.busy {
		q.mu.Unlock()
		<-req.wake
		q.mu.Lock()
		if req.done {
			err := req.err
			q.mu.Unlock()
			return err
		}
		// Handed the lead: req is pending[0].
	}
	q.busy = true
	n := min(len(q.pending), maxBatchLines)
	batch := make([]*appendReq, n)
	copy(batch, q.pending)
	q.pending = append(q.pending[:0], q.pending[n:]...)
	q.mu.Unlock()

	err := s.commit(path, batch)

	q.mu.Lock()
	for _, r := range batch {
		if r != req {
			r.done, r.err = true, err
			if r.dup {
				r.err = nil // its line was already in the file before this commit
			}
			r.wake <- struct{}{}
		}
	}
	if len(q.pending) > 0 {
		next := q.pending[0]
		next.lead = true
		next.wake <- struct{}{}
	} else {
		q.busy = false
	}
	q.mu.Unlock()
	if req.dup {
		return nil
	}
	return err
}

// commit writes the batch's lines to path under flock(LOCK_EX) with one writev and one fsync.
func (s *Store) commit(path string, batch []*appendReq) (err error) {
	var st unix.Stat_t // the locked file's, from openLocked
	fd, created, err := s.openLocked(path, &st)
	if err != nil {
		return err
	}
	defer func() {
		// Unlock explicitly before close (close would release it too).
		if cerr := errors.Join(pathErr("unlock", path, flock(fd, unix.LOCK_UN)), pathErr("close", path, closeFile(fd))); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()

	size := st.Size
	end := size // the file's length after this commit's writes
	write := batch
	endsLine := size == 0 // the file's last byte is known to be "\n" (or it is empty)
	var idx *lineIndex
	if keyOf := batchKeyOf(batch); keyOf != nil {
		idx = s.index(path, keyOf)
		if err := idx.sync(fd, &st); err != nil {
			return pathErr("read", path, err)
		}
		endsLine = endsLine || idx.covers(&st)
		write = idx.dedupe(batch)
		defer func() {
			if err != nil && !errors.Is(err, ErrDirNotSynced) {
				idx.failed(batch)
			} else {
				idx.committed(end, write)
			}
		}()
	}
	if len(write) > 0 {
		bw, err := s.newBatchWriter(fd, path, write, size, endsLine)
		if err == nil {
			err = bw.writeBatch(write)
		}
		if err != nil {
			// Take back whatever part of the batch reached the file; we still hold LOCK_EX.
			return errors.Join(pathErr("write", path, err), pathErr("truncate", path, truncate(fd, size)))
		}
		end += bw.written
	}
	s.counts.lines.Add(int64(len(write)))
	if !slices.ContainsFunc(batch, func(r *appendReq) bool { return !r.journaled }) {
		// Journal mode: the lines are durable in the journal; the file, and the directory entry
		// of a file created here, are synced by the journal's next rotation.
		if created {
			s.journal.dirCreated.Store(true)
		}
		return nil
	}
	// An all-duplicate batch still fsyncs: the lines it found may be another writer's not yet
	// flushed.
	if s.cfg.syncHook != nil {
		if err := s.cfg.syncHook(path); err != nil {
			return fmt.Errorf("sync %s: %w", path, err)
		}
	}
	s.counts.fileSyncs.Add(1)
	if err := s.counts.waited.time(func() error { return fsync(fd) }); err != nil {
		return pathErr("fsync", path, err)
	}
	if s.cfg.syncedHook != nil && fstat(fd, &st) == nil {
		s.cfg.syncedHook(path, st.Size)
	}
	if created {
		if err := s.syncCreatedDir(); err != nil {
			return fmt.Errorf("%w: %w", ErrDirNotSynced, pathErr("fsync", s.dir, err))
		}
	}
	return nil
}

// syncCreatedDir fsyncs the store directory after a commit created a file in it, through the
// directory sync hook when one is set ([WithDirSyncHook]).
func (s *Store) syncCreatedDir() error {
	if s.cfg.dirSyncHook != nil {
		if err := s.cfg.dirSyncHook(s.dir); err != nil {
			return err
		}
	}
	s.counts.dirSyncs.Add(1)
	return syncDir(s.dir)
}

var newline = []byte{'\n'}

// batchKeyOf returns the key reader of the batch's first keyed request, nil when none is keyed.
func batchKeyOf(batch []*appendReq) func([]byte) string {
	for _, r := range batch {
		if r.key != "" {
			return r.keyOf
		}
	}
	return nil
}

// openLocked opens path for appending (creating it if missing, [Store.openOrCreate] with
// [openEntry]), takes flock(LOCK_EX) and only then checks the file ([checkRegular]: what is not a
// regular file, or has a second link, is refused as at any open), so one fstat serves the check and
// the size. If the file was unlinked between open and lock (a concurrent Clear), it reopens, so a
// record is never written into a removed file. created reports whether this call created the file;
// st is set to the locked file's fstat (its size is where the commit's writes begin).
func (s *Store) openLocked(path string, st *unix.Stat_t) (fd int, created bool, err error) {
	recreated := false
	for range maxReopen {
		const flags = unix.O_RDWR | unix.O_APPEND
		fd, created, err = s.openOrCreateWith(openEntry, path, flags, &recreated)
		if err != nil {
			return -1, false, pathErr("open", path, err)
		}
		if err = flock(fd, unix.LOCK_EX); err != nil {
			return -1, false, errors.Join(pathErr("flock", path, err), closeFile(fd))
		}
		if err := checkRegular(fd, flags, st); err != nil {
			return -1, false, errors.Join(pathErr("open", path, err), closeFile(fd))
		}
		if st.Nlink == 1 {
			return fd, created, nil
		}
		if err := closeFile(fd); err != nil {
			return -1, false, pathErr("close", path, err)
		}
	}
	return -1, false, fmt.Errorf("open %s: file keeps being removed while locking (%d attempts)", path, maxReopen)
}

// pathErr wraps a syscall error with the operation and path (nil stays nil).
func pathErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// MarkIncomplete creates id's empty marker file <id>.capture.incomplete (SPEC §2.6; an existing marker
// is kept) with exactly the file mode and fsyncs the directory so the marker survives a crash. Like
// Append it never opens the marker through a symbolic link and accepts only a regular file (the error
// wraps [ErrNotRegularFile] and names the path), and recreates a removed store directory once.
// Safe for concurrent use.
func (s *Store) MarkIncomplete(id string) error {
	if err := ValidateRolloutID(id); err != nil {
		return fmt.Errorf("capture mark incomplete: %w", err)
	}
	path := s.markerPath(id)
	recreated := false
	fd, _, err := s.openOrCreate(path, unix.O_WRONLY, &recreated)
	if err != nil {
		return fmt.Errorf("capture mark incomplete: %w", pathErr("open", path, err))
	}
	if err := closeFile(fd); err != nil {
		return fmt.Errorf("capture mark incomplete: %w", pathErr("close", path, err))
	}
	if err := syncDir(s.dir); err != nil {
		return fmt.Errorf("capture mark incomplete: %w", pathErr("fsync", s.dir, err))
	}
	return nil
}

// IsIncomplete reports whether id's marker file exists (SPEC §2.6). A failing stat other than
// "does not exist" is returned as an error.
func (s *Store) IsIncomplete(id string) (bool, error) {
	if err := ValidateRolloutID(id); err != nil {
		return false, fmt.Errorf("capture is incomplete: %w", err)
	}
	ok, err := statExists(s.markerPath(id))
	if err != nil {
		return false, fmt.Errorf("capture is incomplete: %w", pathErr("stat", s.markerPath(id), err))
	}
	return ok, nil
}

// HasCapture reports whether id's capture file or its marker exists: the test by which SPEC §2.6's
// _store_for_rollout picks the first store of a rollout. A failing stat other than "does not exist"
// is returned as an error.
func (s *Store) HasCapture(id string) (bool, error) {
	if err := ValidateRolloutID(id); err != nil {
		return false, fmt.Errorf("capture lookup: %w", err)
	}
	for _, p := range []string{s.capturePath(id), s.markerPath(id)} {
		ok, err := statExists(p)
		if err != nil {
			return false, fmt.Errorf("capture lookup: %w", pathErr("stat", p, err))
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}
