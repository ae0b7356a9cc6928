package capturedir

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/gymtrace/gymtrace/capture"
)

// ErrNotDir is wrapped by the error [List] returns when the path exists but is not a directory.
var ErrNotDir = errors.New("not a directory")

// Entry is one rollout found in a capture directory.
type Entry struct {
	// RolloutID is the id the file names carry (SPEC §2.2: it passes capture.ValidateRolloutID).
	RolloutID string
	// HasCapture reports that <id>.capture.jsonl exists (a regular file or not: a symbolic link or a
	// directory of that name counts too, so that reading it fails loudly instead of hiding it).
	HasCapture bool
	// HasMarker reports that <id>.capture.incomplete exists (SPEC §2.6).
	HasMarker bool
}

// List returns the rollouts of the capture directory dir, sorted by [Compare] on their ids: every
// entry named <id>.capture.jsonl or <id>.capture.incomplete whose <id> is a valid capture file id
// (SPEC §2.2). Other entries (observation files, temporary files, run subdirectories, names whose id
// is invalid) are ignored. A missing directory is an error matching fs.ErrNotExist; a path that is
// not a directory is an error matching [ErrNotDir]; both name the path.
func List(dir string) ([]Entry, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("capture dir: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("capture dir %s: %w", dir, ErrNotDir)
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("capture dir: %w", err)
	}
	byID := make(map[string]*Entry)
	var ids []string
	for _, de := range des {
		id, capFile, ok := splitName(de.Name())
		if !ok {
			continue
		}
		e := byID[id]
		if e == nil {
			e = &Entry{RolloutID: id}
			byID[id] = e
			ids = append(ids, id)
		}
		if capFile {
			e.HasCapture = true
		} else {
			e.HasMarker = true
		}
	}
	SortIDs(ids)
	out := make([]Entry, len(ids))
	for i, id := range ids {
		out[i] = *byID[id]
	}
	return out, nil
}

// splitName returns the rollout id of a capture file or marker name and whether it is the capture
// file (else the marker); ok is false for any other name.
func splitName(name string) (id string, capFile, ok bool) {
	switch {
	case strings.HasSuffix(name, capture.CaptureFileSuffix):
		id, capFile = strings.TrimSuffix(name, capture.CaptureFileSuffix), true
	case strings.HasSuffix(name, capture.MarkerFileSuffix):
		id = strings.TrimSuffix(name, capture.MarkerFileSuffix)
	default:
		return "", false, false
	}
	if capture.ValidateRolloutID(id) != nil {
		return "", false, false
	}
	return id, capFile, true
}
