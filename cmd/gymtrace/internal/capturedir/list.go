package capturedir

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/gymtrace/gymtrace/capture"
)

// ErrNotDir is wrapped by the error [List] returns when the path exists but is not a directory.
var ErrNotDir = errors.New("not a directory")

// Entry is one rollout found in a capture directory.
type Entry struct {
	RolloutID string // the id the file names carry (SPEC §2.2: it passes capture.ValidateRolloutID)
	// HasCapture reports that <id>.capture.jsonl exists (of any type: a symbolic link or directory
	// of that name counts too, so that reading it fails loudly instead of hiding it).
	HasCapture bool
	HasMarker  bool // <id>.capture.incomplete exists (SPEC §2.6)
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
	index := make(map[string]int)
	var out []Entry
	for _, de := range des {
		id, capFile, ok := splitName(de.Name())
		if !ok {
			continue
		}
		i, seen := index[id]
		if !seen {
			i, index[id] = len(out), len(out)
			out = append(out, Entry{RolloutID: id})
		}
		if capFile {
			out[i].HasCapture = true
		} else {
			out[i].HasMarker = true
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return Compare(a.RolloutID, b.RolloutID) })
	return out, nil
}

// splitName returns the rollout id of a capture file or marker name and whether it is the capture
// file (else the marker); ok is false for any other name.
func splitName(name string) (id string, capFile, ok bool) {
	id, capFile = strings.CutSuffix(name, capture.CaptureFileSuffix)
	if !capFile {
		if id, ok = strings.CutSuffix(name, capture.MarkerFileSuffix); !ok {
			return "", false, false
		}
	}
	if capture.ValidateRolloutID(id) != nil {
		return "", false, false
	}
	return id, capFile, true
}
