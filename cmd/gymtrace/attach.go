package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gymtrace/gymtrace/agentobs/claudecode"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/atomicfile"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rollouts"
)

func init() { commands = append(commands, newAttachCmd) }

// maxReported bounds how many malformed rows and how many rollouts per capture problem `attach`
// lists on stderr; the rest are counted.
const maxReported = 20

// inputsFlag names attach's file of dispatched input rows (rollouts.ReadInputRows).
const inputsFlag = "inputs"

// newAttachCmd builds `gymtrace attach` (SPEC §5.5 step 2 over a rollout file, rollouts.Attach).
func newAttachCmd() *cobra.Command {
	var dir, run, input, output string
	var strict, noTrajectory bool
	var inputs string
	var opts rollouts.Options
	var tf attachTokenFlags
	cmd := &cobra.Command{
		Use:   "attach --capture-dir DIR [--run-id RUN] --input ROLLOUTS.jsonl --output OUT.jsonl [--inputs ROWS.jsonl] [--no-trajectory] [--include-payloads] [--strict] [--claude-code-dir-key KEY [--max-transcript-bytes N]] [--token-dir DIR] [--token-all-rows] [--token-builder NAME] [--max-mask-fraction X [--mask-fraction-min-samples N]]",
		Short: "Add each rollout's captured model calls (ng_model_call_capture) to a rollouts JSONL file",
		Long: `Copy ROLLOUTS.jsonl to OUT.jsonl, adding to every row that carries a rollout id (SPEC §1.2:
_ng_rollout_id, or _ng_task_index and _ng_rollout_index, plus _ng_attempt_index) the key
ng_model_call_capture: its calls, metrics and capture gaps (SPEC §5.1-§5.3). An existing
ng_model_call_capture is replaced in place; every other key keeps its position and its exact JSON
text. Rows without an id are copied unchanged.

Then, as Gym's collector does, every attached row gets ng_trajectory, the standardized trajectory
(SPEC §5.5 step 3, §5.6): the producer's trajectory, the observations and one model call per captured
call. The captured payloads (request, response, request_raw, response_raw) move into
ng_trajectory.model_calls and the attached calls drop them; a row whose projection fails keeps them
and gets the gap trajectory_projection_failed (reported on stderr; with --strict, exit 1 after
writing OUT.jsonl). A row whose ng_trajectory or ng_agent_observations
has a multimodal_history_redacted gap never gets payloads. The trajectory's task_id comes from the
dispatched input row: --inputs names the run's input rows (e.g. Gym's *_materialized_inputs.jsonl),
joined by _ng_task_index and _ng_rollout_index; without it the row's own task_id, problem_id or
instance_id, else _ng_task_index, is used. --no-trajectory skips the projection; payloads are then
attached only with --include-payloads.

A row attached before (it already carries ng_model_call_capture and ng_trajectory, e.g. OUT.jsonl
given again as ROLLOUTS.jsonl after more calls were captured) comes out as a fresh attach of the
line before its first attach would: the gaps the earlier projection derived (from the
observations, the capture and the *_unavailable rules) are derived again, in the fresh order, and a
stale one is withdrawn. With --no-trajectory ng_trajectory is never written nor removed: a row
attached before keeps its earlier ng_trajectory exactly as it was, which may then describe other
calls than the new ng_model_call_capture; re-attach without the flag to update both.

A row's ng_agent_observations (SPEC §6) is validated and joined with the rollout's captured calls by
model_call_id or (model server, response id), never by time or position (SPEC §5.4, §6.5); a row
without one takes the bundle of <rollout_id>.observations.jsonl beside the capture file (written by
the agentobs SDK or from any language's GenAI spans). An invalid bundle is kept as it was and reported.

OUT.jsonl is written atomically (a temporary file in its directory, then renamed) and must differ
from ROLLOUTS.jsonl and ROWS.jsonl; a new OUT.jsonl is created with mode 0600 (it may hold
payloads), an existing one keeps its mode. A row that is not a JSON object or has a malformed rollout id (SPEC §1.2's
rules, or a derived id the proxy refuses: it must match ^[A-Za-z0-9][A-Za-z0-9._-]*$ and be at most
200 bytes, SPEC D12) is copied unchanged and reported with its line number, the value and the rule;
the command then exits 1 after writing OUT.jsonl.
Rollouts without capture records, with damaged capture lines, marked incomplete or with records
that repeat a model_call_id (a call recorded twice), and a row naming a rollout an earlier row
already named (both get its calls: a sum over OUT.jsonl counts them twice), are reported on stderr
(exit 0; with --strict, exit 1 after writing OUT.jsonl), and so is a non-empty _unattributed.observations.jsonl in the
capture directory: observation spans that named no rollout on the span, its resource or its trace
(SPEC D18), which no row's observations include.

With --claude-code-dir-key, transcripts are read only as regular files of at most
--max-transcript-bytes each, and nothing below a row's directory is reached through a symbolic link
(SPEC §0 D16): a row whose directory breaks that rule gets an ng_agent_observations bundle with the
gap claude_code_transcript_unreadable (the file and the rule as its detail) and is reported on
stderr like a capture problem (exit 0; with --strict, exit 1 after writing OUT.jsonl).

Training token captures (docs/TOKENS.md §0 T6, §1.7 steps 5-7): every row whose rollout has a token
capture file in --token-dir (default: the capture directory; <id>.tokens.jsonl, .tokens.intents,
.tokens.incomplete or .tokens.state.json), or every row with --token-all-rows, is finalized as Gym's
collector does after the projection: its capture is frozen and built (--token-builder, default
prefix_merging), the main chain's token-bearing items replace response.output, and the row gets
_ng_token_capture (the build's metrics and error) and, when it must not be trained on, mask_sample:
true. Masked rollouts and their causes are reported on stderr (with --strict, exit 1). Only after
OUT.jsonl is durable (fsynced and renamed) is each well-built rollout's capture retired (its files
dropped, a tombstone kept); masked ones keep their files. Re-running never masks a well-finalized
rollout: a row whose capture was retired by an earlier attach is kept as it is. With
--max-mask-fraction, attach stops as Gym's collector does once at least --mask-fraction-min-samples
rows were finalized and more than that fraction of them is masked: it exits 1 with Gym's message,
OUT.jsonl is not written and nothing is retired.`,
		Args: noPositionalArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			runDir, err := runCaptureDir(dir, run)
			if err != nil {
				return err
			}
			if err := requireStringFlag(inputFlag, input); err != nil {
				return err
			}
			if err := requireStringFlag(outputFlag, output); err != nil {
				return err
			}
			if err := notDirectoryFlag(inputFlag, input); err != nil {
				return err
			}
			if inputs != "" {
				if err := notDirectoryFlag(inputsFlag, inputs); err != nil {
					return err
				}
			}
			if input == "-" || output == "-" {
				return usageErrorf("--%s and --%s name files; \"-\" (standard input or output) is not supported: the output is replaced atomically", inputFlag, outputFlag)
			}
			if err := checkOutputPath(outputFlag, output, []string{dir, runDir, tf.dir}, map[string]string{inputFlag: input, inputsFlag: inputs}); err != nil {
				return err
			}
			if err := nonNegativeFlag(maxTranscriptBytesFlag, opts.ClaudeCodeMaxTranscriptBytes); err != nil {
				return err
			}
			store, err := existingCaptureStore(cmd, runDir)
			if err != nil {
				return fmt.Errorf("attach: %w", err)
			}
			opts.Trajectory = !noTrajectory
			if inputs != "" {
				if opts.Inputs, err = rollouts.ReadInputRowsFile(cmd.Context(), inputs); err != nil {
					return fmt.Errorf("attach: --%s: %w", inputsFlag, err)
				}
			}
			tokenOpts, err := tf.options(cmd, run, runDir)
			if err != nil {
				return err
			}
			opts.Tokens = tokenOpts
			return runAttach(cmd, store, input, output, strict, opts)
		},
	}
	addCaptureDirFlag(cmd, &dir)
	addRunIDFlag(cmd, &run)
	cmd.Flags().StringVar(&input, inputFlag, "", "rollouts JSONL file to read (required)")
	cmd.Flags().StringVar(&output, outputFlag, "", "JSONL file to write; replaced atomically (required)")
	cmd.Flags().BoolVar(&opts.IncludePayloads, "include-payloads", false, "with --no-trajectory: keep request/response payloads in the attached calls (the projection always moves them into ng_trajectory)")
	cmd.Flags().BoolVar(&noTrajectory, "no-trajectory", false, "skip the ng_trajectory projection (SPEC §5.5 step 3): only the attachment and the observations join; an existing ng_trajectory (a producer's, or an earlier attach's, which then may describe other calls) is kept unchanged")
	cmd.Flags().StringVar(&inputs, inputsFlag, "", "the run's dispatched input rows (JSONL, e.g. *_materialized_inputs.jsonl): each trajectory's task_id comes from the row with the same _ng_task_index and _ng_rollout_index")
	cmd.Flags().BoolVar(&strict, "strict", false, "exit 1 (after writing the output) when any rollout has a capture problem, a refused Claude Code transcript or a failed ng_trajectory projection reported on stderr")
	cmd.Flags().StringVar(&opts.ClaudeCodeDirKey, "claude-code-dir-key", "", "row key holding the path of the rollout's CLAUDE_CONFIG_DIR: rows without ng_agent_observations get the bundle extracted from its Claude Code transcripts (SPEC §6.3), joined with the calls")
	cmd.Flags().StringVar(&opts.ClaudeCodeModelServerName, "claude-code-model-server-name", "policy_model", "model server name of the Claude Code transcripts' calls (their refs' model_ref.name; \"\" adds the ownership gap)")
	addMaxTranscriptBytesFlag(cmd, &opts.ClaudeCodeMaxTranscriptBytes)
	tf.add(cmd)
	return cmd
}

