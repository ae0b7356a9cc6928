package gymcaptureexporter

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/gymtrace/gymtrace/internal/filekind"
)

// validateCaptureDir checks the capture_dir key as Start will use it: required, an absolute path
// (SPEC §7), without a NUL byte (no system call takes one), and not an existing file that is not
// a directory, nor under one (Start could not create the directory there). A directory that does
// not exist is accepted: Start creates it, and Validate often runs on another host than the
// Collector. A path whose existing part cannot be inspected (a permission denied) is left to
// Start. The error names the key, the value and the rule.
func validateCaptureDir(dir string) error {
	switch {
	case dir == "":
		return errors.New(`capture_dir: required (an absolute directory path)`)
	case strings.IndexByte(dir, 0) >= 0:
		return fmt.Errorf("capture_dir: %q must not contain a NUL byte (no path can hold one)", dir)
	case !filepath.IsAbs(dir):
		return fmt.Errorf("capture_dir: %q must be an absolute path", dir)
	}
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.IsDir():
			return nil
		case err == nil && p == filepath.Clean(dir):
			return fmt.Errorf("capture_dir: %q exists and is %s, not a directory", dir, fileKind(fi))
		case err == nil:
			return fmt.Errorf("capture_dir: %q is under %q, which is %s, not a directory", dir, p, fileKind(fi))
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return nil // cannot tell here (e.g. permission denied); Start reports it
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// fileKind names the type of a file that is not a directory (internal/filekind, the names the
// capture store's refusals use), for validateCaptureDir's errors.
func fileKind(fi fs.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return filekind.Of(uint32(st.Mode)) // uint16 on some systems
	}
	return "not a directory"
}
