package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

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
