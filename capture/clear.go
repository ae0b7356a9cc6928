package capture

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Clear removes id's capture file and its incomplete marker (SPEC §2.6); a file that does not exist
// is not an error. Other rollouts' files are untouched. It is [Store.ClearCount] without the count.
// Safe for concurrent use.
func (s *Store) Clear(id string) error {
	_, err := s.ClearCount(id)
	return err
}

// ClearCount removes id's capture file and its incomplete marker like [Store.Clear] and reports how
// many of the two it removed (0, 1 or 2); a file that does not exist is not an error. Other rollouts'
// files are untouched.
//
// The capture file is unlinked while ClearCount holds its flock(LOCK_EX), so a concurrent writer never
// has half a line cut off, and an [Store.Append] that opened the file before the unlink notices the
// removal after locking and writes to a new file instead. An entry of that name that is not a regular
// file is never opened through: a symbolic link is removed itself (its target is untouched), anything
// else that unlink(2) cannot remove is an error naming the path. Callers (the collector, before
// dispatch) still clear only rollouts that are not being written, or new records may land right
// before the unlink. On an error, removed counts what was removed before it. Safe for concurrent use.
func (s *Store) ClearCount(id string) (removed int, err error) {
	if err := ValidateRolloutID(id); err != nil {
		return 0, fmt.Errorf("capture clear: %w", err)
	}
	path := s.capturePath(id)
	var errs []error
	remove := func(p string) {
		ok, err := unlink(p)
		if ok {
			removed++
		}
		errs = append(errs, pathErr("remove", p, err))
	}
	fd, err := openRegular(path, unix.O_RDONLY, 0)
	switch {
	case isNotExist(err):
	case err != nil:
		// Not a regular file (never locked or followed) or not openable for reading: still remove
		// the entry itself.
		remove(path)
	default:
		if lerr := flock(fd, unix.LOCK_EX); lerr != nil {
			errs = append(errs, pathErr("flock", path, lerr))
		}
		remove(path)
		errs = append(errs, pathErr("close", path, closeFile(fd)))
	}
	remove(s.markerPath(id))
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("capture clear %s: %w", id, err)
	}
	return removed, nil
}

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
