package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/tokens"
)

// tokenRun is a capture directory (which is also the token store) with three rollouts: 0-0 a
// well-built two-turn chain, 1-0 a chain with an intent that never got its entry (masked:
// capture_incomplete), 2-0 model calls without any token file; and the rollouts file naming them.
type tokenRun struct {
	dir, input string
	store      *tokens.Store
}

func newTokenRun(t *testing.T) tokenRun {
	t.Helper()
	dir := t.TempDir()
	store, err := tokens.OpenStore(dir)
	require.NoError(t, err)
	rec := func(id string) string {
		return `{"model_call_id":"` + id + `","dialect":"chat","model_ref":{"type":"responses_api_models","name":"p"},` +
			`"started_at":1.0,"completed_at":2.0,"latency_ms":1000.0,"status_code":200,"error_category":null,` +
			`"request":{"model":"m"},"response":{"id":"r","model":"m","usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}}` + "\n"
	}
	entry := func(rid, cid string, prompt, gen []int64, at float64) tokens.TokenEntry {
		lp := make([]float64, len(gen))
		for i := range lp {
			lp[i] = -0.5
		}
		return tokens.TokenEntry{SchemaVersion: tokens.SchemaVersion, RolloutID: rid, ModelCallID: cid, Model: "m",
			PromptTokenIDs: prompt, GenerationTokenIDs: gen, GenerationLogProbs: lp, CreatedAt: at}
	}
	for _, rid := range []string{"0-0", "1-0", "2-0"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, rid+capture.CaptureFileSuffix), []byte(rec(rid+"-a")+rec(rid+"-b")), 0o600))
	}
	for _, rid := range []string{"0-0", "1-0"} {
		require.NoError(t, store.BeginCall(rid, rid+"-a"))
		require.NoError(t, store.Append(entry(rid, rid+"-a", []int64{1, 2}, []int64{3, 4}, 1)))
		require.NoError(t, store.BeginCall(rid, rid+"-b"))
	}
	require.NoError(t, store.Append(entry("0-0", "0-0-b", []int64{1, 2, 3, 4, 5}, []int64{6}, 2)))
	input := filepath.Join(t.TempDir(), "rollouts.jsonl")
	var rows string
	for i := range 3 {
		rows += `{"_ng_task_index":` + strconv.Itoa(i) + `,"_ng_rollout_index":0,"response":{"id":"x","model":"m","output":[{"type":"message","content":"hi"}]},"reward":1.0}` + "\n"
	}
	require.NoError(t, os.WriteFile(input, []byte(rows), 0o600))
	return tokenRun{dir: dir, input: input, store: store}
}

// outputRows decodes the rows of an attach output, in order.
func outputRows(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []map[string]any
	for line := range strings.Lines(string(b)) {
		var row map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &row))
		out = append(out, row)
	}
	return out
}

func inspect(t *testing.T, s *tokens.Store, id string) tokens.Inspection {
	t.Helper()
	in, err := s.Inspect(id)
	require.NoError(t, err)
	return in
}

