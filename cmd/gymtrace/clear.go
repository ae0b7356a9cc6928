package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/rollouts"
)

func init() { commands = append(commands, newClearCmd) }

// newClearCmd builds `gymtrace clear --capture-dir DIR --input ROLLOUTS.jsonl`: SPEC §2.6's
// pre-dispatch clear for the rows of ROLLOUTS.jsonl (see rollouts.Clear).
func newClearCmd() *cobra.Command {
	var dir, input string
	cmd := &cobra.Command{
		Use:   "clear --capture-dir DIR --input ROLLOUTS.jsonl",
		Short: "Remove the captures of the rollouts about to be dispatched (before a re-run)",
		Long: `Remove <id>.capture.jsonl and <id>.capture.incomplete from DIR for the rollout id of every row of
ROLLOUTS.jsonl (SPEC §1.2, §2.6), so a re-dispatched rollout does not mix its calls with a stale
partial capture. Rows without a rollout id are skipped; other rollouts' files are untouched.

Every row is checked first: if one is not a JSON object or has a malformed rollout id, nothing is
removed and the command exits 1 naming the line, the value and the rule. A capture directory that
does not exist has nothing to clear (it is not created).`,
		Args: noPositionalArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkCaptureDir(dir); err != nil {
				return err
			}
			if err := requireStringFlag(inputFlag, input); err != nil {
				return err
			}
			var stores []*capture.Store
			store, err := existingCaptureStore(dir)
			switch {
			case errors.Is(err, errNoCaptureDir):
				cmdNotef(cmd, "capture directory %s does not exist: nothing to clear", dir)
			case err != nil:
				return fmt.Errorf("clear: %w", err)
			default:
				stores = append(stores, store)
			}
			in, err := os.Open(input)
			if err != nil {
				return fmt.Errorf("clear: %w", err)
			}
			defer in.Close()
			ids, err := rollouts.Clear(in, stores)
			if err != nil {
				if len(ids) > 0 {
					cmdNotef(cmd, "cleared %d rollout%s before the failure", len(ids), pluralSuffix(len(ids)))
				}
				return err
			}
			if len(stores) > 0 {
				cmdNotef(cmd, "cleared the captures of %d rollout%s in %s", len(ids), pluralSuffix(len(ids)), dir)
			}
			return nil
		},
	}
	addCaptureDirFlag(cmd, &dir)
	cmd.Flags().StringVar(&input, inputFlag, "", "rollouts JSONL file whose rows are about to be dispatched (required)")
	return cmd
}
