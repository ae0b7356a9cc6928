package main

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rederive"
	"github.com/gymtrace/gymtrace/rollout"
)

func init() { commands = append(commands, newRederiveCmd) }

// newRederiveCmd builds `gymtrace rederive` (rederive.Run).
func newRederiveCmd() *cobra.Command {
	var dir, rolloutID, output string
	cmd := &cobra.Command{
		Use:   "rederive --capture-dir DIR [--rollout ID] --output DIR2",
		Short: "Rebuild captured responses from their raw bytes with today's reassembly, into another directory",
		Long: `Copy the capture files of DIR (or of one rollout) into DIR2, rebuilding each record's response
from its stored response_raw with today's stream reassembly, and recomputing only the error
categories that follow from those bytes: stream_truncated, capture_parse_error and a stream's
terminal incomplete / upstream_error (null included). Categories set by an HTTP status of 400 or
more, cancelled, connection, timeout and exception are kept, and every other key keeps its exact
text. A record the current version wrote comes out byte for byte the same.

DIR is never modified. DIR2 (an absolute path, created if missing) must not be DIR and must not
already hold a capture of a rollout being written. Damaged lines of DIR (not JSON objects) cannot be
written as records: they are left out and the rollout is marked incomplete in DIR2, as it is when DIR
has the .capture.incomplete marker. The damaged lines counted here are only those lines: an object
that is not a valid ModelCallRecord, which calls, metrics and report count as damaged too, is
copied as it is (counted as copied). Changed records are listed on stderr.

A failure while writing (a full disk: ENOSPC; a signal) stops at the rollout it happened in and
exits 1: the output files rederive created for that rollout (its capture file and marker, which did
not exist before) are removed and the error says so, so the same command can be run again for it;
the rollouts written before it are kept complete (rerun with --rollout for the others).`,
		Args: noPositionalArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkCaptureDir(dir); err != nil {
				return err
			}
			if err := requireStringFlag(outputFlag, output); err != nil {
				return err
			}
			if !filepath.IsAbs(output) {
				return usageErrorf("--%s %q must be an absolute path", outputFlag, output)
			}
			if rolloutID != "" {
				if err := rollout.ValidateID(rolloutID); err != nil {
					return usageErrorf("--rollout: %w", err)
				}
			}
			src, err := existingCaptureStore(cmd, dir)
			if err != nil {
				return fmt.Errorf("rederive: %w", err)
			}
			if same, err := samePath(dir, output); err == nil && same {
				return usageErrorf("--%s %q is the capture directory: rederive never modifies the originals", outputFlag, output)
			}
			dst, err := capture.NewStore(output)
			if err != nil {
				return fmt.Errorf("rederive: %w", err)
			}
			return runRederive(cmd, src, dst, rolloutID)
		},
	}
	addCaptureDirFlag(cmd, &dir)
	cmd.Flags().StringVar(&rolloutID, "rollout", "", "rederive only this rollout id (default: every rollout of the capture directory)")
	cmd.Flags().StringVar(&output, outputFlag, "", "directory to write the rederived capture files to (absolute path, required; created if missing)")
	return cmd
}

func runRederive(cmd *cobra.Command, src, dst *capture.Store, rolloutID string) error {
	listed := 0
	sum, err := rederive.Run(cmd.Context(), src, dst, rederive.Options{
		RolloutID: rolloutID,
		OnRollout: func(rs rederive.RolloutSummary) {
			for _, c := range rs.Changes {
				switch listed++; {
				case listed <= maxReported:
					cmdNotef(cmd, "rollout %s line %d (%s): %s", rs.RolloutID, c.Index+1, c.ModelCallID, describeChange(c.Result))
				case listed == maxReported+1:
					cmdNotef(cmd, "... more changed records not listed")
				}
			}
			if rs.Dropped > 0 {
				cmdNotef(cmd, "rollout %s: %d damaged line%s left out; marked incomplete in %s", rs.RolloutID, rs.Dropped, pluralSuffix(rs.Dropped), dst.Dir())
			}
		},
	})
	if errors.Is(err, rederive.ErrNoCapture) {
		return fmt.Errorf("%w (nothing written)", err)
	}
	if err != nil {
		if len(sum.Rollouts) > 0 {
			return fmt.Errorf("%w: rerun with --rollout for each rollout not written, or into a new directory", err)
		}
		return err
	}
	cmdNotef(cmd, "wrote %s: %d rollout%s, %d record%s: %d changed, %d rebuilt unchanged, %d copied as they were (no response_raw or kept by rule); %d damaged line%s left out",
		dst.Dir(), len(sum.Rollouts), pluralSuffix(len(sum.Rollouts)), sum.Records, pluralSuffix(sum.Records), sum.Changed, sum.Records-sum.Changed-sum.Skipped, sum.Skipped, sum.Dropped, pluralSuffix(sum.Dropped))
	return nil
}

// describeChange says what rederive changed in one record.
func describeChange(r rederive.Result) string {
	var what string
	switch {
	case r.ResponseRawDropped:
		what = "response parsed from response_raw (response_raw dropped)"
	case r.ResponseChanged:
		what = "response rebuilt from response_raw"
	}
	if r.OldCategory != r.NewCategory {
		if what != "" {
			what += ", "
		}
		what += fmt.Sprintf("error_category %s -> %s", cmp.Or(r.OldCategory, "null"), cmp.Or(r.NewCategory, "null"))
	}
	return what
}