// TestAttachFinalizesTokenCaptures: participation (rows with token files; every row with
// --token-all-rows), the projection onto response.output, mask_sample and _ng_token_capture as
// FinalizeRollout sets them, and retirement of the well-built capture only, after the output is
// durable.
func TestAttachFinalizesTokenCaptures(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		masked2 bool // 2-0 (no token file) participates and is masked
	}{
		{"token files", nil, false},
		{"all rows", []string{"--token-all-rows"}, true},
		{"no trajectory", []string{"--no-trajectory"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run := newTokenRun(t)
			output := filepath.Join(t.TempDir(), "out.jsonl")
			var retiredBefore bool
			var outputBefore []byte
			beforeRetire = func(out string) {
				retiredBefore = inspect(t, run.store, "0-0").Retired
				outputBefore, _ = os.ReadFile(out)
			}
			t.Cleanup(func() { beforeRetire = func(string) {} })

			r := runGymtrace(t, append([]string{"attach", "--capture-dir", run.dir, "--input", run.input, "--output", output}, tt.args...)...)
			require.NoError(t, r.err, r.stderr)
			assert.False(t, retiredBefore, "nothing is retired before the output is durable")
			got, err := os.ReadFile(output)
			require.NoError(t, err)
			assert.Equal(t, string(got), string(outputBefore), "the output was complete before the first retirement")

			rows := outputRows(t, output)
			require.Len(t, rows, 3)
			resp := rows[0]["response"].(map[string]any)
			assert.Equal(t, "x", resp["id"], "the response keeps its other members")
			items := resp["output"].([]any)
			require.Len(t, items, 2)
			assert.Equal(t, []any{1.0, 2.0, 3.0, 4.0, 5.0}, items[1].(map[string]any)["prompt_token_ids"])
			assert.NotContains(t, rows[0], "mask_sample")
			assert.Equal(t, 2.0, rows[0]["_ng_token_capture"].(map[string]any)["n_calls"])
			assert.True(t, inspect(t, run.store, "0-0").Retired, "a well-built capture is retired")

			assert.Equal(t, true, rows[1]["mask_sample"])
			assert.Equal(t, true, rows[1]["_ng_token_capture"].(map[string]any)["capture_incomplete"])
			in := inspect(t, run.store, "1-0")
			assert.True(t, in.Frozen)
			assert.False(t, in.Retired, "a masked capture keeps its files")
			assert.Len(t, in.Entries, 1)
			assert.Contains(t, r.stderr, "line 2: rollout 1-0 token capture masked (mask_sample): capture incomplete")

			if tt.masked2 {
				assert.Equal(t, true, rows[2]["mask_sample"])
				assert.Equal(t, "capture contains no token records", rows[2]["_ng_token_capture"].(map[string]any)["error"])
				assert.Contains(t, r.stderr, "3 token captures finalized (2 masked, 1 retired)")
			} else {
				assert.NotContains(t, rows[2], "mask_sample")
				assert.NotContains(t, rows[2], "_ng_token_capture")
				has, err := run.store.HasCapture("2-0")
				require.NoError(t, err)
				assert.False(t, has, "a row that does not participate leaves no token file")
				assert.Contains(t, r.stderr, "2 token captures finalized (1 masked, 1 retired)")
			}
			assert.Equal(t, "x", rows[2]["response"].(map[string]any)["id"])
		})
	}
}

// TestAttachTokenReruns: attach again on its own output changes nothing, and on the same input after
// retirement never masks the retired rollout.
func TestAttachTokenReruns(t *testing.T) {
	run := newTokenRun(t)
	out1 := filepath.Join(t.TempDir(), "out1.jsonl")
	r := runGymtrace(t, "attach", "--capture-dir", run.dir, "--input", run.input, "--output", out1)
	require.NoError(t, r.err, r.stderr)
	first, err := os.ReadFile(out1)
	require.NoError(t, err)

	out2 := filepath.Join(t.TempDir(), "out2.jsonl")
	r = runGymtrace(t, "attach", "--capture-dir", run.dir, "--input", out1, "--output", out2)
	require.NoError(t, r.err, r.stderr)
	second, err := os.ReadFile(out2)
	require.NoError(t, err)
	assert.Equal(t, string(first), string(second), "re-running on its own output changes no row")
	assert.Contains(t, r.stderr, "2 token captures finalized (1 masked, 0 retired, 2 kept as finalized before)")
	assert.NotContains(t, r.stderr, "could not freeze")

	out3 := filepath.Join(t.TempDir(), "out3.jsonl")
	r = runGymtrace(t, "attach", "--capture-dir", run.dir, "--input", run.input, "--output", out3)
	require.NoError(t, r.err, r.stderr)
	rows := outputRows(t, out3)
	assert.NotContains(t, rows[0], "mask_sample", "a retired rollout is never masked")
	assert.NotContains(t, rows[0], "_ng_token_capture")
	assert.Contains(t, r.stderr, "rollout 0-0: its token capture was retired by an earlier finalization")
	assert.Equal(t, true, rows[1]["mask_sample"], "the masked rollout is built again from its frozen capture")
	assert.Equal(t, outputRows(t, out1)[1], rows[1])
}

