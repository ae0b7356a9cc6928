// Package atomicfile replaces a file atomically, so that it holds either its old content or the
// whole new one: the CLI's outputs (`attach`, `report --html`, the demo's files) are written this way.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes path through fill: into a new temporary file beside it (".<name>.tmp-*"), which is
// given mode, synced, closed and renamed over path; then path's directory is synced (best effort).
// On any failure path is untouched and the temporary file removed. fill's error is returned as it
// is; the others name what (e.g. the path), never the temporary file: "create <what>: <cause>",
// "write <what>: <cause>", "replace <what>: <cause>".
func Write(path, what string, mode fs.FileMode, fill func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create %s: %w", what, cause(err))
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := fill(tmp); err != nil {
		return err
	}
	for _, step := range []func() error{func() error { return tmp.Chmod(mode) }, tmp.Sync, tmp.Close} {
		if err := step(); err != nil {
			return fmt.Errorf("write %s: %w", what, cause(err))
		}
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replace %s: %w", what, cause(err))
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// cause returns the cause of an *fs.PathError (dropping its operation and path, e.g. the name of
// the temporary file), or err itself.
func cause(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}
