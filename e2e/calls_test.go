package e2e

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// modelCallRecordKeys is SPEC.md §3.2's field order without the payload keys, as
// `gymtrace calls` prints it without --payloads.
var modelCallRecordKeys = []string{
	"model_call_id", "response_id", "call_index", "model_ref", "model", "dialect", "status_code",
	"response_status", "finish_reason", "started_at", "completed_at", "tokens_in", "tokens_out",
	"tokens_reasoning", "tokens_total", "tool_calls", "reasoning_content", "cache_hit", "cached_tokens",
	"cache_creation_tokens", "error_category", "latency_total_ms", "latency_ttft_ms",
}

// checkCallsCommand runs `gymtrace calls --capture-dir DIR ID` and checks its ModelCallRecords
// against what the clients received (want) and the raw records: one line per call, SPEC §3.2
// order, call_index = line index, derived fields as the client saw them.
func checkCallsCommand(t *testing.T, p *proxyProc, id string, want []callResult, records []record) {
	t.Helper()
	cmd := exec.Command(gymtraceBinary(t), "calls", "--capture-dir", p.CaptureDir, id)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "gymtrace calls: %s", stderr.String())
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, lines, len(want), "one ModelCallRecord per call:\n%s", out)
	for i, line := range lines {
		assert.Equal(t, modelCallRecordKeys, objectKeys(t, line), "calls line %d: keys in SPEC §3.2 order", i)
		got, ok := decodeJSON(t, line).(map[string]any)
		require.True(t, ok)
		w, raw := want[i], records[i].Fields
		assert.Equal(t, raw["model_call_id"], got["model_call_id"])
		assert.Equal(t, w.ResponseID, got["response_id"])
		assert.Equal(t, json.Number(strconv.Itoa(i)), got["call_index"])
		assert.Equal(t, raw["model_ref"], got["model_ref"])
		assert.Equal(t, w.Model, got["model"])
		assert.Equal(t, w.Dialect, got["dialect"])
		assert.Equal(t, json.Number("200"), got["status_code"])
		assert.Equal(t, jsonOrNil(w.FinishReason), got["finish_reason"])
		assert.Equal(t, raw["started_at"], got["started_at"])
		assert.Equal(t, raw["completed_at"], got["completed_at"])
		assert.Equal(t, jsonOrNil(w.TokensIn), got["tokens_in"])
		assert.Equal(t, jsonOrNil(w.TokensOut), got["tokens_out"])
		assert.Equal(t, jsonOrNil(w.TokensReasoning), got["tokens_reasoning"])
		assert.Equal(t, jsonOrNil(w.TokensTotal), got["tokens_total"])
		assert.Equal(t, decodeJSON(t, string(mustMarshal(t, w.ToolCalls))), got["tool_calls"])
		assert.Equal(t, jsonOrNil(w.Reasoning), got["reasoning_content"])
		assert.Equal(t, jsonOrNil(w.CachedTokens), got["cached_tokens"])
		if w.CachedTokens != nil {
			assert.Equal(t, *w.CachedTokens > 0, got["cache_hit"])
		}
		assert.Equal(t, jsonOrNil(w.CacheCreation), got["cache_creation_tokens"])
		assert.Nil(t, got["error_category"])
		assert.Equal(t, raw["latency_ms"], got["latency_total_ms"])
		assert.Equal(t, raw["latency_ttft_ms"], got["latency_ttft_ms"])
	}
}

// jsonOrNil is *p as a decoded JSON value (json.Number for integers), or nil.
func jsonOrNil[T any](p *T) any {
	if p == nil {
		return nil
	}
	b, err := json.Marshal(*p)
	if err != nil {
		return err.Error()
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err.Error()
	}
	return v
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
