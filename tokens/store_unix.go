//go:build unix

package tokens

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// This file holds the operating-system primitives of the store: BSD flock on the lock file (the
// same lock Python's fcntl.flock takes, so Gym's processes and ours exclude each other, TOKENS.md
// §2.4), durable appends, directory fsync and exact file modes. Every call is retried on EINTR.

// flock applies a BSD flock operation (unix.LOCK_EX, unix.LOCK_SH, unix.LOCK_UN) to f, blocking
// until it is granted.
func flock(f *os.File, how int) error {
	fd := int(f.Fd())
	for {
		err := unix.Flock(fd, how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// openCreate opens path with flag as a regular file, never through a symbolic link ([openRegular]:
// anything else is an error wrapping [ErrNotRegularFile]), creating it with exactly mode when it
// is missing (the umask does not narrow it); created reports whether it did.
func openCreate(path string, flag int, mode fs.FileMode) (f *os.File, created bool, err error) {
	for {
		f, err = openRegular(path, flag, 0)
		if !errors.Is(err, fs.ErrNotExist) {
			return f, false, err
		}
		f, err = openRegular(path, flag|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue // created by someone else meanwhile: open it as it is
		}
		if err != nil {
			return nil, false, err
		}
		if err := f.Chmod(mode); err != nil {
			f.Close()
			return nil, false, err
		}
		return f, true, nil
	}
}

// appendDurably appends data to path (created with mode when missing) and fsyncs it; it returns
// the file's size after the write and whether the file was created.
func appendDurably(path string, data []byte, mode fs.FileMode) (size int64, created bool, err error) {
	f, created, err := openCreate(path, os.O_WRONLY|os.O_APPEND, mode)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return 0, created, err
	}
	if err := f.Sync(); err != nil {
		return 0, created, err
	}
	size, err = f.Seek(0, 1)
	if err != nil {
		return 0, created, err
	}
	return size, created, f.Close()
}

// syncDir fsyncs the directory dir, so that entries created, renamed or removed in it are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// renameFile renames the regular file oldpath to newpath, replacing newpath atomically (rename(2),
// retried on EINTR); the error is an *os.LinkError as os.Rename's.
func renameFile(oldpath, newpath string) error {
	for {
		err := unix.Rename(oldpath, newpath)
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, unix.EINTR):
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
		}
	}
}

// removeIfExists removes path; a missing file is not an error (Python's unlink(missing_ok=True)).
func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
