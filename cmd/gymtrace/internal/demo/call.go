package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// ModelCallIDHeader is the response header in which the capture proxy returns the model_call_id of
// a captured call (SPEC §3.1 #1); the agent keeps it so each call can be matched to its record.
const ModelCallIDHeader = "X-Gymtrace-Model-Call-Id"

// Call is one model call as the agent saw it, from the client side of the proxy: what it sent and
// what it read back, before any capture logic looked at it. Tests compare it with the capture
// record of the same ModelCallID.
type Call struct {
	Dialect      string     // "responses", "chat" or "messages" (SPEC §1.6)
	Stream       bool       // the request asked for a server-sent event stream
	StatusCode   int        // HTTP status of the answer
	ModelCallID  string     // the ModelCallIDHeader of the answer ("" when absent)
	ResponseID   string     // the answer's id (Responses "id", Chat "id", Anthropic "id")
	Model        string     // the answer's "model"
	FinishReason string     // Responses incomplete reason ("" when complete), Chat finish_reason, Anthropic stop_reason
	Text         string     // the visible text of the answer (Anthropic: every text block, joined)
	Reasoning    string     // reasoning summary / reasoning_content / thinking text ("" when none)
	ToolCalls    []ToolCall // the tool calls of the answer, in order
	Usage        Usage      // token usage as the answer reported it
	LatencyMS    float64    // client-side latency: request sent until the body was read to its end, in milliseconds
	Compaction   bool       // the call summarized the history for a context compaction
}

// ToolCall is one tool call of an answer as the agent read it.
type ToolCall struct {
	ID        string // call_id (Responses), id (Chat tool_calls, Anthropic tool_use)
	Name      string // the function / tool name
	Arguments string // the arguments as JSON text (Anthropic: the tool_use input)
}

// Usage is an answer's token usage in the dialect's own terms, as the provider reported it.
type Usage struct {
	// InputTokens is Responses input_tokens / Chat prompt_tokens (cached tokens included) or
	// Anthropic input_tokens (uncached tokens only).
	InputTokens int64
	// OutputTokens is output_tokens / completion_tokens, reasoning included.
	OutputTokens int64
	// ReasoningTokens is output_tokens_details / completion_tokens_details reasoning_tokens; nil for
	// Anthropic, which does not report it.
	ReasoningTokens *int64
	// CachedTokens is input_tokens_details / prompt_tokens_details cached_tokens, or Anthropic
	// cache_read_input_tokens.
	CachedTokens int64
	// CacheCreationTokens is Anthropic cache_creation_input_tokens; nil for OpenAI dialects.
	CacheCreationTokens *int64
}

// Fake credentials the agent sends, as a real client sends its API key. The proxy forwards them to
// the upstream and never captures them (DESIGN.md "Security"); the demo's test checks that.
const (
	demoOpenAIKey    = "sk-gymtrace-demo-not-a-real-key"
	demoAnthropicKey = "sk-ant-gymtrace-demo-not-a-real-key"
)

// maxAnswerBytes bounds a JSON answer read by the agent, in bytes.
const maxAnswerBytes = 32 << 20

// post sends one model call: body as JSON to url with the dialect's headers, and hands the answer
// to read when its status is 200. Any other status is an error naming the status and the start of
// the body. The answer body is always read to its end and closed. c's StatusCode, ModelCallID and
// LatencyMS are filled in.
func post(ctx context.Context, client *http.Client, url string, body any, c *Call, read func(io.Reader) error) error {
	payload, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	if c.Dialect == dialectMessages {
		req.Header.Set("X-Api-Key", demoAnthropicKey)
		req.Header.Set("Anthropic-Version", "2023-06-01")
	} else {
		req.Header.Set("Authorization", "Bearer "+demoOpenAIKey)
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	c.StatusCode = resp.StatusCode
	c.ModelCallID = resp.Header.Get(ModelCallIDHeader)
	if resp.StatusCode != http.StatusOK {
		head, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		_, _ = io.Copy(io.Discard, resp.Body)
		return fmt.Errorf("POST %s: status %d: %s", url, resp.StatusCode, strings.TrimSpace(string(head)))
	}
	if c.Stream && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return fmt.Errorf("POST %s: streamed answer has Content-Type %q, want text/event-stream", url, resp.Header.Get("Content-Type"))
	}
	var rerr error
	if c.Stream {
		rerr = read(resp.Body)
	} else {
		rerr = read(io.LimitReader(resp.Body, maxAnswerBytes))
	}
	if rerr != nil {
		return fmt.Errorf("POST %s: read answer: %w", url, rerr)
	}
	// Read the body to its end, as a client that closes cleanly does: for a stream this is after
	// the terminal event, and only then is the call over.
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return fmt.Errorf("POST %s: read answer: %w", url, err)
	}
	c.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
	return nil
}

// readJSON decodes a whole JSON answer into v.
func readJSON(r io.Reader, v any) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode answer: %w", err)
	}
	return nil
}

// int64Ptr returns a pointer to a copy of n.
func int64Ptr(n int64) *int64 { return &n }
