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

// openFile opens path with flags and perm (perm is used only with O_CREAT; umask applies).
// O_CLOEXEC is always added so forked children never inherit capture descriptors.
func openFile(path string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Open(path, flags|unix.O_CLOEXEC, perm)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

// closeFile closes fd. EINTR from close is not retried: on Linux the descriptor is released anyway.
func closeFile(fd int) error {
	return unix.Close(fd)
}

// flock applies a BSD flock operation (unix.LOCK_EX, unix.LOCK_SH or unix.LOCK_UN), blocking until
// the lock is granted.
func flock(fd, how int) error {
	for {
		err := unix.Flock(fd, how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// fstat returns the size in bytes and the link count of the open file.
func fstat(fd int) (size int64, nlink uint64, err error) {
	var st unix.Stat_t
	for {
		err = unix.Fstat(fd, &st)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return 0, 0, err
	}
	return st.Size, uint64(st.Nlink), nil
}

// lastByte reads the byte at offset size-1 of a file of the given size (size > 0).
func lastByte(fd int, size int64) (byte, error) {
	var b [1]byte
	for {
		n, err := unix.Pread(fd, b[:], size-1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n != 1 {
			return 0, io.ErrUnexpectedEOF
		}
		return b[0], nil
	}
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
		chunk := bufs
		if len(chunk) > maxIOV {
			chunk = chunk[:maxIOV]
		}
		n, err := unix.Writev(fd, chunk)
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
	for {
		err := unix.Ftruncate(fd, size)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// fsync flushes the file's data and metadata to stable storage.
func fsync(fd int) error {
	for {
		err := unix.Fsync(fd)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
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

// statExists reports whether path exists (stat(2): a symbolic link is followed for this existence
// test only; nothing is ever opened through one, see openRegular). A missing path or a missing parent
// directory is (false, nil); other failures (ELOOP included) are errors.
func statExists(path string) (bool, error) {
	var st unix.Stat_t
	for {
		err := unix.Stat(path, &st)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err == nil {
			return true, nil
		}
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return false, nil
		}
		return false, err
	}
}

// unlink removes the directory entry path (a symbolic link itself, never its target) and reports
// whether it removed one; a missing path is not an error.
func unlink(path string) (bool, error) {
	for {
		err := unix.Unlink(path)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.ENOENT) {
			return false, nil
		}
		return err == nil, err
	}
}
