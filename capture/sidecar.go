package capture

import (
	"context"
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ObservationsFileSuffix names a rollout's agent-observations file beside its capture file:
// <root>/<rollout_id>.observations.jsonl (DESIGN.md "Observations are spans first"). Its line format
// belongs to package agentobs; the store only appends and reads whole lines, with the discipline of
// the capture file.
const ObservationsFileSuffix = ".observations.jsonl"

// ObservationsPath returns <dir>/<id>.observations.jsonl after validating id ([ValidateRolloutID]).
func (s *Store) ObservationsPath(id string) (string, error) {
	return s.validPath(id, ObservationsFileSuffix)
}

func (s *Store) observationsPath(id string) string {
	return filepath.Join(s.dir, id+ObservationsFileSuffix)
}

// AppendObservation durably appends one line to id's observations file, exactly as [Store.Append]
// appends to the capture file: the same line contract (one JSON object ending in "}\n", refused
// before any I/O otherwise), file mode, O_NOFOLLOW and regular-file check, flock(LOCK_EX), D7
// torn-tail repair, one writev, fsync (and a directory fsync when the file was created), and group
// commit of concurrent appends to the same file. It returns nil only once the line is on stable
// storage. ctx is checked once before the line is queued. Safe for concurrent use.
func (s *Store) AppendObservation(ctx context.Context, id string, line []byte) error {
	req := &appendReq{line: line}
	return s.appendTo(ctx, "observations append", id, ObservationsFileSuffix, req, checkLine(line))
}

// ReadObservations is the tolerant reader of id's observations file, with the rules of
// [Store.ReadAvailable] ([ParseAvailable]): every non-blank line consumes one index; a line that is
// not strict JSON or not a JSON object is counted in invalid and skipped. The file is read under
// flock(LOCK_SH), never through a symbolic link. exists reports whether the file exists; a missing
// file gives (nil, 0, false, nil). err reports only I/O failures. Safe for concurrent use.
func (s *Store) ReadObservations(id string) (lines []IndexedLine, invalid int, exists bool, err error) {
	if err := ValidateRolloutID(id); err != nil {
		return nil, 0, false, fmt.Errorf("observations read: %w", err)
	}
	data, exists, err := readPathLocked(s.observationsPath(id))
	if err != nil {
		return nil, 0, false, fmt.Errorf("observations read %s: %w", id, err)
	}
	lines, invalid = parseAvailable(data)
	return lines, invalid, exists, nil
}

// ClearObservations removes id's observations file (a missing file is not an error) and reports
// whether it removed one. Like [Store.ClearCount] it unlinks the file while holding its
// flock(LOCK_EX) and removes a symbolic link of that name itself, never its target. Safe for
// concurrent use.
func (s *Store) ClearObservations(id string) (removed bool, err error) {
	if err := ValidateRolloutID(id); err != nil {
		return false, fmt.Errorf("observations clear: %w", err)
	}
	path := s.observationsPath(id)
	fd, oerr := openRegular(path, unix.O_RDONLY, 0)
	if oerr != nil && isNotExist(oerr) {
		return false, nil
	}
	if oerr == nil {
		defer closeFile(fd) //nolint:errcheck // read-only descriptor, closed after the unlink
		if err := flock(fd, unix.LOCK_EX); err != nil {
			return false, fmt.Errorf("observations clear %s: %w", id, pathErr("flock", path, err))
		}
	}
	removed, err = unlink(path)
	if err != nil {
		return removed, fmt.Errorf("observations clear %s: %w", id, pathErr("remove", path, err))
	}
	return removed, nil
}

// ParseAvailable splits file content into lines with the content rules of the tolerant reader (SPEC
// §2.5): lines end at "\n", surrounding ASCII whitespace is stripped, blank lines are skipped and
// consume no index, every other line consumes one index and is kept only when it is strict JSON
// (SPEC D6) and a JSON object; the others are counted in invalid. Returned lines share data's
// memory. It never fails and is safe for concurrent use.
func ParseAvailable(data []byte) (lines []IndexedLine, invalid int) {
	return parseAvailable(data)
}

// readPathLocked returns the whole content of the store file path, read under flock(LOCK_SH); a
// missing file gives (nil, false, nil). The file is never opened through a symbolic link and must
// be a regular file (else the error wraps [ErrNotRegularFile] and names the path).
func readPathLocked(path string) ([]byte, bool, error) {
	fd, err := openRegular(path, unix.O_RDONLY, 0)
	if isNotExist(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, pathErr("open", path, err)
	}
	defer closeFile(fd) //nolint:errcheck // read-only descriptor: nothing to lose on close
	if err := flock(fd, unix.LOCK_SH); err != nil {
		return nil, false, pathErr("flock", path, err)
	}
	var st unix.Stat_t
	if err := fstat(fd, &st); err != nil {
		return nil, false, pathErr("stat", path, err)
	}
	data, err := readAll(fd, st.Size)
	if err != nil {
		return nil, false, pathErr("read", path, err)
	}
	if err := flock(fd, unix.LOCK_UN); err != nil {
		return nil, false, pathErr("unlock", path, err)
	}
	return data, true, nil
}
