package demo

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/report"
	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/rollout"
)

// printTraining writes the training run's part of the output: the servers, one row per turn with
// its token counts and whether its prompt extends the previous turn, one row per finalized rollout
// with its mask decision, the causes, the files and the command that shows a token capture.
func printTraining(w io.Writer, tr *Training) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\ntraining run: fake vLLM server on %s, capture proxy with --token-source vllm on %s\n", tr.ModelURL, tr.ProxyURL)
	fmt.Fprintf(&b, "the agent's base URL is %s/v1 (the token segment Gym's base_url_for_run adds);\n",
		rollout.ApplyPrefix(tr.ProxyURL, "<rollout_id>", true))
	b.WriteString("the proxy asks vLLM for the token ids, writes each call's token entry and gives the agent vLLM's answer to its own request\n\n")
	b.WriteString(turnsTable(tr.Rollouts).String())

	b.WriteString("\nfinalized as `gymtrace attach` does (freeze, prefix_merging build, response.output replaced, mask_sample, _ng_token_capture; retired once the output is durable)\n")
	b.WriteString(verdictTable(tr.Rollouts).String())
	for _, r := range tr.Rollouts {
		if r.Masked {
			fmt.Fprintf(&b, "rollout %s masked (mask_sample: true): %s", r.ID, r.Cause)
			if r.Retokenized {
				b.WriteString("; its turn 1 reasoned and the chat template drops the reasoning from the history, so turn 2's prompt re-tokenized turn 1 instead of extending it")
			}
			b.WriteString("\n")
			continue
		}
		fmt.Fprintf(&b, "rollout %s trainable (mask_sample absent, i.e. false): response.output holds its %d calls' items with prompt_token_ids, generation_token_ids and generation_log_probs\n",
			r.ID, r.TokenItems)
	}

	fmt.Fprintf(&b, "\ntraining files\n")
	fmt.Fprintf(&b, "  captures           %s  (<rollout_id>.capture.jsonl and .tokens.*; a retired capture keeps only its state and lock)\n", tr.CaptureDir)
	fmt.Fprintf(&b, "  rollouts           %s\n", tr.RolloutsPath)
	fmt.Fprintf(&b, "  attached rollouts  %s  (response.output rebuilt from the token entries, mask_sample, _ng_token_capture)\n", tr.AttachedPath)
	for _, r := range tr.Rollouts {
		if r.Masked {
			fmt.Fprintf(&b, "  gymtrace tokens --capture-dir %s %s      # its entries, intents and why it is masked\n", report.ShellQuote(tr.CaptureDir), r.ID)
			break
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// turnsTable has one row per training turn: what the agent asked and got, and the token entry.
func turnsTable(rs []TrainingRollout) table {
	t := table{
		header: []string{"ROLLOUT", "TURN", "STREAM", "ANSWER", "PROMPT IDS", "GENERATED IDS", "EXTENDS PREVIOUS TURN"},
		right:  []int{2, 5, 6},
	}
	for _, r := range rs {
		for i, turn := range r.Turns {
			answer := "text"
			if len(turn.Call.ToolCalls) > 0 {
				answer = "tool call"
			}
			if turn.Call.Reasoning != "" {
				answer += " + reasoning"
			}
			prompt, gen := "-", "-"
			if turn.Entry {
				prompt, gen = strconv.Itoa(turn.Prompt), strconv.Itoa(turn.Generation)
			} else {
				answer += " (no token entry)"
			}
			extends := "-"
			if turn.Extends != nil {
				extends = "no: re-tokenized"
				if *turn.Extends {
					extends = "yes"
				}
			}
			t.rows = append(t.rows, []string{r.ID, strconv.Itoa(i + 1), yesNo(turn.Call.Stream), answer, prompt, gen, extends})
		}
	}
	return t
}

// verdictTable has one row per finalized training rollout.
func verdictTable(rs []TrainingRollout) table {
	t := table{
		header: []string{"ROLLOUT", "MASK_SAMPLE", "CALLS", "CHAINS", "ROOTS", "OUTPUT ITEMS", "GENERATED DELIVERED", "REWARD", "CAPTURE"},
		right:  []int{3, 4, 5, 6, 7, 8},
	}
	for _, r := range rs {
		mask, capture := "absent (false)", "retired"
		if r.Masked {
			mask = "true"
		}
		if !r.Retired {
			capture = "kept"
		}
		delivered := metric(r.Capture, "generated_tokens_delivered") + "/" + metric(r.Capture, "generated_tokens_captured")
		t.rows = append(t.rows, []string{r.ID, mask, metric(r.Capture, "n_calls"), metric(r.Capture, "chains"), metric(r.Capture, "roots"),
			strconv.Itoa(r.OutputItems), delivered, string(ojson.AppendFloat(nil, r.Reward)), capture})
	}
	return t
}

// metric is the member k of a _ng_token_capture object as Python prints it, "-" when absent.
func metric(capture ojson.Value, k string) string {
	if v, ok := capture.Get(k); ok {
		return python.Str(v)
	}
	return "-"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
