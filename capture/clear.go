package capture

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Clear removes id's capture file and its incomplete marker (SPEC §2.6); a file that does not exist
// is not an error. Other rollouts' files are untouched.
//
// The capture file is unlinked while Clear holds its flock(LOCK_EX), so a concurrent writer never has
// half a line cut off, and an [Store.Append] that opened the file before the unlink notices the removal
// after locking and writes to a new file instead. Callers (the collector, before dispatch) still clear
// only rollouts that are not being written, or new records may land right before the unlink.
// Safe for concurrent use.
func (s *Store) Clear(id string) error {
	if err := ValidateRolloutID(id); err != nil {
		return fmt.Errorf("capture clear: %w", err)
	}
	path := s.capturePath(id)
	var errs []error
	fd, err := openFile(path, unix.O_RDONLY, 0)
	switch {
	case isNotExist(err):
	case err != nil:
		// Still try to unlink: a file we cannot open for reading may be removable.
		errs = append(errs, unlinkErr(path))
	default:
		if lerr := flock(fd, unix.LOCK_EX); lerr != nil {
			errs = append(errs, pathErr("flock", path, lerr))
		}
		errs = append(errs, unlinkErr(path), pathErr("close", path, closeFile(fd)))
	}
	errs = append(errs, unlinkErr(s.markerPath(id)))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("capture clear %s: %w", id, err)
	}
	return nil
}

func unlinkErr(path string) error { return pathErr("remove", path, unlink(path)) }

// ClearRollouts clears the given rollout ids in every directory of dirs (SPEC §2.6
// clear_model_call_captures_for_rollouts, after the ids were derived from the rows about to be
// dispatched): for each directory it builds a [Store] with opts — creating the directory, and
// returning the error at once if that fails, since a failed cleanup must abort rather than mix
// attempts — then calls [Store.Clear] for each id. No dirs is a no-op. An invalid id is an error
// (nothing further is removed). Files of other ids are untouched.
func ClearRollouts(dirs []string, ids []string, opts ...StoreOption) error {
	for _, id := range ids {
		if err := ValidateRolloutID(id); err != nil {
			return fmt.Errorf("capture clear: %w", err)
		}
	}
	for _, dir := range dirs {
		s, err := NewStore(dir, opts...)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := s.Clear(id); err != nil {
				return err
			}
		}
	}
	return nil
}