// TestAttachMaxMaskFraction: too many masked rows abort with Gym's message; the output is not
// written and nothing is retired. Below the minimum number of samples, or the fraction, it is not.
func TestAttachMaxMaskFraction(t *testing.T) {
	for _, tt := range []struct {
		name, fraction, min string
		abort               bool
	}{
		{"over", "0.4", "2", true},
		{"all rows over", "0.6", "3", true},
		{"at the fraction", "0.5", "2", false},
		{"too few samples", "0", "3", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run := newTokenRun(t)
			output := filepath.Join(t.TempDir(), "out.jsonl")
			args := []string{"attach", "--capture-dir", run.dir, "--input", run.input, "--output", output,
				"--max-mask-fraction", tt.fraction, "--mask-fraction-min-samples", tt.min}
			if tt.name == "all rows over" {
				args = append(args, "--token-all-rows")
			}
			r := runGymtrace(t, args...)
			if !tt.abort {
				require.NoError(t, r.err, r.stderr)
				return
			}
			require.Error(t, r.err)
			assert.Equal(t, 1, r.code)
			want := "1/2 finalized rollouts (50.0%) are masked, exceeding token_id_capture.max_mask_fraction=0.4. Mask reasons: {'capture_incomplete': 1}. Aborting instead of collecting mostly token-less data."
			if tt.name == "all rows over" {
				want = "2/3 finalized rollouts (66.7%) are masked, exceeding token_id_capture.max_mask_fraction=0.6. Mask reasons: {'capture_incomplete': 1, 'capture contains no token records': 1}. Aborting instead of collecting mostly token-less data."
			}
			assert.Contains(t, r.err.Error(), want)
			assert.Contains(t, r.err.Error(), "output "+output+" not written")
			_, err := os.Stat(output)
			assert.ErrorIs(t, err, os.ErrNotExist)
			in := inspect(t, run.store, "0-0")
			assert.True(t, in.Frozen, "0-0 was finalized before the abort")
			assert.False(t, in.Retired, "nothing is retired when the output is not committed")
			assert.Len(t, in.Entries, 2)
		})
	}
}

// TestAttachTokenStrictAndFlags: --strict counts masked rollouts; bad flag values are usage errors.
func TestAttachTokenStrictAndFlags(t *testing.T) {
	run := newTokenRun(t)
	output := filepath.Join(t.TempDir(), "out.jsonl")
	r := runGymtrace(t, "attach", "--capture-dir", run.dir, "--input", run.input, "--output", output, "--strict")
	require.Error(t, r.err)
	assert.Contains(t, r.err.Error(), "attach --strict: 1 rollout with masked token captures (listed above)")

	for _, tt := range []struct{ flag, value, want string }{
		{"--max-mask-fraction", "1.5", "want a fraction from 0 to 1"},
		{"--mask-fraction-min-samples", "0", "want at least 1"},
		{"--token-builder", "other", `--token-builder "other": want prefix_merging or per_request`},
		{"--token-dir", "rel", "must be an absolute path"},
	} {
		r := runGymtrace(t, "attach", "--capture-dir", run.dir, "--input", run.input, "--output", output, tt.flag, tt.value)
		require.Error(t, r.err, tt.flag)
		assert.Equal(t, 2, r.code, tt.flag)
		assert.Contains(t, r.err.Error(), tt.want)
	}

	r = runGymtrace(t, "attach", "--capture-dir", run.dir, "--input", run.input, "--output", output,
		"--token-dir", filepath.Join(t.TempDir(), "missing"))
	require.Error(t, r.err, "a mistyped token directory would finalize no token capture")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.err.Error(), "missing: directory does not exist")
	run = newTokenRun(t)
	r = runGymtrace(t, "attach", "--capture-dir", run.dir, "--input", run.input, "--output", output, "--token-builder", "per_request")
	require.NoError(t, r.err, r.stderr)
	assert.Contains(t, r.stderr, "rollout 0-0 token capture masked (mask_sample): per_request returns multiple trajectories")
	assert.False(t, inspect(t, run.store, "0-0").Retired)
}
