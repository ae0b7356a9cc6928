package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
)

// decodeLine decodes one JSON object line keeping number text (json.Number).
func decodeLine(t *testing.T, line []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var m map[string]any
	require.NoError(t, dec.Decode(&m), "line %s", line)
	return m
}

// readJSONL returns the lines of a JSONL file, each decoded.
func readJSONL(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.HasSuffix(b, []byte("\n")), "%s ends with a newline", path)
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		out = append(out, decodeLine(t, sc.Bytes()))
	}
	require.NoError(t, sc.Err())
	return out
}

func num(t *testing.T, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	require.True(t, ok, "%v is a number", v)
	i, err := n.Int64()
	require.NoError(t, err)
	return i
}

func ptrStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// wantTokens is the record's token fields derived from what the agent saw, by SPEC §3.5.
type wantTokens struct {
	in, out, total int64
	reasoning      *int64
	cached         int64
	cacheCreation  *int64
	cacheHit       bool
}

func expectedTokens(c Call) wantTokens {
	u := c.Usage
	w := wantTokens{in: u.InputTokens, out: u.OutputTokens, reasoning: u.ReasoningTokens, cached: u.CachedTokens, cacheCreation: u.CacheCreationTokens}
	if c.Dialect == dialectMessages {
		// Anthropic's input_tokens excludes cache reads and writes: the record folds them in.
		w.in += u.CachedTokens
		if u.CacheCreationTokens != nil {
			w.in += *u.CacheCreationTokens
		}
	}
	w.total = w.in + w.out
	w.cacheHit = w.cached > 0
	return w
}

