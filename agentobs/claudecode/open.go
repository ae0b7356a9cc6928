package claudecode

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gymtrace/gymtrace/internal/filekind"
)

// This file holds how the reader reaches the files below a config directory (SPEC §0 D16): every
// directory below it and every transcript is opened relative to its parent's descriptor with
// O_NOFOLLOW, so neither a planted symbolic link nor one swapped in while the walk runs leads out of
// the directory; a transcript is opened only when it is a regular file (checked before the open, and
// O_NONBLOCK keeps a FIFO swapped in afterwards from blocking the open, then fstat refuses it) and is
// read with a limit, so a file that grows while it is read is bounded too.

// TranscriptError reports an entry below a config directory that [Extract] and [Observe] refuse to
// read (SPEC §0 D16): a symbolic link (a transcript, projects/ or a directory below it, found as a
// link or swapped in during the walk), a transcript that is not a regular file (a FIFO, a device, a
// socket) or one larger than Options.MaxTranscriptBytes. Nothing of that run is read.
type TranscriptError struct {
	Path string // the entry: the config directory joined with its path below it
	Rule string // the rule it breaks, e.g. "is a symbolic link: transcripts ... are opened without following links"
	rel  string // the entry's path below the config directory (the gap's detail)
}

// Error returns "claude code transcript <path> <rule>".
func (e *TranscriptError) Error() string { return "claude code transcript " + e.Path + " " + e.Rule }

// detail is the claude_code_transcript_unreadable gap's detail: "<path below the config dir> <rule>".
func (e *TranscriptError) detail() string { return decodeName(e.rel) + " " + e.Rule }

func newTranscriptError(configDir string, r *refusal) *TranscriptError {
	return &TranscriptError{Path: filepath.Join(configDir, filepath.FromSlash(r.rel)), Rule: r.rule, rel: r.rel}
}

// refusal is a reading rule of SPEC §0 D16 that an entry below the config directory breaks.
type refusal struct {
	rel  string // the entry's path below the config directory, slash-separated
	rule string // the rule it breaks, e.g. "is a symbolic link: ..."
}

func (r *refusal) Error() string { return r.rel + " " + r.rule }

// errNotDirectory is what readDir returns for an entry that exists but is not a directory.
var errNotDirectory = errors.New("not a directory")

const ruleLink = "is a symbolic link: transcripts and the directories below the config directory are opened without following links"

// osFS is the real file system.
type osFS struct{}

func (osFS) isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

func (osFS) readDir(configDir, rel string) ([]fs.DirEntry, error) {
	fd, err := openDirBelow(configDir, rel)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), filepath.Join(configDir, rel))
	defer f.Close()
	return f.ReadDir(-1)
}

func (osFS) readFile(configDir, rel string, limit int64) ([]byte, error) {
	dir, name := pathSplit(rel)
	dfd, err := openDirBelow(configDir, dir)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: filepath.Join(configDir, rel), Err: err}
	}
	if r := checkTranscript(rel, st, limit); r != nil {
		return nil, r
	}
	fd, err := openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK)
	if errors.Is(err, unix.ELOOP) {
		return nil, &refusal{rel: rel, rule: ruleLink}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: filepath.Join(configDir, rel), Err: err}
	}
	f := os.NewFile(uintptr(fd), filepath.Join(configDir, rel))
	defer f.Close()
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	if r := checkTranscript(rel, st, limit); r != nil { // replaced between the two checks
		return nil, r
	}
	return readLimited(f, rel, limit)
}

// readLimited reads r to its end, refusing (tooLarge) more than limit bytes: a file that grew after
// its size was checked is bounded too.
func readLimited(r io.Reader, rel string, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(rel, limit)
	}
	return data, nil
}

// checkTranscript refuses a transcript that is a symbolic link, neither a regular file nor a
// directory, or larger than limit. A directory is left to the open (it is unreadable, SPEC §6.4).
func checkTranscript(rel string, st unix.Stat_t, limit int64) *refusal {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		if st.Size > limit {
			return tooLarge(rel, limit)
		}
	case unix.S_IFDIR:
	case unix.S_IFLNK:
		return &refusal{rel: rel, rule: ruleLink}
	default:
		return &refusal{rel: rel, rule: "is " + filekind.Of(st.Mode) + ", not a regular file: transcripts are read only from regular files"}
	}
	return nil
}

func tooLarge(rel string, limit int64) *refusal {
	return &refusal{rel: rel, rule: fmt.Sprintf("is larger than %d bytes, the bound on one transcript", limit)}
}

// openDirBelow opens configDir (following links: the caller names it) and then each component of
// rel as a directory without following links. A component that is a symbolic link is a *refusal;
// one that is missing gives an error matching fs.ErrNotExist, one that is another kind of file
// errNotDirectory.
func openDirBelow(configDir, rel string) (int, error) {
	fd, err := openat(unix.AT_FDCWD, configDir, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: configDir, Err: err}
	}
	done := ""
	for name := range strings.SplitSeq(rel, "/") {
		if name == "" {
			continue
		}
		done = pathJoin(done, name)
		next, err := openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW)
		if err != nil {
			var st unix.Stat_t
			switch {
			case unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK:
				err = &refusal{rel: done, rule: ruleLink}
			case errors.Is(err, unix.ENOTDIR):
				err = &fs.PathError{Op: "open", Path: filepath.Join(configDir, done), Err: errNotDirectory}
			default:
				err = &fs.PathError{Op: "open", Path: filepath.Join(configDir, done), Err: err}
			}
			unix.Close(fd)
			return -1, err
		}
		unix.Close(fd)
		fd = next
	}
	return fd, nil
}

// openat is openat(2) with O_CLOEXEC, retried on EINTR.
func openat(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags|unix.O_CLOEXEC, 0)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

// pathJoin joins slash-separated relative paths.
func pathJoin(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// pathSplit splits a slash-separated relative path into its directory ("" at the top) and name.
func pathSplit(rel string) (dir, name string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "", rel
	}
	return rel[:i], rel[i+1:]
}
