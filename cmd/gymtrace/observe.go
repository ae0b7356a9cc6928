package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gymtrace/gymtrace/agentobs/claudecode"
	"github.com/gymtrace/gymtrace/rollout"
)

func init() { commands = append(commands, newObserveCmd) }

// newObserveCmd builds `gymtrace observe`, whose subcommands turn an agent harness's own artifacts
// into an ng_agent_observations bundle (SPEC §6).
func newObserveCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "observe",
		Short: "Build an ng_agent_observations bundle from an agent harness's artifacts",
		Args:  noPositionalArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newObserveClaudeCodeCmd())
	return cmd
}

// newObserveClaudeCodeCmd builds `gymtrace observe claudecode`: SPEC §6.3/§6.4 over a
// CLAUDE_CONFIG_DIR, the bundle on stdout.
func newObserveClaudeCodeCmd() *cobra.Command {
	var dir, rolloutID, modelServer string
	var maxBytes int64
	cmd := &cobra.Command{
		Use:   "claudecode --config-dir DIR --rollout-id ID [--model-server-name NAME] [--max-transcript-bytes N]",
		Short: "Print the ng_agent_observations bundle of a Claude Code run's transcripts",
		Long: `Read the transcripts of one Claude Code run (its CLAUDE_CONFIG_DIR: projects/**/*.jsonl, subagent
files included) and print, as one JSON line, the ng_agent_observations bundle NeMo Gym's Claude Code
agent derives from them (SPEC §6.3, §6.4, §6.7): one invocation per session and subagent, their
model-call references (model server NAME and the Anthropic message id), tool calls with their
transcript timing, compactions, and gaps for whatever the transcripts do not say. Malformed
transcript lines become gaps; their content never reaches the output. Where Gym's order is not
deterministic this order is (see the agentobs/claudecode package documentation).

Transcripts are read only as regular files of at most --max-transcript-bytes each, and nothing
below DIR is reached through a symbolic link (SPEC §0 D16): a transcript that is a link (to
/dev/zero, to a file elsewhere), a FIFO or a device, a projects/ that is a link, or a transcript
larger than the bound makes the command exit 1 naming the file and the rule, with nothing printed.

gymtrace attach joins the bundle with the captured calls (and links compaction calls, SPEC §6.6);
gymtrace attach --claude-code-dir-key KEY extracts it itself for rows naming their directory.`,
		Args: noPositionalArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireStringFlag("config-dir", dir); err != nil {
				return err
			}
			if err := requireStringFlag("rollout-id", rolloutID); err != nil {
				return err
			}
			if err := rollout.ValidateID(rolloutID); err != nil {
				return usageErrorf("--rollout-id: %v", err)
			}
			if err := nonNegativeFlag(maxTranscriptBytesFlag, maxBytes); err != nil {
				return err
			}
			b, err := claudecode.Observe(dir, claudecode.Options{RolloutID: rolloutID, ModelServerName: modelServer, MaxTranscriptBytes: maxBytes})
			if te, ok := errors.AsType[*claudecode.TranscriptError](err); ok {
				return fmt.Errorf("observe claudecode: %w", te)
			}
			if err != nil {
				return usageErrorf("%v", err)
			}
			out, err := b.AppendJSON(nil)
			if err != nil {
				return fmt.Errorf("observe claudecode: %w", err)
			}
			return writeOutput(cmd.OutOrStdout(), append(out, '\n'))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&dir, "config-dir", "", "the run's CLAUDE_CONFIG_DIR (required)")
	fl.StringVar(&rolloutID, "rollout-id", "", "the rollout id the run belongs to (required)")
	addMaxTranscriptBytesFlag(cmd, &maxBytes)
	fl.StringVar(&modelServer, "model-server-name", "policy_model", `model server the run's calls went to (refs' model_ref.name; "" adds the gap model_call_ownership_unavailable)`)
	return cmd
}

// maxTranscriptBytesFlag bounds one Claude Code transcript (observe claudecode, attach).
const maxTranscriptBytesFlag = "max-transcript-bytes"

// addMaxTranscriptBytesFlag adds --max-transcript-bytes (claudecode.Options.MaxTranscriptBytes).
func addMaxTranscriptBytesFlag(cmd *cobra.Command, v *int64) {
	cmd.Flags().Int64Var(v, maxTranscriptBytesFlag, claudecode.DefaultMaxTranscriptBytes,
		"largest Claude Code transcript file read, in bytes; a larger one is refused (SPEC §0 D16)")
}

// nonNegativeFlag refuses a negative value of a size flag (a usage error).
func nonNegativeFlag(name string, v int64) error {
	if v < 0 {
		return usageErrorf("--%s %d: want a number of bytes >= 0 (0: the default)", name, v)
	}
	return nil
}
