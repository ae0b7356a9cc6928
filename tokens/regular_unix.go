//go:build unix

package tokens

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/gymtrace/gymtrace/internal/filekind"
)

// This file holds how the store opens a rollout's files, for reading and for writing: only as
// regular files with one link and never through a symbolic link (O_NOFOLLOW), so a link, a FIFO,
// a device or a directory planted under a token file's name (`<id>.tokens.jsonl ->
// /etc/passwd`), or a hard link giving the file another name, never makes the store read or
// write anything but the file of that name in its directory (README "Security", the capture
// files' rule, package capture's ErrNotRegularFile). The reference follows links (TOKENS.md §2.1);
// gymtrace refuses them, for its readers (`gymtrace tokens`, `attach`'s freeze and finalization,
// `report`) as for its writers (the proxy's appends, intents and marks).

// ErrNotRegularFile is wrapped by every error about a token capture file path (entries, state,
// intents, incomplete marks, lock) that exists but is not a regular file with one link: a
// symbolic link (never followed), a directory, a FIFO, a socket, a device, or a regular file with
// more than one hard link. The error is an *fs.PathError naming the path; its text names the rule.
var ErrNotRegularFile = errors.New("not a regular file")

// notRegularError reports that the store refused a path of the given kind ("a symbolic link", ...).
func notRegularError(kind string) error {
	return fmt.Errorf("%w (%s): token capture files must be regular files with one link and symbolic links are never followed", ErrNotRegularFile, kind)
}

// openRegular opens path with flag (os.O_* flags; perm is used only with os.O_CREATE) never
// through a symbolic link and without blocking on a FIFO (O_NOFOLLOW and O_NONBLOCK, which is
// taken back once the file is known to be regular), and returns it only if it is a regular file
// with at most one link (none: removed since the open). A path that exists but is not one gives an
// *fs.PathError (op "open", the path) wrapping [ErrNotRegularFile]; other failures are the open's
// *fs.PathError (matching fs.ErrNotExist for a missing file, fs.ErrExist for os.O_EXCL on an
// existing entry). Retried on EINTR.
func openRegular(path string, flag int, perm fs.FileMode) (*os.File, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Open(path, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, uint32(perm.Perm()))
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EEXIST) {
			if kind := filekind.NonRegular(path); kind != "" {
				return nil, &fs.PathError{Op: "open", Path: path, Err: notRegularError(kind)}
			}
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if err := checkRegular(fd); err != nil {
		unix.Close(fd) //nolint:errcheck // refused before any read or write
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// checkRegular refuses what fd is when it is not a regular file or has more than one link, then
// takes back the open's O_NONBLOCK.
func checkRegular(fd int) error {
	var st unix.Stat_t
	for {
		err := unix.Fstat(fd, &st)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return notRegularError(filekind.Of(st.Mode))
	}
	if st.Nlink > 1 {
		return notRegularError(fmt.Sprintf("a hard link: %d links", uint64(st.Nlink)))
	}
	return unix.SetNonblock(fd, false)
}

// readRegular returns the whole content of the store file path, opened with [openRegular]; a
// missing file is an error matching fs.ErrNotExist.
func readRegular(path string) ([]byte, error) {
	f, err := openRegular(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 0, max(fi.Size(), 0)+512)
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case errors.Is(err, io.EOF):
			return buf, nil
		case err != nil:
			return nil, err
		case len(buf) == cap(buf):
			buf = append(buf, 0)[:len(buf)] // the file grew since the stat
		}
	}
}