// outputFileMode is the mode of a new `attach` output: it may hold payloads, so only the owner reads it.
const outputFileMode fs.FileMode = 0o600

// runAttach attaches into output atomically, also when some rows were malformed (they are copied
// unchanged, then reported). Errors name the output, never the temporary file.
func runAttach(cmd *cobra.Command, store *capture.Store, input, output string, strict bool, opts rollouts.Options) (err error) {
	mode, err := outputMode(outputFlag, output)
	if err != nil {
		return err
	}
	in, err := os.Open(input)
	if err != nil {
		return fmt.Errorf("attach: %w", err)
	}
	defer in.Close()
	opts.OnProgress = func(p rollouts.Progress) {
		cmdNotef(cmd, "%d row%s of %s read (%.1f MiB), %.1f MiB of capture files read, in %s: %d attached",
			p.Rows, pluralSuffix(p.Rows), input, mib(p.Bytes), mib(p.CaptureBytes), p.Elapsed.Round(time.Second), p.Attached)
	}
	start := time.Now()
	var sum rollouts.Summary
	var malformed *rollouts.MalformedRowsError
	err = atomicfile.Write(output, "output "+output, mode, func(w io.Writer) error {
		var attachErr error
		sum, attachErr = rollouts.Attach(cmd.Context(), in, w, []*capture.Store{store}, opts)
		if attachErr != nil && !errors.As(attachErr, &malformed) {
			return fmt.Errorf("output %s not written: %w", output, attachErr)
		}
		return nil // malformed rows are copied unchanged: the output is written, then they are reported
	})
	if err != nil {
		return fmt.Errorf("attach: %w", err)
	}
	retired := retireTokens(cmd, output, opts.Tokens, sum.Tokens.Retirable)

	reportAttach(cmd, sum, retired, output, time.Since(start))
	for _, h := range sum.Rollouts {
		if h.NoRecords { // its captures may sit in a run directory (--run-id)
			noteRunIDHint(cmd, store.Dir(), h.RolloutID+capture.CaptureFileSuffix)
			break
		}
	}
	unattributed := noteUnattributed(cmd, store)
	if malformed != nil {
		return fmt.Errorf("attach: %d malformed row%s copied unchanged to %s (listed above)", len(malformed.Rows), pluralSuffix(len(malformed.Rows)), output)
	}
	if strict && unattributed != "" && problemRollouts(sum) == 0 {
		return fmt.Errorf("attach --strict: observation spans that name no rollout: %s; %s was written", unattributed, output)
	}
	if n := problemRollouts(sum); strict && n > 0 {
		var what []string
		for _, k := range []struct {
			n    int
			what string
		}{
			{len(sum.Rollouts), "capture problems"},
			{len(sum.TranscriptErrors), "refused Claude Code transcripts"},
			{len(sum.TrajectoryErrors), "failed ng_trajectory projections"},
			{len(sum.Tokens.Masked), "masked token captures"},
			{len(sum.RepeatedRows), "a rollout attached again"},
		} {
			if k.n > 0 {
				what = append(what, k.what)
			}
		}
		also := ""
		if unattributed != "" {
			also = ", and " + unattributed
		}
		return fmt.Errorf("attach --strict: %d rollout%s with %s (listed above)%s; %s was written", n, pluralSuffix(n), strings.Join(what, " or "), also, output)
	}
	return nil
}

