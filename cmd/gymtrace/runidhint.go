package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gymtrace/gymtrace/capture"
)

// maxHintDirs bounds how many run directories a hint names.
const maxHintDirs = 5

// runDirsWith returns the first maxHintDirs sorted names of dir's subdirectories (candidate
// --run-id values) that hold the regular file named file ("": any capture file).
func runDirsWith(dir, file string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	isCapture := func(n os.DirEntry) bool { return strings.HasSuffix(n.Name(), capture.CaptureFileSuffix) }
	var runs []string
	for _, e := range entries {
		if !e.IsDir() || checkRunID(e.Name()) != nil {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if file != "" {
			if fi, err := os.Lstat(filepath.Join(sub, file)); err == nil && fi.Mode().IsRegular() {
				runs = append(runs, e.Name())
			}
			continue
		}
		if names, err := os.ReadDir(sub); err == nil && slices.ContainsFunc(names, isCapture) {
			runs = append(runs, e.Name())
		}
	}
	slices.Sort(runs)
	return runs[:min(len(runs), maxHintDirs)]
}

// noteRunIDHint names the --run-id values whose run directories of dir hold what dir lacks.
func noteRunIDHint(cmd *cobra.Command, dir, file string) {
	if runs := runDirsWith(dir, file); len(runs) > 0 {
		cmdNotef(cmd, "hint: captures exist under a run directory of %s (made with --run-id): pass --%s %s", dir, runIDFlag, strings.Join(runs, " or --"+runIDFlag+" "))
	}
}
