package report

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
)

// fixtureCall describes one capture record of the fixture run.
type fixtureCall struct {
	dialect  string
	status   int    // 0: null
	category string // "": null
	response string // response JSON object text; "": null
	raw      string // response_raw; "": absent
	latency  float64
	ttft     float64 // 0: null
}

// fixture is a run with every kind of row the report shows.
type fixture struct {
	dir, rolloutsPath string
}

const t0 = 1786032154.25 // started_at of the fixture's first call

func respUsage(model string, in, out, reasoning, cached int) string {
	return fmt.Sprintf(`{"id":"resp_x","object":"response","model":%q,"status":"completed","output":[],"usage":{"input_tokens":%d,"input_tokens_details":{"cached_tokens":%d},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":%d},"total_tokens":%d}}`,
		model, in, cached, out, reasoning, in+out)
}

func chatUsage(model string, in, out int) string {
	return fmt.Sprintf(`{"id":"chatcmpl-x","object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
		model, in, out, in+out)
}

func msgUsage(model string, in, out, cacheRead, cacheWrite int) string {
	return fmt.Sprintf(`{"id":"msg_x","type":"message","role":"assistant","model":%q,"content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":%d,"cache_read_input_tokens":%d,"cache_creation_input_tokens":%d,"output_tokens":%d}}`,
		model, in, cacheRead, cacheWrite, out)
}

// writeFixture writes the fixture run: capture files, markers, a damaged line and a rollouts file.
func writeFixture(t testing.TB) fixture {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "captures")
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	calls := map[string][]fixtureCall{
		"0-0": {
			{dialect: "responses", status: 200, response: respUsage("policy-large", 1200, 340, 128, 1024), latency: 1834.5, ttft: 412.25},
			{dialect: "responses", status: 200, response: respUsage("policy-large", 1650, 95, 32, 1536), latency: 702.75, ttft: 198},
		},
		"0-1": {
			{dialect: "chat", status: 200, response: chatUsage("policy-large", 800, 120), latency: 950, ttft: 300},
			{dialect: "chat", status: 429, category: "rate_limit", response: `{"error":{"message":"slow down","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, latency: 12.5, ttft: 12},
			{dialect: "chat", status: 200, category: "stream_truncated", response: `{"id":"chatcmpl-t","object":"chat.completion","model":"policy-large","choices":[{"index":0,"message":{"role":"assistant","content":"par"},"finish_reason":null}]}`,
				raw: "data: {\"id\":\"chatcmpl-t\",\"object\":\"chat.completion.chunk\",\"model\":\"policy-large\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"},\"finish_reason\":null}]}\n\n", latency: 4021, ttft: 250},
		},
		"1-0": {
			{dialect: "messages", status: 500, category: "upstream_error", response: `{"type":"error","error":{"type":"api_error","message":"boom"}}`, latency: 88, ttft: 80},
			{dialect: "messages", category: "timeout", latency: 60000},
		},
		"1-1": {
			{dialect: "responses", status: 200, response: respUsage("policy-small", 300, 20, 0, 0), latency: 120.5, ttft: 95.5},
		},
		"9-9": {
			{dialect: "messages", status: 200, response: msgUsage("claude-like", 40, 60, 2000, 300), latency: 2500, ttft: 640},
		},
		"task-000123-rollout-0007-attempt-2": {
			{dialect: "chat", status: 200, response: chatUsage("policy-large", 64, 8), latency: 333, ttft: 111},
		},
		"uncorrelated": {
			{dialect: "chat", status: 200, response: chatUsage("policy-large", 10, 2), latency: 50, ttft: 40},
		},
	}
	ids := make([]string, 0, len(calls))
	for id := range calls {
		ids = append(ids, id)
	}
	start := t0
	n := 0
	for _, id := range sortedKeys(calls) {
		for _, c := range calls[id] {
			n++
			ex := capture.Exchange{
				ModelCallID:   fmt.Sprintf("%032x", n),
				Dialect:       c.dialect,
				ModelRef:      &capture.ModelRef{Type: capture.ModelRefType, Name: "policy_model"},
				StartedAt:     start,
				CompletedAt:   start + c.latency/1000,
				LatencyMS:     c.latency,
				ErrorCategory: c.category,
				Request:       json.RawMessage(`{"model":"policy-large","input":"What is 6 times 7?"}`),
			}
			start += 0.5
			if c.status != 0 {
				s := c.status
				ex.StatusCode = &s
			}
			if c.ttft != 0 {
				v := c.ttft
				ex.LatencyTTFTMS = &v
			}
			if c.response != "" {
				ex.Response = json.RawMessage(c.response)
			}
			if c.raw != "" {
				r := c.raw
				ex.ResponseRaw = &r
			}
			require.NoError(t, ex.Validate())
			require.NoError(t, store.Append(context.Background(), id, ex.AppendJSON(nil)))
		}
	}
	// 1-1: a damaged line after its call, and the incomplete marker.
	p, err := store.CapturePath("1-1")
	require.NoError(t, err)
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("{\"model_call_id\": torn\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, store.MarkIncomplete("1-1"))
	// 3-0: only the marker.
	require.NoError(t, store.MarkIncomplete("3-0"))

	rows := []string{
		`{"_ng_task_index":0,"_ng_rollout_index":0,"reward":1.0}`,
		`{"_ng_task_index":0,"_ng_rollout_index":1,"reward":0.0}`,
		`{"_ng_task_index":1,"_ng_rollout_index":0,"reward":0.0}`,
		`{"_ng_task_index":1,"_ng_rollout_index":1,"reward":1.0}`,
		`{"_ng_task_index":2,"_ng_rollout_index":0,"reward":0.0}`,
		`{"_ng_rollout_id":"bad id"}`,
		`{"_ng_task_index":3,"_ng_rollout_index":0,"reward":0.0}`,
		`{"_ng_rollout_id":"task-000123-rollout-0007-attempt-2"}`,
	}
	rp := filepath.Join(root, "rollouts.jsonl")
	require.NoError(t, os.WriteFile(rp, []byte(strings.Join(rows, "\n")+"\n"), 0o600))
	return fixture{dir: dir, rolloutsPath: rp}
}

func sortedKeys(m map[string][]fixtureCall) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if keys[j] < keys[i] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	return keys
}

// buildFixture builds the fixture's report with its rollouts file.
func buildFixture(t testing.TB, fx fixture, opts Options) *Report {
	t.Helper()
	f, err := os.Open(fx.rolloutsPath)
	require.NoError(t, err)
	defer f.Close()
	opts.Rollouts = f
	opts.RolloutsName = "rollouts.jsonl"
	if opts.UncorrelatedRolloutID == "" {
		opts.UncorrelatedRolloutID = "uncorrelated"
	}
	rep, err := Build(context.Background(), fx.dir, opts)
	require.NoError(t, err)
	return rep
}
