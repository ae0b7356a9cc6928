package main

import (
	"os"
	"path/filepath"
	"sort"
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
		names, err := os.ReadDir(sub)
		if err != nil {
			continue
		}
		for _, n := range names {
			if strings.HasSuffix(n.Name(), capture.CaptureFileSuffix) {
				runs = append(runs, e.Name())
				break
			}
		}
	}
	sort.Strings(runs)
	if len(runs) > maxHintDirs {
		runs = runs[:maxHintDirs]
	}
	return runs
}

// noteRunIDHint names the --run-id values whose run directories of dir hold what dir lacks.
func noteRunIDHint(cmd *cobra.Command, dir, file string) {
	if runs := runDirsWith(dir, file); len(runs) > 0 {
		cmdNotef(cmd, "hint: captures exist under a run directory of %s (made with --run-id): pass --%s %s", dir, runIDFlag, strings.Join(runs, " or --"+runIDFlag+" "))
	}
}