// checkRecordMatchesCall compares a capture record (and its raw line) with the call the agent saw.
func checkRecordMatchesCall(t *testing.T, rec capture.ModelCallRecord, raw map[string]any, c Call, index int) {
	t.Helper()
	require.NotNil(t, rec.ModelCallID)
	assert.Equal(t, c.ModelCallID, *rec.ModelCallID, "the proxy's header names the record")
	assert.Equal(t, index, rec.CallIndex, "records are in call order")
	require.NotNil(t, rec.Dialect)
	assert.Equal(t, c.Dialect, *rec.Dialect)
	assert.Equal(t, &capture.ModelRef{Type: capture.ModelRefType, Name: ModelServerName}, rec.ModelRef)
	require.NotNil(t, rec.StatusCode)
	assert.Equal(t, c.StatusCode, *rec.StatusCode)
	assert.Nil(t, rec.ErrorCategory)
	assert.Equal(t, ptrStr(c.ResponseID), rec.ResponseID)
	assert.Equal(t, ptrStr(c.Model), rec.Model)
	assert.Equal(t, ptrStr(c.FinishReason), rec.FinishReason)
	assert.Equal(t, ptrStr(c.Reasoning), rec.ReasoningContent)

	w := expectedTokens(c)
	assert.Equal(t, &w.in, rec.TokensIn, "tokens_in")
	assert.Equal(t, &w.out, rec.TokensOut, "tokens_out")
	assert.Equal(t, &w.total, rec.TokensTotal, "tokens_total")
	assert.Equal(t, w.reasoning, rec.TokensReasoning, "tokens_reasoning")
	assert.Equal(t, &w.cached, rec.CachedTokens, "cached_tokens")
	assert.Equal(t, w.cacheCreation, rec.CacheCreationTokens, "cache_creation_tokens")
	assert.Equal(t, &w.cacheHit, rec.CacheHit, "cache_hit")

	require.Len(t, rec.ToolCalls, len(c.ToolCalls))
	for i, tc := range c.ToolCalls {
		id, _ := json.Marshal(tc.ID)
		name, _ := json.Marshal(tc.Name)
		assert.JSONEq(t, string(id), string(rec.ToolCalls[i].CallID))
		assert.JSONEq(t, string(name), string(rec.ToolCalls[i].Name))
		assert.JSONEq(t, tc.Arguments, string(rec.ToolCalls[i].Arguments))
	}

	require.NotNil(t, rec.LatencyTotalMS)
	require.NotNil(t, rec.LatencyTTFTMS)
	assert.LessOrEqual(t, *rec.LatencyTTFTMS, *rec.LatencyTotalMS)
	assert.LessOrEqual(t, *rec.LatencyTotalMS, c.LatencyMS+0.01, "the proxy's latency lies inside the client's")

	// The raw line: the request as sent (stream flag), and the stream's full SSE text kept.
	req, ok := raw["request"].(map[string]any)
	require.True(t, ok, "request is an object")
	assert.Equal(t, c.Stream, req["stream"] == true)
	_, hasRaw := raw["response_raw"]
	assert.Equal(t, c.Stream, hasRaw, "response_raw is kept for streams only")
	assert.IsType(t, map[string]any{}, raw["response"])
	assert.Regexp(t, `^[0-9a-f]{32}$`, raw["trace_id"])
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	res, err := Run(t.Context(), Config{Dir: dir, Rollouts: 3, Out: &out, Err: &errOut})
	require.NoError(t, err, "stderr: %s", errOut.String())
	assert.Empty(t, errOut.String(), "no warnings")

	assert.Equal(t, dir, res.Dir)
	assert.Equal(t, filepath.Join(dir, "captures"), res.CaptureDir)
	assert.Equal(t, filepath.Join(dir, "rollouts.jsonl"), res.RolloutsPath)
	assert.Equal(t, filepath.Join(dir, "rollouts.attached.jsonl"), res.AttachedPath)
	require.Len(t, res.Rollouts, 3)

	// One capture file per rollout, nothing else (no incomplete marker).
	entries, err := os.ReadDir(res.CaptureDir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{
		"0-0.capture.jsonl", "0-0.observations.jsonl", "0-1.capture.jsonl", "0-1.observations.jsonl",
		"1-0.capture.jsonl", "1-0.observations.jsonl",
	}, names, "a capture file and an observations file per rollout")
	assert.Equal(t, ObservationCounts{Written: 3 * 4}, res.Observations, "four observation spans per rollout written, none lost")

	store, err := capture.NewStore(res.CaptureDir)
	require.NoError(t, err)
	seen := map[string]bool{} // dialect/stream pairs
	for k, r := range res.Rollouts {
		t.Run(r.ID, func(t *testing.T) {
			assert.Equal(t, []string{"0-0", "0-1", "1-0"}[k], r.ID)
			assert.Equal(t, k/2, r.TaskIndex)
			assert.Equal(t, k%2, r.RolloutIndex)
			assert.Equal(t, dialects[k%3], r.Dialect)
			assert.Equal(t, 1.0, r.Reward, "answer %q", r.Answer)
			assert.Contains(t, r.Answer, newTask(k/2).answer())

			require.Len(t, r.Calls, 3, "a tool call, the compaction's summary, then the final answer")
			assert.NotEmpty(t, r.Calls[0].ToolCalls)
			assert.Empty(t, r.Calls[1].ToolCalls)
			assert.Empty(t, r.Calls[2].ToolCalls)
			assert.Equal(t, []bool{false, true, false}, []bool{r.Calls[0].Compaction, r.Calls[1].Compaction, r.Calls[2].Compaction})
			assert.Contains(t, r.Calls[1].Text, newTask(k/2).answer(), "the summary keeps the tool's result")
			assert.NotEqual(t, r.Calls[0].Stream, r.Calls[1].Stream, "calls alternate streamed and not")
			assert.NotEqual(t, r.Calls[1].Stream, r.Calls[2].Stream, "calls alternate streamed and not")
			for _, c := range r.Calls {
				seen[c.Dialect+"/"+fmt.Sprint(c.Stream)] = true
			}

			recs, invalid, err := store.ReadAvailableModelCallRecords(r.ID)
			require.NoError(t, err)
			assert.Zero(t, invalid, "every line is a valid record")
			incomplete, err := store.IsIncomplete(r.ID)
			require.NoError(t, err)
			assert.False(t, incomplete)
			strict, err := store.ReadModelCallRecords(r.ID)
			require.NoError(t, err, "the strict reader accepts the file too")
			assert.Len(t, strict, len(recs))
			lines, invalidLines, err := store.ReadAvailable(r.ID)
			require.NoError(t, err)
			assert.Zero(t, invalidLines)
			require.Len(t, recs, len(r.Calls))
			require.Len(t, lines, len(r.Calls))
			for i, c := range r.Calls {
				checkRecordMatchesCall(t, recs[i], decodeLine(t, lines[i].Line), c, i)
			}

			path, err := store.CapturePath(r.ID)
			require.NoError(t, err)
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.NotContains(t, string(b), demoOpenAIKey, "API keys are never captured")
			assert.NotContains(t, string(b), demoAnthropicKey, "API keys are never captured")

			assert.Equal(t, CaptureSummary{
				Calls: 3, Dialects: []string{r.Dialect}, Metrics: capture.Aggregate(recs),
			}, r.Capture)
		})
	}
	assert.Len(t, seen, 6, "every dialect streamed and not streamed: %v", seen)

	t.Run("rollouts file", func(t *testing.T) {
		rows := readJSONL(t, res.RolloutsPath)
		require.Len(t, rows, 3)
		for k, row := range rows {
			r := res.Rollouts[k]
			assert.Equal(t, int64(r.TaskIndex), num(t, row["_ng_task_index"]))
			assert.Equal(t, int64(r.RolloutIndex), num(t, row["_ng_rollout_index"]))
			assert.Equal(t, r.Answer, row["response"])
			assert.Equal(t, r.Prompt, row["prompt"])
			assert.Equal(t, json.Number("1.0"), row["reward"])
		}
	})

	t.Run("attached file", func(t *testing.T) {
		assert.Equal(t, 3, res.Attach.Attached)
		assert.Empty(t, res.Attach.Rollouts, "no capture gaps")
		rows := readJSONL(t, res.AttachedPath)
		require.Len(t, rows, 3)
		for k, row := range rows {
			r := res.Rollouts[k]
			att, ok := row["ng_model_call_capture"].(map[string]any)
			require.True(t, ok, "row %d has ng_model_call_capture", k)
			assert.Equal(t, r.ID, att["rollout_id"])
			m, ok := att["metrics"].(map[string]any)
			require.True(t, ok)
			assert.Equal(t, int64(len(r.Calls)), num(t, m["num_calls"]))
			assert.Equal(t, *r.Capture.Metrics.TokensIn, num(t, m["tokens_in"]))
			calls, ok := att["calls"].([]any)
			require.True(t, ok)
			require.Len(t, calls, len(r.Calls))
			for i, c := range calls {
				assert.Equal(t, r.Calls[i].ModelCallID, c.(map[string]any)["model_call_id"])
				assert.NotContains(t, c, "request", "the payloads moved into ng_trajectory")
			}
			assert.NotContains(t, att, "gaps")
			tr, ok := row["ng_trajectory"].(map[string]any)
			require.True(t, ok, "row %d has ng_trajectory", k)
			assert.Equal(t, r.ID, tr["rollout_id"])
			mcs, ok := tr["model_calls"].([]any)
			require.True(t, ok)
			require.Len(t, mcs, len(r.Calls))
			for i, mc := range mcs {
				assert.Equal(t, r.Calls[i].ModelCallID, mc.(map[string]any)["model_call_id"])
				assert.NotNil(t, mc.(map[string]any)["request"], "the captured request")
			}
			assert.Equal(t, r.Answer, row["response"], "the rollout's own keys are kept")
		}
		for k, r := range res.Rollouts {
			t.Run("observations "+r.ID, func(t *testing.T) {
				checkAttachedObservations(t, store, res.AttachedPath, k, r)
			})
		}
	})

	t.Run("report", func(t *testing.T) {
		s := out.String()
		for _, want := range []string{res.ModelURL, res.ProxyURL, res.CaptureDir, res.RolloutsPath, res.AttachedPath,
			"gymtrace calls --capture-dir " + res.CaptureDir + " 0-0"} {
			assert.Contains(t, s, want)
		}
		for _, r := range res.Rollouts {
			assert.Regexp(t, `(?m)^`+r.ID+`\s+3\s+`+r.Dialect+`\s+`+optInt(r.Capture.Metrics.TokensIn)+`\s`, s)
			// ROLLOUT INVOCATIONS TOOL CALLS TOOL MS SANDBOXES SANDBOX CPU S PEAK MIB COMPACTIONS REFS RESOLVED GAPS
			assert.Regexp(t, `(?m)^`+r.ID+`\s+1\s+1\s+[0-9]+\.[0-9]\s+1\s+[0-9]+\.[0-9]{3}\s+([0-9]+\.[0-9]{2}|-)\s+1\s+6\s+6\s+0$`, s)
		}
		assert.Regexp(t, `(?m)^total\s+9\s`, s)
		assert.Contains(t, s, "every model-call reference resolved to a captured call's model_call_id; no ownership or reference gaps")
		assert.NotContains(t, s, "observation problems")
	})
}

