package main

import (
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/report"
)

func init() { commands = append(commands, newCallsCmd) }

// newCallsCmd builds `gymtrace calls` (DESIGN.md "CLI contract").
func newCallsCmd() *cobra.Command {
	var dir, run string
	var payloads, jsonOut bool
	cmd := &cobra.Command{
		Use:   "calls --capture-dir DIR [--run-id RUN] [--payloads] [--json] ROLLOUT_ID",
		Short: "Print the captured model calls of one rollout: a table on a terminal, else one JSON record per line",
		Long: `Print the captured model calls of one rollout as JSON lines: one ModelCallRecord per call, all
fields in SPEC §3.2 order (nulls included), in capture order. request, response, request_raw and
response_raw are printed only with --payloads.

When standard output is a terminal (and neither --json nor --payloads is given) the calls are shown
as an aligned table instead: index, model, dialect, status, tokens, latency, time to first token,
finish reason and error category. --json forces JSON lines.

The capture file is read tolerantly (SPEC §2.5): damaged lines are skipped and counted on stderr, and
the .capture.incomplete marker is reported on stderr. A rollout without a capture file prints nothing,
says so on stderr and exits 0. The capture directory is never created.`,
		Args: oneRolloutID,
		RunE: func(cmd *cobra.Command, args []string) error {
			records, err := readRolloutRecords(cmd, dir, run, args[0])
			if err != nil {
				return err
			}
			if !jsonOut && !payloads && isTerminal(cmd.OutOrStdout()) {
				if len(records) == 0 {
					return nil
				}
				return report.WriteCallsTable(cmd.OutOrStdout(), records)
			}
			var out []byte
			for i := range records {
				out = records[i].AppendJSON(out, payloads)
				out = append(out, '\n')
			}
			return writeOutput(cmd.OutOrStdout(), out)
		},
	}
	addCaptureDirFlag(cmd, &dir)
	addRunIDFlag(cmd, &run)
	cmd.Flags().BoolVar(&payloads, "payloads", false, "include request, response, request_raw and response_raw in each record (implies JSON lines)")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print JSON lines even when standard output is a terminal")
	return cmd
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
