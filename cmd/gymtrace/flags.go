package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/rollout"
)

// Flag names shared by the capture commands.
const (
	captureDirFlag = "capture-dir"
	inputFlag      = "input"
	outputFlag     = "output"
)

// addCaptureDirFlag registers --capture-dir on cmd, stored in dir.
func addCaptureDirFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, captureDirFlag, "", "capture directory holding <rollout_id>.capture.jsonl files (absolute path, required)")
}

// checkCaptureDir checks --capture-dir: given and absolute (SPEC §7; no "~" expansion), else a usage
// error.
func checkCaptureDir(dir string) error {
	if err := requireStringFlag(captureDirFlag, dir); err != nil {
		return err
	}
	if !filepath.IsAbs(dir) {
		return usageErrorf("--%s %q must be an absolute path", captureDirFlag, dir)
	}
	return nil
}

// requireStringFlag returns a usage error when a required string flag is empty.
func requireStringFlag(name, value string) error {
	if value == "" {
		return usageErrorf("--%s is required", name)
	}
	return nil
}

// notDirectoryFlag is a usage error naming the flag and the value when value (a file flag's, e.g.
// --input) is an existing directory: such a file flag names one JSONL file. Any other value passes;
// a missing or unreadable file is the command's error when it opens it.
func notDirectoryFlag(name, value string) error {
	if fi, err := os.Stat(value); err == nil && fi.IsDir() {
		return usageErrorf("--%s %q is a directory: it must name a JSONL file", name, value)
	}
	return nil
}

// oneRolloutID is the Args check of the commands taking one ROLLOUT_ID: exactly one argument that
// passes SPEC D12 (rollout.ValidateID), else a usage error naming the value and the rule.
func oneRolloutID(_ *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usageErrorf("expected exactly one ROLLOUT_ID argument, got %d", len(args))
	}
	if err := rollout.ValidateID(args[0]); err != nil {
		return usageErrorf("ROLLOUT_ID: %w", err)
	}
	return nil
}

// noPositionalArgs is the Args check of the commands without positional arguments.
func noPositionalArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("unexpected argument %q", args[0])
	}
	return nil
}

var errNoCaptureDir = errors.New("capture directory does not exist")

// existingCaptureStore returns the store of an existing capture directory without creating it (reading
// commands must not leave a directory behind on a typo); a missing one is an error matching
// errNoCaptureDir. It is how every command that reads a capture directory opens it, so it first
// replays the journals that crashed journaled writers left there (SPEC §0 D17,
// capture.Store.RecoverJournals): no command reads a rollout file that lacks an acknowledged record.
// What the recovery appended, kept or left alone is noted on cmd's stderr.
func existingCaptureStore(cmd *cobra.Command, dir string) (*capture.Store, error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %s", errNoCaptureDir, dir)
	case err != nil:
		return nil, err
	case !fi.IsDir():
		return nil, fmt.Errorf("capture directory %s is not a directory", dir)
	}
	store, err := capture.NewStore(dir)
	if err != nil {
		return nil, err
	}
	rec, err := store.RecoverJournals()
	if errors.Is(err, fs.ErrPermission) {
		return nil, fmt.Errorf("recover the journals of %s: permission denied while looking for records a crashed journaled writer left (they may be missing from the rollout files until recovered): run this command once as a user who can write the directory, or start the proxy on it: %w", dir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("recover the journals of %s: %w", dir, err)
	}
	if rec.Appended > 0 {
		cmdNotef(cmd, "recovered %d record%s from %d crashed journal%s into %s (SPEC §0 D17)", rec.Appended, pluralSuffix(rec.Appended), rec.Journals, pluralSuffix(rec.Journals), dir)
	}
	for _, w := range rec.Warnings() {
		cmdNotef(cmd, "warning: %s", w)
	}
	return store, nil
}

// cmdNotef writes one "gymtrace <cmd>: ..." line to the command's stderr.
func cmdNotef(cmd *cobra.Command, format string, args ...any) {
	w := cmd.ErrOrStderr()
	_, _ = fmt.Fprintf(w, "gymtrace %s: %s\n", cmd.Name(), fmt.Sprintf(format, args...))
}

// writeOutput writes b to w, returning a write error naming what was written.
func writeOutput(w io.Writer, b []byte) error {
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
