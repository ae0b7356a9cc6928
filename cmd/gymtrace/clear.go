package main

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rollouts"
	"github.com/gymtrace/gymtrace/tokens"
)

func init() { commands = append(commands, newClearCmd) }

// newClearCmd builds `gymtrace clear`: SPEC §2.6's pre-dispatch clear (rollouts.Clear).
func newClearCmd() *cobra.Command {
	var dir, run, input, tokenDir string
	cmd := &cobra.Command{
		Use:   "clear --capture-dir DIR [--run-id RUN] [--token-dir DIR] --input ROLLOUTS.jsonl",
		Short: "Remove the captures of the rollouts about to be dispatched (before a re-run)",
		Long: `Remove <id>.capture.jsonl, <id>.capture.incomplete and <id>.observations.jsonl (agent observations)
from DIR for the rollout id of every row of ROLLOUTS.jsonl (SPEC §1.2, §2.6), so a re-dispatched rollout
does not mix its calls or observations with a stale partial capture. Rows without a rollout id are skipped; other rollouts' files are untouched.

Every row is checked first: if one is not a JSON object or has a malformed rollout id (SPEC §1.2's
rules, or a derived id the proxy refuses: it must match ^[A-Za-z0-9][A-Za-z0-9._-]*$ and be at most
200 bytes, SPEC D12), nothing is removed and the command exits 1 naming the line, the value and the
rule. A capture directory that does not exist has nothing to clear (it is not created). The summary
on stderr counts the files removed and the rollouts that had nothing to remove.

A file that cannot be removed (e.g. a directory where <id>.capture.jsonl should be, or a permission
error) does not stop the clear: every file of every row is still tried, the summary counts what was
removed and the rollouts that failed, every failure is reported (one line each, naming the rollout
and the file) and the command exits 1, so the rows whose clear failed must not be re-dispatched
before their files are removed.

Training token captures are cleared with them (docs/TOKENS.md §3.6 clear_token_captures_for_rollouts):
for the same rollout ids, <id>.tokens.jsonl, .tokens.intents, .tokens.incomplete and
.tokens.state.json (a retired tombstone included) are removed from --token-dir (default: the capture
directory), so a re-dispatched rollout's tokens start afresh; a token directory that does not exist
has nothing to clear.`,
		Args: noPositionalArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			runDir, err := runCaptureDir(dir, run)
			if err != nil {
				return err
			}
			if err := requireStringFlag(inputFlag, input); err != nil {
				return err
			}
			if err := notDirectoryFlag(inputFlag, input); err != nil {
				return err
			}
			var stores []*capture.Store
			store, err := existingCaptureStore(cmd, runDir)
			switch {
			case errors.Is(err, errNoCaptureDir):
				cmdNotef(cmd, "capture directory %s does not exist: nothing to clear", runDir)
			case err != nil:
				return fmt.Errorf("clear: %w", err)
			default:
				stores = append(stores, store)
			}
			tdir, err := tokenStoreDir(tokenDir, run, runDir)
			if err != nil {
				return err
			}
			var tokenStores []*tokens.Store
			if ts, err := existingTokenStore(tdir, tokenDir); errors.Is(err, errNoTokenDir) {
				cmdNotef(cmd, "token directory %s does not exist: no token capture to clear", tokenDir)
			} else if err != nil {
				return fmt.Errorf("clear: %w", err)
			} else if ts != nil {
				tokenStores = append(tokenStores, ts)
			}
			in, err := os.Open(input)
			if err != nil {
				return fmt.Errorf("clear: %w", err)
			}
			defer in.Close()
			sum, err := rollouts.Clear(in, stores, tokenStores...)
			if (len(stores) > 0 || len(tokenStores) > 0) && (err == nil || len(sum.IDs) > 0) {
				// After a failed removal too: every row was tried, and the summary says what went.
				cmdNotef(cmd, "%s", clearReport(sum, runDir))
			}
			// The first rollout with nothing to remove may have its captures in a run directory (--run-id).
			for _, id := range sum.IDs {
				if !slices.Contains(sum.Cleared, id) && !slices.Contains(sum.Failed, id) {
					noteRunIDHint(cmd, runDir, id+capture.CaptureFileSuffix)
					break
				}
			}
			if err != nil {
				return err
			}
			return nil
		},
	}
	addCaptureDirFlag(cmd, &dir)
	addRunIDFlag(cmd, &run)
	cmd.Flags().StringVar(&input, inputFlag, "", "rollouts JSONL file whose rows are about to be dispatched (required)")
	addTokenDirFlag(cmd, &tokenDir)
	return cmd
}

// clearReport says e.g. "removed 2 files of 1 rollout in DIR; 1 rollout had nothing to remove; 1
// rollout failed (every failure below)".
func clearReport(sum rollouts.ClearSummary, dir string) string {
	msg := fmt.Sprintf("removed %d file%s of %d rollout%s in %s",
		sum.Files, pluralSuffix(sum.Files), len(sum.Cleared), pluralSuffix(len(sum.Cleared)), dir)
	if sum.TokenCaptures > 0 {
		msg += fmt.Sprintf("; cleared the token captures of %d rollout%s", sum.TokenCaptures, pluralSuffix(sum.TokenCaptures))
	}
	if n := sum.Untouched(); n > 0 {
		msg += fmt.Sprintf("; %d rollout%s had nothing to remove", n, pluralSuffix(n))
	}
	if n := len(sum.Failed); n > 0 {
		msg += fmt.Sprintf("; %d rollout%s failed (every failure below)", n, pluralSuffix(n))
	}
	return msg
}