// problemRollouts counts the rows with capture problems, refused Claude Code transcripts or a
// failed ng_trajectory projection.
func problemRollouts(sum rollouts.Summary) int {
	lines := make(map[int]bool)
	for _, h := range sum.Rollouts {
		lines[h.Line] = true
	}
	for _, errs := range [][]rollouts.RowError{sum.TranscriptErrors, sum.TrajectoryErrors, sum.RepeatedRows} {
		for _, r := range errs {
			lines[r.Line] = true
		}
	}
	for _, m := range sum.Tokens.Masked {
		lines[m.Line] = true
	}
	return len(lines)
}

// reportAttach writes the summary, the malformed rows and the rollouts with capture problems to stderr.
func reportAttach(cmd *cobra.Command, sum rollouts.Summary, retired int, output string, took time.Duration) {
	noteRowErrors(cmd, sum.RowErrors, "malformed row copied unchanged", "malformed rows")
	noteRowErrors(cmd, sum.ObservationErrors, "invalid ng_agent_observations not joined",
		"rows with invalid ng_agent_observations")
	noteRowErrors(cmd, sum.ObservationReadErrors, "observations could not be read, ng_agent_observations not joined",
		"rows with unreadable observations")
	noteRowErrors(cmd, sum.TranscriptErrors, "gap "+claudecode.GapClaudeCodeTranscriptUnreadable,
		"rows with refused Claude Code transcripts")
	noteRowErrors(cmd, sum.TrajectoryErrors, "ng_trajectory projection failed (gap trajectory_projection_failed)",
		"rows whose projection failed")
	noteRowErrors(cmd, sum.RepeatedRows, "rollout attached twice", "rows repeating a rollout")
	kinds := []struct {
		what string
		has  func(h rollouts.RolloutHealth) bool
	}{
		{"without capture records", func(h rollouts.RolloutHealth) bool { return h.NoRecords }},
		{"with damaged capture lines", func(h rollouts.RolloutHealth) bool { return h.UnreadableLines > 0 }},
		{"marked incomplete", func(h rollouts.RolloutHealth) bool { return h.Incomplete }},
		{"with an unreadable capture", func(h rollouts.RolloutHealth) bool { return h.ReadFailed }},
		{"with duplicate model_call_ids", func(h rollouts.RolloutHealth) bool { return h.DuplicateCalls > 0 }},
	}
	msg := fmt.Sprintf("wrote %s: %d rows, %d attached, %d unchanged, %d malformed in %s",
		output, sum.Rows, sum.Attached, sum.Unchanged, sum.Malformed, took.Round(time.Millisecond))
	if sum.ObservationsJoined > 0 {
		msg += fmt.Sprintf("; %d ng_agent_observations joined", sum.ObservationsJoined)
	}
	if n := len(sum.ObservationErrors); n > 0 {
		msg += fmt.Sprintf("; %d invalid ng_agent_observations", n)
	}
	if n := len(sum.ObservationReadErrors); n > 0 {
		msg += fmt.Sprintf("; %d with unreadable observations", n)
	}
	if n := len(sum.TranscriptErrors); n > 0 {
		msg += fmt.Sprintf("; %d with refused Claude Code transcripts", n)
	}
	for i, k := range kinds {
		n := 0
		for _, h := range sum.Rollouts {
			if !k.has(h) {
				continue
			}
			if n < maxReported {
				note := ""
				switch i {
				case 1: // damaged lines
					note = fmt.Sprintf(" (%d line%s skipped)", h.UnreadableLines, pluralSuffix(h.UnreadableLines))
				case 4: // duplicates
					note = fmt.Sprintf(" (%d call%s recorded again)", h.DuplicateCalls, pluralSuffix(h.DuplicateCalls))
				}
				cmdNotef(cmd, "line %d: rollout %s %s%s", h.Line, h.RolloutID, k.what, note)
			}
			n++
		}
		if n > maxReported {
			cmdNotef(cmd, "... and %d more rollouts %s", n-maxReported, k.what)
		}
		if n > 0 {
			msg += fmt.Sprintf("; %d %s", n, k.what)
		}
	}
	msg += reportTokens(cmd, sum.Tokens, retired)
	cmdNotef(cmd, "%s", msg)
}

// noteRowErrors lists up to maxReported row errors on stderr, each after prefix, and counts the rest.
func noteRowErrors(cmd *cobra.Command, errs []rollouts.RowError, prefix, rest string) {
	for i, r := range errs {
		if i == maxReported {
			cmdNotef(cmd, "... and %d more %s", len(errs)-maxReported, rest)
			return
		}
		cmdNotef(cmd, "%s: %v", prefix, r)
	}
}

// pathErrCause returns the cause of an *fs.PathError (without its operation and path), or err.
func pathErrCause(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}

// mib is n bytes in MiB.
func mib(n int64) float64 { return float64(n) / (1 << 20) }
