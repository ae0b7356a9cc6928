package demo

import (
	"bytes"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/tokens"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// trainingVolatile names what differs between two runs of the training run's output, with the
// placeholder the golden holds for it: the two servers' URLs (free ports) and the directory.
func trainingVolatile(tr *Training) *strings.Replacer {
	return strings.NewReplacer(tr.ModelURL, "<model-url>", tr.ProxyURL, "<proxy-url>", tr.Dir, "<training-dir>")
}

// TestRunTraining runs the training run and checks what a trainer gets: every turn has a token
// entry, the trainable rollout chains into one prefix and is retired after its line is durable, the
// re-tokenized one is masked with its cause and keeps its files; the output is the golden's.
func TestRunTraining(t *testing.T) {
	dir := filepath.Join(t.TempDir(), TrainingDirName)
	var logs bytes.Buffer
	tr, err := runTraining(t.Context(), dir, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})))
	require.NoError(t, err)
	assert.Empty(t, logs.String(), "no warning from the proxy or the servers")
	require.Len(t, tr.Rollouts, 2)

	for k, r := range tr.Rollouts {
		t.Run(r.ID, func(t *testing.T) {
			assert.Equal(t, []string{"0-0", "0-1"}[k], r.ID)
			assert.Equal(t, k == 1, r.Retokenized)
			assert.Equal(t, 1.0, r.Reward, "answer %q", r.Answer)
			require.Len(t, r.Turns, trainingTurns)
			for i, turn := range r.Turns {
				assert.Equal(t, i%2 == 1, turn.Call.Stream, "turns alternate JSON and streamed")
				assert.Equal(t, i%2 == 0, len(turn.Call.ToolCalls) > 0, "turns 1 and 3 call the calculator")
				assert.Equal(t, k == 1 && i == 0, turn.Call.Reasoning != "", "only the re-tokenized rollout's first turn reasons")
				assert.True(t, turn.Entry, "turn %d has its token entry (same model_call_id as the capture record)", i+1)
				assert.Positive(t, turn.Prompt)
				assert.Positive(t, turn.Generation)
				if i == 0 {
					assert.Nil(t, turn.Extends)
					continue
				}
				require.NotNil(t, turn.Extends)
				assert.Equal(t, !(k == 1 && i == 1), *turn.Extends, "turn %d extends turn %d unless turn %d's reasoning was dropped", i+1, i, i)
			}
		})
	}

	good, masked := tr.Rollouts[0], tr.Rollouts[1]
	assert.False(t, good.Masked)
	assert.Empty(t, good.Cause)
	assert.True(t, good.Retired)
	assert.Equal(t, trainingTurns, good.OutputItems)
	assert.Equal(t, trainingTurns, good.TokenItems)
	assert.True(t, masked.Masked)
	assert.Equal(t, "2 roots and 2 chains (want one of each: the calls do not chain into one prefix)", masked.Cause)
	assert.False(t, masked.Retired)
	assert.Equal(t, 1, tr.Retired)
	assert.Equal(t, 2, tr.Tokens.Finalized)
	require.Len(t, tr.Tokens.Masked, 1)
	assert.Equal(t, "0-1", tr.Tokens.Masked[0].RolloutID)

	t.Run("attached lines", func(t *testing.T) {
		b, err := os.ReadFile(tr.AttachedPath)
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		require.Len(t, lines, 2)
		for k, text := range lines {
			line, err := ojson.Parse([]byte(text))
			require.NoError(t, err)
			mask, hasMask := line.Get(tokens.MaskSampleKey)
			assert.Equal(t, k == 1, hasMask, "mask_sample is written only when true")
			if hasMask {
				v, _ := mask.AsBool()
				assert.True(t, v)
			}
			resp, _ := line.Get("response")
			require.NoError(t, tokens.AssertPrefixContiguity(resp), "response.output is one prefix-contiguous chain")
			for _, key := range []string{"ng_model_call_capture", "ng_trajectory", tokens.TokenCaptureKey} {
				_, ok := line.Get(key)
				assert.True(t, ok, "line %d has %s", k+1, key)
			}
		}
		// The trainable line's output is the four turns in order, each with its ids and log probs.
		line, err := ojson.Parse([]byte(lines[0]))
		require.NoError(t, err)
		resp, _ := line.Get("response")
		out, _ := resp.Get("output")
		require.Len(t, out.Elems(), trainingTurns)
		for i, it := range out.Elems() {
			p, _ := it.Get("prompt_token_ids")
			g, _ := it.Get("generation_token_ids")
			lp, _ := it.Get("generation_log_probs")
			assert.Len(t, p.Elems(), good.Turns[i].Prompt, "item %d", i)
			assert.Len(t, g.Elems(), good.Turns[i].Generation, "item %d", i)
			assert.Len(t, lp.Elems(), good.Turns[i].Generation, "item %d", i)
		}
		model, _ := resp.Get("model")
		assert.Equal(t, `"`+chatModel+`"`, model.String(), "the line's other response members are kept")
	})

	t.Run("files", func(t *testing.T) {
		entries, err := os.ReadDir(tr.CaptureDir)
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		assert.Equal(t, []string{
			"0-0.capture.jsonl", "0-0.tokens.lock", "0-0.tokens.state.json", // retired: the tombstone state stays
			"0-1.capture.jsonl", "0-1.tokens.intents", "0-1.tokens.jsonl", "0-1.tokens.lock", "0-1.tokens.state.json",
		}, names)
		store, err := tokens.OpenStore(tr.CaptureDir)
		require.NoError(t, err)
		in, err := store.Inspect("0-0")
		require.NoError(t, err)
		assert.True(t, in.Retired, "a call under 0-0's prefix would now be refused with 409 rollout_finalized")
		in, err = store.Inspect("0-1")
		require.NoError(t, err)
		assert.True(t, in.Frozen)
		assert.False(t, in.Retired)
		assert.Len(t, in.Entries, trainingTurns)
		assert.Empty(t, in.Dangling, "every intent has its entry")
	})

	t.Run("output", func(t *testing.T) {
		var out bytes.Buffer
		require.NoError(t, printTraining(&out, &tr))
		got := trainingVolatile(&tr).Replace(out.String())
		path := filepath.Join("testdata", "training.golden")
		if *update {
			require.NoError(t, os.MkdirAll("testdata", 0o755))
			require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "go test ./cmd/gymtrace/internal/demo -run TestRunTraining -update creates it")
		assert.Equal(t, string(want), got, "the training run's output (volatile: <model-url>, <proxy-url>, <training-dir>)")
		for _, l := range strings.Split(got, "\n") {
			assert.Equal(t, strings.TrimRight(l, " "), l, "no trailing spaces")
		}
	})
}

// TestRunTrainingAgain: a second training run into the same directory starts afresh — the
// pre-dispatch clear removes the retired rollout's tombstone, so its calls are not refused.
func TestRunTrainingAgain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), TrainingDirName)
	logger := slog.New(slog.DiscardHandler)
	_, err := runTraining(t.Context(), dir, logger)
	require.NoError(t, err)
	tr, err := runTraining(t.Context(), dir, logger)
	require.NoError(t, err)
	require.Len(t, tr.Rollouts, 2)
	assert.False(t, tr.Rollouts[0].Masked)
	assert.True(t, tr.Rollouts[0].Retired)
	assert.True(t, tr.Rollouts[1].Masked)
	for _, r := range tr.Rollouts {
		assert.Equal(t, "4", metric(r.Capture, "n_calls"), "only this run's calls: %s", r.ID)
	}
}
