//go:build unix

package capture

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/gymtrace/gymtrace/internal/filekind"
)

// This file holds how the store opens its files and creates its directories: capture files and
// markers are opened only as regular files and never through a symbolic link (O_NOFOLLOW), so a link
// planted in the capture directory cannot redirect a record or a marker to a file outside it, and
// only with one link, so a hard link planted there cannot either; what the store creates gets
// exactly the configured mode, whatever the process umask.

// ErrNotRegularFile is wrapped by every error about a capture file or marker path that exists but is
// not a regular file with one link: a symbolic link (never followed), a directory, a FIFO, a socket,
// a device, or a regular file with more than one hard link (another name, possibly outside the
// capture directory, would receive what is written). The error's path names the file; its text
// names the rule.
var ErrNotRegularFile = errors.New("not a regular file")

// notRegularError reports that the store refused a path of the given kind ("a symbolic link", ...).
func notRegularError(kind string) error {
	return fmt.Errorf("%w (%s): capture files and markers must be regular files with one link and symbolic links are never followed", ErrNotRegularFile, kind)
}

// hardLinkError reports a regular file with nlink names, refused like a file that is not regular.
func hardLinkError(nlink uint64) error {
	return notRegularError(fmt.Sprintf("a hard link: %d links", nlink))
}

// openRegular opens path with flags (O_CLOEXEC, O_NOFOLLOW and, for the open itself when it could
// block, O_NONBLOCK added, so opening a FIFO never blocks) and returns the descriptor only if it is a
// regular file with at most one link (none: removed since the open, which the caller may check
// again); perm is used only with O_CREAT. A path that exists but is not a regular file gives an error
// wrapping [ErrNotRegularFile]; other failures are the raw errno (ENOENT for a missing file or
// directory, EEXIST for O_CREAT|O_EXCL on an existing entry), for the caller to wrap with the path.
func openRegular(path string, flags int, perm uint32) (int, error) {
	fd, err := openEntry(path, flags, perm)
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := checkRegular(fd, flags, &st); err != nil {
		return -1, errors.Join(err, closeFile(fd))
	}
	return fd, nil
}

// openEntry is the open of [openRegular] without its check: the caller must call [checkRegular] on
// the descriptor before any read or write (the append path does so after taking its lock, with the
// one fstat it needs for the file's size anyway).
func openEntry(path string, flags int, perm uint32) (int, error) {
	extra := unix.O_NOFOLLOW
	if openMayBlock(flags) {
		extra |= unix.O_NONBLOCK
	}
	fd, err := openFile(path, flags|extra, perm)
	if err != nil {
		if !isNotExist(err) && !errors.Is(err, unix.EEXIST) {
			if kind := filekind.NonRegular(path); kind != "" {
				return -1, notRegularError(kind)
			}
		}
		return -1, err
	}
	return fd, nil
}

// openMayBlock reports whether an open with flags could wait on a FIFO's other end: on Linux, an
// O_RDWR open of a FIFO returns at once (fifo(7)), so only the append path's O_RDWR opens go without
// O_NONBLOCK, and with it without the fcntl that takes it back.
func openMayBlock(flags int) bool {
	return runtime.GOOS != "linux" || flags&unix.O_ACCMODE != unix.O_RDWR
}

// checkRegular fstats fd, opened by [openEntry] with flags, into st and refuses what is not a
// regular file or has more than one link; then it takes back the open's O_NONBLOCK, if it added one.
// A file with no link (removed since the open) passes, for the caller to check.
func checkRegular(fd, flags int, st *unix.Stat_t) error {
	if err := fstat(fd, st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return notRegularError(filekind.Of(st.Mode))
	}
	if st.Nlink > 1 {
		return hardLinkError(uint64(st.Nlink))
	}
	if !openMayBlock(flags) {
		return nil
	}
	// One F_SETFL, not SetNonblock's F_GETFL and F_SETFL: the status flags are the ones just
	// opened with (F_SETFL changes only O_APPEND, O_ASYNC, O_DIRECT, O_NOATIME and O_NONBLOCK).
	_, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags)
	return err
}

