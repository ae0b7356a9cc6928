package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// record is one line of a capture file (SPEC.md §3.1), with its key order.
type record struct {
	Line   string
	Keys   []string
	Fields map[string]any // numbers as json.Number
}

// readRecords reads every line of a capture file; each must be one JSON object.
func readRecords(t *testing.T, path string) []record {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	for sc.Scan() {
		line := sc.Text()
		fields, ok := decodeJSON(t, line).(map[string]any)
		require.True(t, ok, "a capture line is a JSON object: %s", line)
		out = append(out, record{Line: line, Keys: objectKeys(t, line), Fields: fields})
	}
	require.NoError(t, sc.Err())
	return out
}

// objectKeys returns the top-level keys of a JSON object in document order.
func objectKeys(t *testing.T, s string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return keys
}

var (
	hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)
	hex16 = regexp.MustCompile(`^[0-9a-f]{16}$`)
)

// checkRecord checks one capture line against the call the client made (SPEC.md §3.1 keys and
// order, §0 additions trace_id/span_id) and the ModelCallRecord fields derived from it
// (§3.2, §3.5, §3.6) against what the client received.
func checkRecord(t *testing.T, rec record, want callResult, rolloutID string) {
	t.Helper()
	wantKeys := []string{"model_call_id", "dialect", "model_ref", "started_at", "completed_at", "latency_ms",
		"latency_ttft_ms", "status_code", "error_category", "request", "response"}
	if want.Stream {
		wantKeys = append(wantKeys, "response_raw") // streams keep the full SSE text (§3.1 #13)
	}
	wantKeys = append(wantKeys, "trace_id", "span_id")
	assert.Equal(t, wantKeys, rec.Keys, "record keys and order")

	f := rec.Fields
	assert.Regexp(t, hex32, f["model_call_id"])
	assert.Equal(t, want.Dialect, f["dialect"])
	assert.Equal(t, map[string]any{"type": "responses_api_models", "name": modelServerName}, f["model_ref"])
	started, completed := number(t, f["started_at"]), number(t, f["completed_at"])
	assert.Greater(t, started, 1.7e9, "started_at is Unix seconds")
	assert.LessOrEqual(t, started, completed)
	assert.GreaterOrEqual(t, number(t, f["latency_ms"]), 0.0)
	assert.GreaterOrEqual(t, number(t, f["latency_ttft_ms"]), 0.0, "a body was received")
	assert.LessOrEqual(t, number(t, f["latency_ttft_ms"]), number(t, f["latency_ms"]))
	assert.Equal(t, json.Number("200"), f["status_code"])
	assert.Nil(t, f["error_category"])
	assert.Equal(t, rolloutTraceID(rolloutID), f["trace_id"], "trace id of the rollout")
	assert.Regexp(t, hex16, f["span_id"])
	assert.NotEqual(t, "0000000000000000", f["span_id"])

	req, ok := f["request"].(map[string]any)
	require.True(t, ok, "request is the client's JSON object")
	assert.Equal(t, want.Model, req["model"])
	if want.Stream {
		assert.Equal(t, true, req["stream"])
		raw, ok := f["response_raw"].(string)
		require.True(t, ok)
		assert.True(t, strings.HasSuffix(raw, "\n\n"), "response_raw holds the whole SSE text")
	}
	resp, ok := f["response"].(map[string]any)
	require.True(t, ok, "response is an object (stored or reassembled)")
	got := deriveResult(t, want.Dialect, want.Stream, req, resp)
	assert.Equal(t, want, got, "ModelCallRecord fields derived from the capture equal what the client received")
}

// number reads a JSON number.
func number(t *testing.T, v any) float64 {
	t.Helper()
	n, ok := v.(json.Number)
	require.True(t, ok, "not a number: %#v", v)
	f, err := n.Float64()
	require.NoError(t, err)
	return f
}

// tokenCount is SPEC §3.5 tc(x): a JSON integer ≥ 0, else nil.
func tokenCount(v any) *int64 {
	n, ok := v.(json.Number)
	if !ok {
		return nil
	}
	i, err := n.Int64()
	if err != nil || i < 0 {
		return nil
	}
	return &i
}

// member returns o[k] when o is an object.
func member(o any, k string) any {
	m, _ := o.(map[string]any)
	return m[k]
}

