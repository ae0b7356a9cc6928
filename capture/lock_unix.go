//go:build unix

package capture

import (
	"errors"
	"io"

	"golang.org/x/sys/unix"
)

// This file holds the operating-system primitives of the store: BSD flock (SPEC §2.3/§2.4: whole-file
// advisory locks, never fcntl/POSIX record locks, so Gym's Python writers and ours exclude each other),
// and the raw-descriptor open/read/write/sync calls around it. Every call is retried on EINTR.

// maxIOV bounds the buffers handed to one writev call (Linux IOV_MAX is 1024).
const maxIOV = 1024

// ignoringEINTR calls f until it returns anything but EINTR.
func ignoringEINTR(f func() error) error {
	for {
		if err := f(); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// openFile opens path with flags and perm (perm is used only with O_CREAT; umask applies).
// O_CLOEXEC is always added so forked children never inherit capture descriptors.
func openFile(path string, flags int, perm uint32) (fd int, err error) {
	err = ignoringEINTR(func() error {
		fd, err = unix.Open(path, flags|unix.O_CLOEXEC, perm)
		return err
	})
	return fd, err
}

// closeFile closes fd. EINTR from close is not retried: on Linux the descriptor is released anyway.
func closeFile(fd int) error {
	return unix.Close(fd)
}

// flock applies a BSD flock operation (unix.LOCK_EX, unix.LOCK_SH or unix.LOCK_UN), blocking until
// the lock is granted.
func flock(fd, how int) error {
	return ignoringEINTR(func() error { return unix.Flock(fd, how) })
}

// fstat is fstat(2).
func fstat(fd int, st *unix.Stat_t) error {
	return ignoringEINTR(func() error { return unix.Fstat(fd, st) })
}

// lastByte reads the byte at offset size-1 of a file of the given size (size > 0).
func lastByte(fd int, size int64) (byte, error) {
	var b [1]byte
	err := preadFull(fd, b[:], size-1)
	return b[0], err
}

// writeAll writes every buffer of bufs, in order, with as few writev calls as possible (one for up
// to maxIOV buffers that the kernel accepts whole). It consumes bufs (slices are re-sliced).
func writeAll(fd int, bufs [][]byte) error {
	for len(bufs) > 0 {
		// Drop empty buffers at the front so a zero-byte writev never looks like no progress.
		if len(bufs[0]) == 0 {
			bufs = bufs[1:]
			continue
		}
		n, err := unix.Writev(fd, bufs[:min(len(bufs), maxIOV)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return io.ErrShortWrite
		}
		for n > 0 {
			if n >= len(bufs[0]) {
				n -= len(bufs[0])
				bufs = bufs[1:]
				continue
			}
			bufs[0] = bufs[0][n:]
			n = 0
		}
	}
	return nil
}

// truncate cuts the file back to size bytes (used to take back a partly written batch).
func truncate(fd int, size int64) error {
	return ignoringEINTR(func() error { return unix.Ftruncate(fd, size) })
}

// fsync flushes the file's data and metadata to stable storage.
func fsync(fd int) error {
	return ignoringEINTR(func() error { return unix.Fsync(fd) })
}

// syncDir fsyncs the directory dir so a newly created entry in it survives a crash.
func syncDir(dir string) error {
	fd, err := openFile(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	return errors.Join(fsync(fd), closeFile(fd))
}

// readAll reads the open file from its current offset to EOF. sizeHint (the file's size from fstat)
// pre-sizes the buffer; the file may still grow or shrink while it is read.
func readAll(fd int, sizeHint int64) ([]byte, error) {
	capacity := 512
	if sizeHint > 0 && sizeHint < 1<<40 {
		capacity = int(sizeHint) + 512
	}
	buf := make([]byte, 0, capacity)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// isNotExist reports whether err means the path does not exist.
func isNotExist(err error) bool {
	return errors.Is(err, unix.ENOENT)
}

// lstat is unix.Lstat; tests replace it to make an existence test fail (run as root, no
// permission can).
var lstat = unix.Lstat

// statExists reports whether the directory entry path exists (lstat(2): a symbolic link exists as
// itself, dangling or not, so that the opens after this test refuse it by name, see openRegular,
// where the reference's Path.exists would call a dangling one absent). A missing path or a missing
// parent directory is (false, nil); other failures are errors.
func statExists(path string) (bool, error) {
	var st unix.Stat_t
	err := ignoringEINTR(func() error { return lstat(path, &st) })
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return false, nil
	}
	return err == nil, err
}

// unlink removes the directory entry path (a symbolic link itself, never its target) and reports
// whether it removed one; a missing path is not an error.
func unlink(path string) (bool, error) {
	err := ignoringEINTR(func() error { return unix.Unlink(path) })
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	return err == nil, err
}
