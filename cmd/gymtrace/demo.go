package main

import (
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/demo"
)

func init() { commands = append(commands, newDemoCmd) }

func newDemoCmd() *cobra.Command {
	var (
		dir string
		n   int
	)
	cmd := &cobra.Command{
		Use:   "demo [--dir DIR] [--rollouts N]",
		Short: "Run the embedded end-to-end demo: fake model server, capture proxy, agent rollouts, attach, then a training run (token capture)",
		Long: `Run gymtrace's main job end to end on this machine, every layer real: an in-process fake model
server answering the OpenAI Responses, Chat Completions and Anthropic Messages APIs (streaming and
not, with tool calls and reasoning), the capture proxy in front of it, and a small tool-using agent
that runs N rollouts through the proxy (/ng-rollout/<rollout_id>/v1/...). The captures are then
attached to a rollouts file (ng_model_call_capture), and a per-rollout summary computed from the
capture files is printed with the commands to look further.

Then a training run: the fake server as a vLLM engine behind a second proxy with --token-source
vllm, two rollouts of four Chat calls under /ng-rollout/<rollout_id>/training-token-capture/v1,
finalized as gymtrace attach finalizes them. One rollout chains into one token prefix (trainable,
capture retired); the other re-tokenizes its history (its first turn's reasoning is dropped by the
chat template) and is masked (mask_sample: true). The token counts per call and each rollout's
mask decision with its cause are printed.

Files go to DIR (default: a new directory under the system temp dir, kept and printed):
DIR/captures/<rollout_id>.capture.jsonl, DIR/rollouts.jsonl, DIR/rollouts.attached.jsonl, and the
training run's DIR/training/captures/ (capture records and <rollout_id>.tokens.*),
DIR/training/rollouts.jsonl and DIR/training/rollouts.attached.jsonl.
A relative DIR is resolved against the current directory.`,
		Args: noPositionalArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDemo(cmd, dir, n) },
	}
	cmd.Flags().StringVar(&dir, "dir", "", "directory for the demo's files (default: a new temporary directory, kept)")
	cmd.Flags().IntVar(&n, "rollouts", demo.DefaultRollouts, "number of rollouts to run (1 to 1000)")
	cmd.AddCommand(newDemoUpstreamCmd())
	return cmd
}

// newDemoUpstreamCmd is `gymtrace demo upstream`: the demo's fake model server on its own.
func newDemoUpstreamCmd() *cobra.Command {
	cfg := demo.UpstreamConfig{}
	cmd := &cobra.Command{
		Use:   "upstream [--listen 127.0.0.1:8001] [--engine openai|vllm|sglang] [--no-inline-token-ids]",
		Short: "Serve the demo's fake model server, to try gymtrace proxy by hand",
		Long: `Serve the demo's fake model server until SIGINT or SIGTERM: deterministic answers (no model) to
the OpenAI Responses, Chat Completions and Anthropic Messages APIs, streamed and not, with tool
calls and reasoning (--engine openai, the default); or a vLLM or SGLang OpenAI-compatible server
(--engine vllm|sglang): Chat Completions with prompt and generated token ids and log probs when
asked, /tokenize, and a ChatML tokenizer whose prompts extend turn by turn, for the proxy's
--token-source (README "Training runs"). --no-inline-token-ids makes the vllm engine a release
before v0.10.2 (no return_token_ids; use the proxy's --vllm-token-ids-from-logprobs).
Prints "listening on http://HOST:PORT" when ready.`,
		Args: noPositionalArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg.Out, cfg.Err = cmd.OutOrStdout(), cmd.ErrOrStderr()
			if err := cfg.Validate(); err != nil {
				return usageErrorf("%v", err)
			}
			return demo.ServeUpstream(ctx, cfg)
		},
	}
	cmd.Flags().StringVar(&cfg.Listen, "listen", "127.0.0.1:8001", "address to listen on (port 0: a free one)")
	cmd.Flags().StringVar(&cfg.Engine, "engine", "openai", "what to answer as: openai, vllm or sglang")
	cmd.Flags().BoolVar(&cfg.NoInlineTokenIDs, "no-inline-token-ids", false, "with --engine vllm: a vLLM before v0.10.2, without return_token_ids")
	return cmd
}

func runDemo(cmd *cobra.Command, dir string, n int) error {
	if n < 1 || n > demo.MaxRollouts {
		return usageErrorf("--rollouts %d must be between 1 and %d", n, demo.MaxRollouts)
	}
	if dir != "" && !filepath.IsAbs(dir) {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return usageErrorf("--dir %q: cannot make it absolute: %v", dir, err)
		}
		cmdNotef(cmd, "--dir %q is relative; using %s (capture directories are absolute paths)", dir, abs)
		dir = abs
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, err := demo.Run(ctx, demo.Config{Dir: dir, Rollouts: n, Out: cmd.OutOrStdout(), Err: cmd.ErrOrStderr()})
	return err
}