// deriveResult computes the ModelCallRecord fields of §3.2 from a stored request/response by the
// SPEC's shape rules (§3.5 usage, §3.6 tool calls and reasoning), plus the visible text.
func deriveResult(t *testing.T, dialect string, stream bool, req, resp map[string]any) callResult {
	t.Helper()
	res := callResult{Dialect: dialect, Stream: stream, ToolCalls: []toolCall{}}
	res.ResponseID, _ = resp["id"].(string)
	if m, _ := resp["model"].(string); m != "" {
		res.Model = m
	} else {
		res.Model, _ = req["model"].(string)
	}
	// finish_reason (§3.2 #9)
	if s, ok := resp["stop_reason"].(string); ok {
		res.FinishReason = &s
	} else if choices, ok := resp["choices"].([]any); ok && len(choices) > 0 {
		if s, ok := member(choices[0], "finish_reason").(string); ok {
			res.FinishReason = &s
		}
	} else if s, ok := member(resp["incomplete_details"], "reason").(string); ok {
		res.FinishReason = &s
	}
	// usage (§3.5)
	if usage, ok := resp["usage"].(map[string]any); ok {
		in := tokenCount(usage["input_tokens"])
		if in == nil {
			in = tokenCount(usage["prompt_tokens"])
		}
		out := tokenCount(usage["output_tokens"])
		if out == nil {
			out = tokenCount(usage["completion_tokens"])
		}
		cr, cc := tokenCount(usage["cache_read_input_tokens"]), tokenCount(usage["cache_creation_input_tokens"])
		if cr != nil || cc != nil {
			var total int64
			if cr != nil {
				total += *cr
			}
			if cc != nil {
				total += *cc
			}
			if in != nil || total > 0 {
				var base int64
				if in != nil {
					base = *in
				}
				in = ptr(base + total)
			}
		}
		res.TokensIn, res.TokensOut, res.CacheCreation = in, out, cc
		res.TokensTotal = tokenCount(usage["total_tokens"])
		if res.TokensTotal == nil && in != nil && out != nil {
			res.TokensTotal = ptr(*in + *out)
		}
		for _, k := range []string{"output_tokens_details", "completion_tokens_details"} {
			if r := tokenCount(member(usage[k], "reasoning_tokens")); r != nil && res.TokensReasoning == nil {
				res.TokensReasoning = r
			}
		}
		if res.TokensReasoning == nil {
			res.TokensReasoning = tokenCount(usage["reasoning_output_tokens"])
		}
		for _, c := range []any{
			member(usage["prompt_tokens_details"], "cached_tokens"), member(usage["prompt_tokens_details"], "cached_input_tokens"),
			member(usage["input_tokens_details"], "cached_tokens"), member(usage["input_tokens_details"], "cached_input_tokens"),
			usage["cache_read_input_tokens"], usage["cached_input_tokens"],
		} {
			if n := tokenCount(c); n != nil {
				res.CachedTokens = n
				break
			}
		}
	}
	// tool calls, reasoning and text (§3.6)
	var reasoning []string
	var text strings.Builder
	args := func(x any) any {
		switch x := x.(type) {
		case map[string]any:
			return x
		case string:
			dec := json.NewDecoder(strings.NewReader(x))
			dec.UseNumber()
			var v any
			if dec.Decode(&v) != nil || dec.More() {
				return map[string]any{"_raw": x}
			}
			return v
		}
		return map[string]any{}
	}
	switch {
	case isList(resp["output"]):
		for _, item := range resp["output"].([]any) {
			switch member(item, "type") {
			case "function_call":
				id, _ := member(item, "call_id").(string)
				if id == "" {
					id, _ = member(item, "id").(string)
				}
				name, _ := member(item, "name").(string)
				res.ToolCalls = append(res.ToolCalls, toolCall{id, name, args(member(item, "arguments"))})
			case "reasoning":
				summary, _ := member(item, "summary").([]any)
				for _, s := range summary {
					if txt, ok := member(s, "text").(string); ok && txt != "" {
						reasoning = append(reasoning, txt)
					}
				}
			case "message":
				content, _ := member(item, "content").([]any)
				for _, c := range content {
					if member(c, "type") == "output_text" {
						s, _ := member(c, "text").(string)
						text.WriteString(s)
					}
				}
			}
		}
	case isList(resp["choices"]):
		for i, ch := range resp["choices"].([]any) {
			msg, ok := member(ch, "message").(map[string]any)
			if !ok {
				continue
			}
			calls, _ := msg["tool_calls"].([]any)
			for _, tc := range calls {
				id, _ := member(tc, "id").(string)
				name, _ := member(member(tc, "function"), "name").(string)
				res.ToolCalls = append(res.ToolCalls, toolCall{id, name, args(member(member(tc, "function"), "arguments"))})
			}
			r, _ := msg["reasoning_content"].(string)
			if r == "" {
				r, _ = msg["reasoning"].(string)
			}
			if r != "" {
				reasoning = append(reasoning, r)
			}
			if i == 0 {
				s, _ := msg["content"].(string)
				text.WriteString(s)
			}
		}
	case isList(resp["content"]):
		for _, b := range resp["content"].([]any) {
			switch member(b, "type") {
			case "tool_use":
				id, _ := member(b, "id").(string)
				name, _ := member(b, "name").(string)
				in := member(b, "input")
				if m, ok := in.(map[string]any); !ok || len(m) == 0 {
					in = map[string]any{}
				}
				res.ToolCalls = append(res.ToolCalls, toolCall{id, name, in})
			case "thinking", "redacted_thinking":
				if s, ok := member(b, "thinking").(string); ok {
					reasoning = append(reasoning, s)
				}
			case "text":
				s, _ := member(b, "text").(string)
				text.WriteString(s)
			}
		}
	}
	if r := strings.Join(reasoning, "\n"); r != "" {
		res.Reasoning = &r
	}
	res.Text = text.String()
	return res
}

func isList(v any) bool {
	_, ok := v.([]any)
	return ok
}
