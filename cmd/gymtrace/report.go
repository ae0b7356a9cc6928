package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/atomicfile"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/report"
	"github.com/gymtrace/gymtrace/rollout"
)

func init() { commands = append(commands, newReportCmd) }

// reportFlags are the flags of `gymtrace report`.
type reportFlags struct {
	dir, run, rollouts, html, jaeger, uncorrelated, tokenDir string
}

// newReportCmd builds `gymtrace report`: the run at a glance, as a terminal table and an HTML file.
func newReportCmd() *cobra.Command {
	var f reportFlags
	cmd := &cobra.Command{
		Use:   "report --capture-dir DIR [--run-id RUN] [--rollouts OUT.jsonl] [--html report.html] [--jaeger-url URL]",
		Short: "Show a run at a glance: per-rollout calls, tokens, latency and errors, with health findings first",
		Long: `Read every capture file of a run and print, health findings first, one row per rollout: calls,
tokens in/out/reasoning/cached, total latency, median time to first token, error categories and
capture problems, then the run's totals. Each rollout is read exactly as gymtrace attach reads it
(SPEC §2.5, §3.2, §5.2, §5.3); nothing is created or modified (but the
.tokens.lock file of a rollout with a token capture, which every reader of the token store creates).

Findings name rollouts without captured calls, damaged capture lines, the .capture.incomplete marker,
captures and observations files that cannot be read (a symbolic link, a FIFO or a directory is
never opened), rollouts whose every call failed, and calls that named no rollout
(with --uncorrelated-rollout-id), a non-empty _unattributed.observations.jsonl (observation spans
that named no rollout on the span, its resource or its trace, SPEC D18: spans, traces, reasons), and rollouts whose training token capture in --token-dir (default:
the capture directory) is masked or would be when finalized now, with the cause (read without
freezing it; see gymtrace tokens). With --rollouts (the run's rollouts file, e.g. the output of
gymtrace attach) every rollout it names is reported, also those without any capture file — without
it such rollouts cannot be seen, and the report says so.

With --html the same report is also written as one self-contained HTML file (no network access):
a sortable table, charts as inline SVG, each rollout's calls with their payloads (up to 64 KiB each)
in collapsed sections, each rollout's trace view (a waterfall of its agent invocations, tool
calls, compactions, sandbox runs and model calls from the capture and observations files, with the
details of each span on a click), and a link per rollout to its trace at --jaeger-url, the UI of
an official Jaeger release (the trace id is derived from the rollout id, and --run-id, as the
capture proxy derives it). Progress is reported on stderr while many files are read. Exit status 0 also when there are findings.`,
		Args: noPositionalArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runReport(cmd, f) },
	}
	addCaptureDirFlag(cmd, &f.dir)
	addRunIDFlag(cmd, &f.run)
	fl := cmd.Flags()
	fl.StringVar(&f.rollouts, "rollouts", "", "the run's rollouts JSONL file: report every rollout it names, with or without captured calls")
	fl.StringVar(&f.html, "html", "", "also write the report as one self-contained HTML file at this path (replaced atomically)")
	fl.StringVar(&f.jaeger, "jaeger-url", report.DefaultJaegerURL, "base URL of the Jaeger UI the HTML report links each rollout's trace to")
	addTokenDirFlag(cmd, &f.tokenDir)
	fl.StringVar(&f.uncorrelated, uncorrelatedRolloutIDFlag, "", "the rollout id the proxy captured calls without a rollout under (its --"+uncorrelatedRolloutIDFlag+"): report them as a finding")
	return cmd
}

func runReport(cmd *cobra.Command, f reportFlags) error {
	runDir, err := runCaptureDir(f.dir, f.run)
	if err != nil {
		return err
	}
	var htmlMode fs.FileMode
	if f.html != "" {
		if err := checkOutputPath("html", f.html, []string{f.dir, runDir, f.tokenDir}, map[string]string{"rollouts": f.rollouts}); err != nil {
			return err
		}
		if htmlMode, err = outputMode("html", f.html); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		if err := checkOutputDir("html", f.html); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	jaeger, err := report.CheckJaegerURL(f.jaeger)
	if err != nil {
		return usageErrorf("--jaeger-url: %w", err)
	}
	if f.uncorrelated != "" {
		if err := rollout.ValidateID(f.uncorrelated); err != nil {
			return usageErrorf("--%s: %w", uncorrelatedRolloutIDFlag, err)
		}
	}
	opts := report.Options{
		RunID:                 f.run,
		CommandArgs:           readCommandArgs(f.dir, f.run),
		UncorrelatedRolloutID: f.uncorrelated,
		OnProgress: func(p report.Progress) {
			cmdNotef(cmd, "read %d of %d rollouts (%d calls) in %s", p.Done, p.Total, p.Calls, p.Elapsed.Round(time.Second))
		},
	}
	tdir, err := tokenStoreDir(f.tokenDir, f.run, runDir)
	if err != nil {
		return err
	}
	if opts.TokenStore, err = existingTokenStore(tdir, f.tokenDir); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if f.tokenDir != "" {
		opts.TokenCommandArgs = "--" + tokenDirFlag + " " + report.ShellQuote(f.tokenDir)
	}
	if f.rollouts != "" {
		in, err := os.Open(f.rollouts)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		defer in.Close()
		opts.Rollouts, opts.RolloutsName = in, f.rollouts
	}
	if f.html != "" {
		opts.PayloadBytes = report.DefaultPayloadBytes
		opts.TraceViews = true
	}
	if fi, err := os.Stat(runDir); err == nil && fi.IsDir() { // report.Build reports any other case
		if _, err := existingCaptureStore(cmd, runDir); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	rep, err := report.Build(cmd.Context(), runDir, opts)
	if errors.Is(err, report.ErrNoCaptureDir) {
		return fmt.Errorf("report: capture directory %s does not exist: no call of this run was captured there (check --%s and --%s)", runDir, captureDirFlag, runIDFlag)
	}
	if err != nil {
		return err
	}
	if slices.ContainsFunc(rep.Findings, func(f report.Finding) bool { return f.Kind == report.FindingNoCapture }) {
		noteRunIDHint(cmd, runDir, "")
	}
	if err := report.WriteText(cmd.OutOrStdout(), rep); err != nil {
		return fmt.Errorf("report: write output: %w", err)
	}
	if f.html == "" {
		return nil
	}
	if err := atomicfile.Write(f.html, f.html, htmlMode, func(w io.Writer) error {
		if err := report.WriteHTML(w, rep, jaeger); err != nil {
			return fmt.Errorf("write %s: %w", f.html, err)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	cmdNotef(cmd, "wrote %s", f.html)
	return nil
}

// readCommandArgs are the arguments, shell-quoted, that make `gymtrace calls` or `gymtrace tokens`
// read the run the report read: --capture-dir DIR, and --run-id RUN when one was given.
func readCommandArgs(dir, run string) string {
	args := "--" + captureDirFlag + " " + report.ShellQuote(dir)
	if run != "" {
		args += " --" + runIDFlag + " " + report.ShellQuote(run)
	}
	return args
}
