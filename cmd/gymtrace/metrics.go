package main

import (
	"github.com/spf13/cobra"

	"github.com/gymtrace/gymtrace/capture"
)

func init() { commands = append(commands, newMetricsCmd) }

// newMetricsCmd builds `gymtrace metrics`: the SPEC §5.2 metrics of one rollout.
func newMetricsCmd() *cobra.Command {
	var dir, run string
	cmd := &cobra.Command{
		Use:   "metrics --capture-dir DIR [--run-id RUN] ROLLOUT_ID",
		Short: "Print the aggregated metrics of one rollout's captured calls as one JSON object",
		Long: `Print the SPEC §5.2 metrics of one rollout as one JSON line: tokens_in, tokens_out,
tokens_reasoning, tokens_total, cached_tokens (sums of the non-null values), latency_total_ms and
num_calls. Damaged capture lines are skipped (not counted in num_calls) and reported on stderr, as is
the .capture.incomplete marker. A rollout without a capture file prints the empty metrics object
(num_calls 0), says so on stderr and exits 0. The capture directory is never created.`,
		Args: oneRolloutID,
		RunE: func(cmd *cobra.Command, args []string) error {
			records, err := readRolloutRecords(cmd, dir, run, args[0])
			if err != nil {
				return err
			}
			out := capture.Aggregate(records).AppendJSON(nil)
			return writeOutput(cmd.OutOrStdout(), append(out, '\n'))
		},
	}
	addCaptureDirFlag(cmd, &dir)
	addRunIDFlag(cmd, &run)
	return cmd
}
