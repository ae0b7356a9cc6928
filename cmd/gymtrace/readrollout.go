package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/gymtrace/gymtrace/capture"
)

// readRolloutRecords is the tolerant read (SPEC §2.5) of `calls` and `metrics`: the valid call
// records of id in the run's capture directory (runCaptureDir), reporting on stderr a missing
// directory or capture file, damaged lines and the .capture.incomplete marker. Only I/O failures are
// errors. It never creates the directory.
func readRolloutRecords(cmd *cobra.Command, captureDir, run, id string) ([]capture.ModelCallRecord, error) {
	dir, err := runCaptureDir(captureDir, run)
	if err != nil {
		return nil, err
	}
	store, err := existingCaptureStore(cmd, dir)
	if errors.Is(err, errNoCaptureDir) {
		cmdNotef(cmd, "capture directory %s does not exist: no capture file for rollout %s", dir, id)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd.Name(), err)
	}
	path, err := store.CapturePath(id)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd.Name(), err)
	}
	var records []capture.ModelCallRecord
	switch _, err := os.Lstat(path); { // a symbolic link exists: the read refuses it by name
	case errors.Is(err, fs.ErrNotExist):
		cmdNotef(cmd, "no capture file for rollout %s (%s does not exist)", id, path)
		noteRunIDHint(cmd, dir, filepath.Base(path))
	case err != nil:
		return nil, fmt.Errorf("%s: %w", cmd.Name(), err)
	default:
		var invalid int
		records, invalid, err = store.ReadAvailableModelCallRecords(id)
		if err != nil {
			return nil, fmt.Errorf("%s: read %s: %w", cmd.Name(), path, err)
		}
		if invalid > 0 {
			cmdNotef(cmd, "%s: skipped %d damaged line%s (not a readable call record)", path, invalid, pluralSuffix(invalid))
		}
		if len(records) == 0 && invalid == 0 {
			cmdNotef(cmd, "%s holds no call records", path)
		}
	}
	incomplete, err := store.IsIncomplete(id)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd.Name(), err)
	}
	if incomplete {
		marker, _ := store.MarkerPath(id)
		cmdNotef(cmd, "rollout %s is marked incomplete (%s exists): at least one capture write failed or a call's capture stopped at a bound (SPEC §0 D15): calls or their payloads may be missing", id, marker)
	}
	return records, nil
}

func pluralSuffix(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