func TestRunAgainReplacesCaptures(t *testing.T) {
	dir := t.TempDir()
	first, err := Run(t.Context(), Config{Dir: dir, Rollouts: 3})
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(first.CaptureDir, "1-0"+capture.CaptureFileSuffix))
	res, err := Run(t.Context(), Config{Dir: dir, Rollouts: 2})
	require.NoError(t, err)
	store, err := capture.NewStore(res.CaptureDir)
	require.NoError(t, err)
	for _, r := range res.Rollouts {
		recs, invalid, err := store.ReadAvailableModelCallRecords(r.ID)
		require.NoError(t, err)
		assert.Zero(t, invalid)
		assert.Len(t, recs, len(r.Calls), "the pre-dispatch clear removed the first run's calls of %s", r.ID)
		lines, damaged, exists, err := agentobs.ReadObservations(store, r.ID)
		require.NoError(t, err)
		assert.True(t, exists)
		assert.Zero(t, damaged)
		assert.Len(t, lines, 4, "the pre-dispatch clear removed the first run's observations of %s", r.ID)
		assert.Empty(t, r.Observations.Gaps, "the second run joins cleanly")
		assert.Equal(t, r.Observations.References, r.Observations.Resolved)
	}
	assert.Len(t, readJSONL(t, res.AttachedPath), 2)
	assert.NoFileExists(t, filepath.Join(res.CaptureDir, "1-0"+capture.CaptureFileSuffix), "the first run's third rollout was cleared (from a fresh-user trial)")
	assert.NoFileExists(t, filepath.Join(res.CaptureDir, "1-0"+capture.ObservationsFileSuffix))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasSuffix(e.Name(), ".tmp"), "no temporary file left: %s", e.Name())
	}
}

