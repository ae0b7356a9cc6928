package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/tokenview"
	"github.com/gymtrace/gymtrace/tokens"
)

func init() { commands = append(commands, newTokensCmd) }

// newTokensCmd builds `gymtrace tokens`: one rollout's training token capture, read only.
func newTokensCmd() *cobra.Command {
	var dir, run, tokenDir, builder string
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "tokens --capture-dir DIR [--run-id RUN] [--token-dir DIR] [--token-builder NAME] [--json] ROLLOUT_ID",
		Short: "Show one rollout's training token capture: entries, state, intents without entries, and why it is masked",
		Long: `Show the training token capture of one rollout (docs/TOKENS.md §2) from --token-dir (default: the
capture directory): its entries (model call id, prompt and generation token counts, created_at), its
state (frozen, retired, marked incomplete, version, snapshot id), the intents without an entry (calls
whose tokens never arrived), the incomplete marks, and what gymtrace attach would make of it now —
trainable, or masked and why (the build's error, an incomplete capture, more than one root or chain,
an unresolved retry).

It is a read: the capture is NOT frozen (a proxy may still be writing to it). The build is made from
the entries and the state as they are, so its snapshot id and version are those of the last freeze, if
any, but with the rules of the freeze attach runs first (docs/TOKENS.md §2.7, the same code): a torn
final line is left out of the entries and reported (torn_tail_bytes), not cut; an index offset past
the file or a call id with conflicting payloads masks the build with the freeze's error
(index_error). Token files are read only as regular files, never through a symbolic link. Only the rollout's .tokens.lock file may be created, as every reader of the store does; a rollout
without token files prints nothing, says so on stderr and exits 0. The directories are never created.

On a terminal the capture is shown as text with the entries as a table; otherwise, or with --json, as
one JSON object.`,
		Args: oneRolloutID,
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			runDir, err := runCaptureDir(dir, run)
			if err != nil {
				return err
			}
			tdir, err := tokenStoreDir(tokenDir, run, runDir)
			if err != nil {
				return err
			}
			if err := checkTokenBuilder(builder); err != nil {
				return err
			}
			store, err := existingTokenStore(tdir, tokenDir)
			if err != nil {
				return fmt.Errorf("tokens: %w", err)
			}
			has := false
			if store != nil {
				if has, err = store.HasCapture(id); err != nil {
					return fmt.Errorf("tokens: %w", err)
				}
			}
			if !has {
				cmdNotef(cmd, "no token capture for rollout %s in %s", id, tdir)
				return nil
			}
			v, err := tokenview.Read(store, id, builder)
			if err != nil {
				return fmt.Errorf("tokens: rollout %s: %w", id, err)
			}
			if !jsonOut && isTerminal(cmd.OutOrStdout()) {
				return tokenview.WriteText(cmd.OutOrStdout(), &v)
			}
			return writeOutput(cmd.OutOrStdout(), append(v.AppendJSON(nil), '\n'))
		},
	}
	addCaptureDirFlag(cmd, &dir)
	addRunIDFlag(cmd, &run)
	addTokenDirFlag(cmd, &tokenDir)
	cmd.Flags().StringVar(&builder, "token-builder", tokens.BuilderPrefixMerging, "the builder attach would use (attach's --token-builder)")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print one JSON object even when standard output is a terminal")
	return cmd
}