// fchmod sets the exact permission bits of an open file (the umask narrowed them at creation).
func fchmod(fd int, mode fs.FileMode) error {
	return ignoringEINTR(func() error { return unix.Fchmod(fd, uint32(mode.Perm())) })
}

// openOrCreate opens the store file path with flags (read/write flags, O_APPEND), as a regular file
// and never through a symbolic link ([openRegular]). A missing file is created exclusively with the
// store's file mode, then fchmod'ed to exactly that mode (created true); if another writer creates it
// first, that file is opened instead. When the create fails with ENOENT because the store directory
// was removed while the store was in use, the directory (and missing parents) is recreated with the
// directory mode once per *recreated flag, and the open is retried.
func (s *Store) openOrCreate(path string, flags int, recreated *bool) (fd int, created bool, err error) {
	return s.openOrCreateWith(openRegular, path, flags, recreated)
}

// openOrCreateWith is [Store.openOrCreate] opening with open ([openRegular], or [openEntry] for a
// caller that checks the file itself).
func (s *Store) openOrCreateWith(open func(path string, flags int, perm uint32) (int, error), path string, flags int, recreated *bool) (fd int, created bool, err error) {
	for range maxReopen {
		fd, err = open(path, flags, 0)
		if !isNotExist(err) {
			return fd, false, err
		}
		fd, err = open(path, flags|unix.O_CREAT|unix.O_EXCL, uint32(s.cfg.fileMode))
		switch {
		case err == nil:
			if err := fchmod(fd, s.cfg.fileMode); err != nil {
				return -1, false, errors.Join(err, closeFile(fd))
			}
			return fd, true, nil
		case errors.Is(err, unix.EEXIST):
			// Created by another writer since our first open: open that one.
		case isNotExist(err) && !*recreated:
			*recreated = true
			if err := mkdirAllMode(s.dir, s.cfg.dirMode); err != nil {
				return -1, false, fmt.Errorf("recreate the removed capture directory: %w", err)
			}
		default:
			return -1, false, err
		}
	}
	return -1, false, fmt.Errorf("file keeps appearing and disappearing while being opened (%d attempts)", maxReopen)
}

// mkdirAllMode is mkdir -p for dir: every missing directory of the path is created with exactly mode
// (fchmod after mkdir, so the umask does not narrow it) and its parent is fsynced, so the new entry
// survives a crash. Existing directories, including ones reached through a symbolic link that the
// user configured, are used as they are, keeping their mode. A path component that exists but is not
// a directory gives an error wrapping ENOTDIR.
func mkdirAllMode(dir string, mode fs.FileMode) error {
	var missing []string
	for p := filepath.Clean(dir); ; {
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				return &fs.PathError{Op: "mkdir", Path: p, Err: unix.ENOTDIR}
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, p)
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		p = parent
	}
	for i := len(missing) - 1; i >= 0; i-- {
		p := missing[i]
		err := unix.Mkdir(p, uint32(mode.Perm()))
		if errors.Is(err, unix.EINTR) {
			i++ // retry this directory
			continue
		}
		if errors.Is(err, unix.EEXIST) {
			// Created concurrently by someone else: use it as it is if it is a directory.
			if fi, serr := os.Stat(p); serr != nil || !fi.IsDir() {
				return &fs.PathError{Op: "mkdir", Path: p, Err: unix.ENOTDIR}
			}
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "mkdir", Path: p, Err: err}
		}
		if err := chmodDir(p, mode); err != nil {
			return &fs.PathError{Op: "chmod", Path: p, Err: err}
		}
		if err := syncDir(filepath.Dir(p)); err != nil {
			return &fs.PathError{Op: "fsync", Path: filepath.Dir(p), Err: err}
		}
	}
	return nil
}

// chmodDir sets the exact mode of the directory we just created, through a descriptor opened without
// following a symbolic link.
func chmodDir(dir string, mode fs.FileMode) error {
	fd, err := openFile(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	return errors.Join(fchmod(fd, mode), closeFile(fd))
}