func TestRunDefaultDirIsKept(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var out bytes.Buffer
	res, err := Run(t.Context(), Config{Rollouts: 1, Out: &out})
	require.NoError(t, err)
	assert.Equal(t, tmp, filepath.Dir(res.Dir))
	assert.True(t, strings.HasPrefix(filepath.Base(res.Dir), "gymtrace-demo-"), res.Dir)
	assert.FileExists(t, filepath.Join(res.Dir, "captures", "0-0.capture.jsonl"))
	assert.FileExists(t, res.AttachedPath)
	assert.Contains(t, out.String(), res.Dir)
	require.Len(t, res.Rollouts, 1)
	assert.Equal(t, dialectResponses, res.Rollouts[0].Dialect)
}

func TestRunConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"negative rollouts", Config{Rollouts: -1}, "rollouts -1: must be between 1 and 1000"},
		{"too many rollouts", Config{Rollouts: 1001}, "rollouts 1001: must be between 1 and 1000"},
		{"relative dir", Config{Dir: "demo-out", Rollouts: 1}, `dir "demo-out": must be an absolute path`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			_, err := Run(t.Context(), tc.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NoDirExists(t, "demo-out")
		})
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res, err := Run(ctx, Config{Dir: t.TempDir(), Rollouts: 5})
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.NoFileExists(t, res.AttachedPath, "nothing is attached after a failed run")
}

func TestPlanRolloutsCoversEveryDialectBothWays(t *testing.T) {
	plan := planRollouts(6)
	ids := make([]string, len(plan))
	pairs := map[string]bool{}
	for i, p := range plan {
		ids[i] = fmt.Sprintf("%d-%d", p.taskIndex, p.rolloutIndex)
		pairs[fmt.Sprint(p.dialect, p.streamFirst)] = true
	}
	assert.Equal(t, []string{"0-0", "0-1", "1-0", "1-1", "2-0", "2-1"}, ids)
	assert.Len(t, pairs, 6)
	assert.True(t, slices.IsSortedFunc(plan, func(a, b plannedRollout) int { return a.k - b.k }))
}
