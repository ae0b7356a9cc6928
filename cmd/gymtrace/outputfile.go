package main

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/capturedir"
)

// checkOutputPath refuses, as a usage error naming the flag, the path and the rule, an output path
// that would replace what gymtrace reads (issue #14 finding 7): one that resolves (relative paths,
// "..", symbolic links in its directories) to the same file as one of inputs (flag name → path: every
// file the command reads, e.g. attach's --input and --inputs, README "An output never replaces what
// gymtrace reads"; "" is no file), or to a name the
// capture directory's writers own (capturedir.IsManaged: *.capture.jsonl, markers,
// *.observations.jsonl, token files) inside one of captureDirs or, when it exists, anywhere. It
// runs before anything is written.
func checkOutputPath(flag, path string, captureDirs []string, inputs map[string]string) error {
	for _, inFlag := range slices.Sorted(maps.Keys(inputs)) { // sorted: one message when several match
		in := inputs[inFlag]
		if in == "" {
			continue
		}
		same, err := samePath(in, path)
		if err != nil {
			return err
		}
		if same {
			return usageErrorf("--%s %q and --%s %q are the same file; write the output elsewhere", flag, path, inFlag, in)
		}
	}
	dir, name := splitLast(path)
	if !capturedir.IsManaged(name) {
		return nil
	}
	if parent, err := os.Stat(dir); err == nil {
		for _, d := range captureDirs {
			if fi, err := os.Stat(d); err == nil && os.SameFile(parent, fi) {
				return usageErrorf("--%s %q names a file of the capture directory %s (%s): an output never takes a name the capture writers own; write the output elsewhere", flag, path, d, name)
			}
		}
	}
	if _, err := os.Lstat(path); err == nil {
		return usageErrorf("--%s %q is an existing capture, observations or token file (%s: a name of the files a capture directory holds): an output never replaces one; write the output elsewhere", flag, path, name)
	}
	return nil
}

// splitLast splits path at its last separator without cleaning it, so the kernel resolves the
// directory part as it will when the output is written ("link/.." is the link target's parent, not
// "."): "a/b/c" gives "a/b" and "c", "c" gives "." and "c", "/c" gives "/" and "c".
func splitLast(path string) (dir, name string) {
	i := strings.LastIndexByte(path, filepath.Separator)
	switch {
	case i < 0:
		return ".", path
	case i == 0:
		return string(filepath.Separator), path[1:]
	}
	return path[:i], path[i+1:]
}

// checkOutputDir fails unless the directory path is to be written in exists, so that a command
// refuses a path it cannot write before it prints anything (a fresh-user trial saw `report
// --html` in a missing directory print the whole text report, then fail). The error names the
// flag, the path and the directory.
func checkOutputDir(flag, path string) error {
	dir, _ := splitLast(path)
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("--%s %q: directory %s: %w", flag, path, dir, pathErrCause(err))
	case !fi.IsDir():
		return fmt.Errorf("--%s %q: %s is not a directory", flag, path, dir)
	}
	return nil
}

// samePath reports whether a and b name the same file: equal cleaned absolute paths, or both
// existing and the same file (a link or another spelling).
func samePath(a, b string) (bool, error) {
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	if err := cmp.Or(errA, errB); err != nil {
		return false, err
	}
	if absA == absB {
		return true, nil
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb), nil
}

// outputMode checks the path an output flag names before the command replaces it atomically and
// returns the mode of the new file: outputFileMode (0600) for a new file, else the existing one's. An
// entry that is not a regular file (a symbolic link such as /dev/stdout, a device, a FIFO, a
// directory) is a usage error naming the flag and the value: the rename would replace it.
func outputMode(flag, path string) (fs.FileMode, error) {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return outputFileMode, nil
	case err != nil:
		return 0, fmt.Errorf("--%s %q: %w", flag, path, pathErrCause(err))
	case fi.Mode().IsRegular():
		return fi.Mode().Perm(), nil
	}
	kind := "not a regular file"
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		kind = "a symbolic link"
	case fi.IsDir():
		kind = "a directory"
	case fi.Mode()&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		kind = "a device"
	case fi.Mode()&fs.ModeNamedPipe != 0:
		kind = "a named pipe"
	}
	return 0, usageErrorf("--%s %q is %s; the output is written to a temporary file renamed over the path, which would replace it: name a regular file", flag, path, kind)
}
