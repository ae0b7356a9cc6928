package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
	"github.com/gymtrace/gymtrace/proxy"
	"github.com/gymtrace/gymtrace/rollout"
	"github.com/gymtrace/gymtrace/semconv"
	"github.com/gymtrace/gymtrace/tokens"
)

// Issue 15 part 5: training token capture end to end. The real `gymtrace proxy --token-source vllm`
// in front of the fake vLLM engine, the official openai-go client under
// /ng-rollout/<id>/training-token-capture/v1, and the real `gymtrace attach` finalizing the rollout
// line (docs/TOKENS.md §0 T1–T7, §1.3, §2.2.3, §3.4–§3.7).

// tokenModel is the model the agent asks for (the fake vLLM serves any name).
const tokenModel = "Qwen/Qwen3-4B"

// tokenTurn is one model call of a token-captured conversation.
type tokenTurn struct {
	user      string // the user message this turn adds ("" after a tool result: none)
	stream    bool
	tools     bool                   // offer the get_weather tool
	reasoning bool                   // reasoning_effort low: the answer reasons (chat only)
	opts      []option.RequestOption // further request members, e.g. add_special_tokens
}

// tokenBaseURL is what Gym's base_url_for_run gives an agent with token_id_capture enabled:
// base + "/ng-rollout/<id>/training-token-capture" (SPEC.md §1.4).
func tokenBaseURL(t *testing.T, base, id string) string {
	t.Helper()
	c, err := rollout.CorrelationFromGlobalConfig([]byte(`{"token_id_capture": {"enabled": true}}`), true)
	require.NoError(t, err)
	runBody, err := json.Marshal(map[string]string{rollout.IDKey: id})
	require.NoError(t, err)
	u, err := c.BaseURLForRun(base, runBody)
	require.NoError(t, err)
	require.Equal(t, strings.TrimRight(base, "/")+"/ng-rollout/"+id+"/"+rollout.TokenCaptureSegment, u)
	return u
}

// recordingClient is an openai-go client at base + "/v1/" (no retries) whose exchanges rec records.
func recordingClient(t *testing.T, base string) (openai.Client, *recorder) {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	rec := &recorder{base: tr, wholeStreams: true}
	return openai.NewClient(
		option.WithBaseURL(base+"/v1/"),
		option.WithAPIKey("sk-e2e-test"),
		option.WithHTTPClient(&http.Client{Transport: rec, Timeout: time.Minute}),
		option.WithMaxRetries(0),
	), rec
}

var chatTools = []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
	Name:        "get_weather",
	Description: openai.String("Current weather in a city"),
	Parameters:  weatherParameters,
})}

// runChatTurns plays turns as an agent does: turn k+1's messages are turn k's, then the answer
// as the client received it (and, after a tool call, the tool's result), then its own user
// message. after runs after every call.
func runChatTurns(t *testing.T, c openai.Client, turns []tokenTurn, after func(k int)) {
	t.Helper()
	var messages []openai.ChatCompletionMessageParamUnion
	for k, turn := range turns {
		if turn.user != "" {
			messages = append(messages, openai.UserMessage(turn.user))
		}
		params := openai.ChatCompletionNewParams{Model: tokenModel, Messages: messages}
		if turn.tools {
			params.Tools = chatTools
		}
		if turn.reasoning {
			params.ReasoningEffort = shared.ReasoningEffortLow
		}
		var msg openai.ChatCompletionMessage
		if turn.stream {
			params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
			s := c.Chat.Completions.NewStreaming(ctx(t), params, turn.opts...)
			acc := openai.ChatCompletionAccumulator{}
			for s.Next() {
				require.True(t, acc.AddChunk(s.Current()), "turn %d: the accumulator accepts every chunk", k)
			}
			require.NoError(t, s.Err(), "turn %d", k)
			require.NoError(t, s.Close())
			require.Len(t, acc.Choices, 1, "turn %d", k)
			msg = acc.Choices[0].Message
		} else {
			r, err := c.Chat.Completions.New(ctx(t), params, turn.opts...)
			require.NoError(t, err, "turn %d", k)
			require.Len(t, r.Choices, 1, "turn %d", k)
			msg = r.Choices[0].Message
		}
		after(k)
		messages = append(messages, msg.ToParam())
		for _, call := range msg.ToolCalls {
			require.True(t, json.Valid([]byte(call.Function.Arguments)), "turn %d: tool arguments are JSON", k)
			messages = append(messages, openai.ToolMessage("12 C and sunny", call.ID))
		}
	}
}

// runResponsesTurns plays turns on the Responses API: turn k+1's input is turn k's, then the
// answer's text as an assistant message, then its own user message. A turn with tools offers
// get_weather; an answer without text must call it (and ends the conversation's use of it: the
// turn's call is not sent back).
func runResponsesTurns(t *testing.T, c openai.Client, turns []tokenTurn, after func(k int)) {
	t.Helper()
	var input []responses.ResponseInputItemUnionParam
	for k, turn := range turns {
		input = append(input, responses.ResponseInputItemParamOfMessage(turn.user, responses.EasyInputMessageRoleUser))
		params := responses.ResponseNewParams{
			Model: tokenModel,
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input},
		}
		if turn.tools {
			params.Tools = []responses.ToolUnionParam{responses.ToolParamOfFunction("get_weather", map[string]any{
				"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"},
			}, false)}
		}
		var r *responses.Response
		if turn.stream {
			s := c.Responses.NewStreaming(ctx(t), params, turn.opts...)
			for s.Next() {
				if ev := s.Current(); ev.Type == "response.completed" {
					done := ev.Response
					r = &done
				}
			}
			require.NoError(t, s.Err(), "turn %d", k)
			require.NoError(t, s.Close())
			require.NotNil(t, r, "turn %d: response.completed", k)
		} else {
			var err error
			r, err = c.Responses.New(ctx(t), params, turn.opts...)
			require.NoError(t, err, "turn %d", k)
		}
		text := r.OutputText()
		if text == "" {
			require.NotEmpty(t, r.Output, "turn %d", k)
			require.Equal(t, "function_call", r.Output[len(r.Output)-1].Type, "turn %d: no text, so a tool call", k)
		}
		after(k)
		input = append(input, responses.ResponseInputItemParamOfMessage(text, responses.EasyInputMessageRoleAssistant))
	}
}

// tokenOutcome is what finalization must make of a scenario's rollout.
type tokenOutcome int

const (
	trainable  tokenOutcome = iota // one chain over every call: not masked, retired
	split                          // every call captured, but the prefix breaks: masked, kept
	noTokenIDs                     // no call carries ids (a vLLM Responses tool call): masked, kept
)

// tokenScenario is one rollout of token-captured calls.
type tokenScenario struct {
	name      string
	responses bool
	turns     []tokenTurn
	outcome   tokenOutcome
	// roots and chains are the build's counts (_ng_token_capture) for a captured rollout.
	roots, chains int
}

// TestTokenCaptureVLLM: through `gymtrace proxy --token-source vllm` in front of the fake vLLM,
// every multi-turn rollout — chat and Responses, streamed and not — gives the client exactly the
// bytes the fake sends that client's request directly (T2), writes one canonical token entry per
// chat call holding the engine's ids (T3, T7, TOKENS.md §2.2.3) under the call's one model_call_id (T4), and
// `gymtrace attach` finalizes it as TOKENS.md §3.4–§3.7 say: a chained rollout into one
// prefix-contiguous response.output, not masked, its capture retired; a retokenized turn into a
// second chain, masked; a vLLM Responses turn without text (no log probs, README "Training runs")
// into a masked rollout with its call marked incomplete.
func TestTokenCaptureVLLM(t *testing.T) {
	if *directOnly {
		return // the whole point is the proxy
	}
	upstream := startUpstream(t, fakemodel.WithEngine(fakemodel.EngineVLLM))
	var recv *otlpReceiver
	if !*inProcess {
		recv = startOTLPReceiver(t)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL)
		t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
		t.Setenv("OTEL_METRICS_EXPORTER", "none")
		t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	}
	p := startProxyWith(t, upstream.URL, []string{"--token-source", "vllm"}, proxy.WithTokenSource(proxy.TokenSourceVLLM))
	store, err := tokens.OpenStore(p.CaptureDir)
	require.NoError(t, err)

	special := []option.RequestOption{option.WithJSONSet("add_special_tokens", true)}
	scenarios := []tokenScenario{
		{name: "chat_json", outcome: trainable, roots: 1, chains: 1, turns: []tokenTurn{
			{user: "Name a primary colour."}, {user: "And another one?"}, {user: "Which of the two is darker?"},
		}},
		{name: "chat_sse", outcome: trainable, roots: 1, chains: 1, turns: []tokenTurn{
			{user: "Name a primary colour.", stream: true}, {user: "And another one?", stream: true}, {user: "Which of the two is darker?", stream: true},
		}},
		{name: "chat_mixed_tools", outcome: trainable, roots: 1, chains: 1, turns: []tokenTurn{
			{user: weatherQuestion, tools: true}, // a tool call
			{tools: true, stream: true},          // after the tool result: text
			{user: "And tomorrow?", tools: true}, // a tool call again
			{tools: true},                        // text
			{user: "Thanks. Summarize.", tools: true, stream: true},
		}},
		// The template drops an earlier turn's <think> block (as Qwen3's does), so turn 3's
		// prompt extends turn 1's tokens but not turn 2's: two chains from one root.
		{name: "retokenized_reasoning", outcome: split, roots: 1, chains: 2, turns: []tokenTurn{
			{user: "Name a primary colour."}, {user: "Think about another one.", reasoning: true}, {user: "Which is darker?", stream: true},
		}},
		// add_special_tokens prepends BOS: turn 3's prompt shares no prefix with the earlier turns.
		{name: "retokenized_special_tokens", outcome: split, roots: 2, chains: 2, turns: []tokenTurn{
			{user: "Name a primary colour."}, {user: "And another one?", stream: true}, {user: "Which is darker?", opts: special},
		}},
		// vLLM's own Responses API: the proxy asks for enable_response_messages and the
		// output_text log probs (README "Training runs").
		{name: "responses", responses: true, outcome: trainable, roots: 1, chains: 1, turns: []tokenTurn{
			{user: "Name a primary colour."}, {user: "And another one?", stream: true}, {user: "Which is darker?"},
		}},
		// A Responses turn that only calls a tool has no message item, so vLLM gives its log probs
		// nowhere: marked incomplete, the rollout masked.
		{name: "responses_tool_call", responses: true, outcome: noTokenIDs, turns: []tokenTurn{
			{user: weatherQuestion, tools: true, stream: true},
		}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			id := rolloutID(t)
			direct, directRec := recordingClient(t, upstream.URL)
			viaProxy, proxyRec := recordingClient(t, tokenBaseURL(t, p.URL, id))
			run := runChatTurns
			if sc.responses {
				run = runResponsesTurns
			}
			run(t, direct, sc.turns, func(int) {})
			run(t, viaProxy, sc.turns, func(k int) {
				in, err := store.Inspect(id)
				require.NoError(t, err)
				require.Len(t, in.Intents, k+1, "turn %d: the intent was durable before the call was forwarded", k)
				if sc.outcome == noTokenIDs {
					assert.Len(t, in.Marks, k+1, "turn %d: marked incomplete before the client saw the end", k)
				} else {
					assert.Len(t, in.Entries, k+1, "turn %d: the entry was durable before the client saw the end", k)
				}
				assert.Equal(t, k+1, p.lineCount(t, id), "turn %d: one capture record per call", k)
			})

			// T2: the client got, byte for byte, what the fake sends its own request.
			d, v := directRec.all(), proxyRec.all()
			require.Len(t, v, len(sc.turns))
			require.Len(t, d, len(v))
			for k := range v {
				assert.Equal(t, string(d[k].request), string(v[k].request), "turn %d: the same conversation both ways", k)
				assert.Equal(t, string(d[k].response), string(v[k].response), "turn %d: the client's raw bytes are the fake's", k)
			}

			records := readRecords(t, p.capturePath(id))
			require.Len(t, records, len(sc.turns))
			callIDs := make([]string, len(records))
			for k, r := range records {
				callIDs[k], _ = r.Fields["model_call_id"].(string)
			}
			in, err := store.Inspect(id)
			require.NoError(t, err)
			assert.Equal(t, callIDs, in.Intents, "one intent per call, under the record's model_call_id")
			if sc.outcome == noTokenIDs {
				assert.Empty(t, in.Entries, "vLLM's Responses answer without text carries no log probs")
				assert.Equal(t, callIDs, in.Marks, "each call marked its rollout incomplete with its id")
				assert.True(t, in.Incomplete)
				checkTokenSpans(t, recv, id, callIDs, nil, semconv.TokensCauseAdapter)
			} else {
				entries := checkTokenFile(t, p.CaptureDir, id, callIDs)
				checkEngineIDs(t, upstream.URL, v, entries)
				checkTokenSpans(t, recv, id, callIDs, entries, "")
				assert.Empty(t, in.Marks)
				assert.False(t, in.Incomplete)
				if sc.outcome == trainable {
					for k := 1; k < len(entries); k++ {
						prev := append(append([]int64(nil), entries[k-1].PromptTokenIDs...), entries[k-1].GenerationTokenIDs...)
						require.GreaterOrEqual(t, len(entries[k].PromptTokenIDs), len(prev))
						assert.Equal(t, prev, entries[k].PromptTokenIDs[:len(prev)], "turn %d's prompt extends turn %d's prompt and generation", k, k-1)
					}
				}
			}
			checkFinalized(t, p, store, id, sc)
		})
	}
}

// checkTokenFile reads <id>.tokens.jsonl: one line per call, in call order, under the calls' ids,
// each line canonical (TOKENS.md §2.2.3): the tokens package's encoder re-encodes it to the same
// bytes, every object's keys are sorted, and every float is in orjson's form (checked against
// this file's own formatter).
func checkTokenFile(t *testing.T, dir, id string, callIDs []string) []tokens.TokenEntry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, id+tokens.EntriesFileSuffix))
	require.NoError(t, err)
	require.True(t, bytes.HasSuffix(b, []byte("\n")))
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	require.Len(t, lines, len(callIDs))
	var entries []tokens.TokenEntry
	for k, line := range lines {
		e, err := tokens.ParseEntry([]byte(line))
		require.NoError(t, err, "line %d", k)
		c, err := e.CanonicalJSON()
		require.NoError(t, err)
		assert.Equal(t, line, string(c), "line %d re-encodes to itself", k)
		checkCanonical(t, line)
		assert.Equal(t, callIDs[k], e.ModelCallID, "line %d: the token entry and the capture record share the model_call_id", k)
		assert.Equal(t, id, e.RolloutID)
		assert.Equal(t, tokenModel, e.Model)
		assert.Equal(t, int64(tokens.SchemaVersion), e.SchemaVersion)
		assert.Len(t, e.GenerationLogProbs, len(e.GenerationTokenIDs))
		require.NotEmpty(t, e.GenerationTokenIDs)
		assert.Equal(t, int64(151645), e.GenerationTokenIDs[len(e.GenerationTokenIDs)-1], "the generation ends with <|im_end|>")
		require.Len(t, e.OutputItems, 1, "the chat answer's message")
		require.NotNil(t, e.TokenItemIndex)
		assert.Equal(t, int64(0), *e.TokenItemIndex)
		assert.Positive(t, e.CreatedAt)
		entries = append(entries, e)
	}
	return entries
}

// checkCanonical walks one JSON text: every object's keys in code-point order, no whitespace,
// every log prob and created_at written as orjson writes a float.
func checkCanonical(t *testing.T, line string) {
	t.Helper()
	var v any
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&v))
	keysSorted(t, line)
	m := v.(map[string]any)
	floats := []any{m["created_at"]}
	floats = append(floats, m["generation_log_probs"].([]any)...)
	for _, f := range floats {
		n, ok := f.(json.Number)
		require.True(t, ok)
		x, err := strconv.ParseFloat(string(n), 64)
		require.NoError(t, err)
		assert.Equal(t, orjsonFloat(x), string(n), "a float in orjson's text")
	}
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, []byte(line)))
	assert.Equal(t, compact.String(), line, "no whitespace")
}

// keysSorted checks, token by token, that the keys of every object in s come in strictly
// ascending byte order.
func keysSorted(t *testing.T, s string) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	type frame struct {
		object  bool
		wantKey bool
		last    string
		first   bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.wantKey {
			if key, ok := tok.(string); ok {
				if !top.first {
					assert.Less(t, top.last, key, "object keys sorted in %s", s)
				}
				top.last, top.first, top.wantKey = key, false, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			if top != nil && top.object {
				top.wantKey = true
			}
			stack = append(stack, &frame{object: true, wantKey: true, first: true})
		case json.Delim('['):
			if top != nil && top.object {
				top.wantKey = true
			}
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		default:
			if top != nil && top.object {
				top.wantKey = true
			}
		}
	}
}

// orjsonFloat is orjson's (ryu's) text of a finite float (TOKENS.md §2.2.3), written here
// from the rule, apart from the tokens package's: shortest round-trip digits d (n of them) and
// exponent k with value d×10^k, p = n + k; 0 <= k and p <= 16: digits, k zeros, ".0"; 0 < p <= 16:
// point inside; -5 < p <= 0: "0." + -p zeros + digits; else d[0] "." rest "e" exponent (no "+",
// no padding, no ".0" for one digit).
func orjsonFloat(x float64) string {
	if x == 0 {
		if math.Signbit(x) {
			return "-0.0"
		}
		return "0.0"
	}
	sign := ""
	if x < 0 {
		sign, x = "-", -x
	}
	e := strconv.FormatFloat(x, 'e', -1, 64) // d.ddde±XX
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	e10, _ := strconv.Atoi(exp)
	n := len(digits)
	k := e10 - (n - 1)
	p := n + k
	switch {
	case k >= 0 && p <= 16:
		return sign + digits + strings.Repeat("0", k) + ".0"
	case p > 0 && p <= 16:
		return sign + digits[:p] + "." + digits[p:]
	case p > -5 && p <= 0:
		return sign + "0." + strings.Repeat("0", -p) + digits
	}
	s := digits[:1]
	if n > 1 {
		s += "." + digits[1:]
	}
	return sign + s + "e" + strconv.Itoa(p-1)
}

// checkEngineIDs: each entry holds what the engine gives that call's request when asked for ids
// and log probs directly (return_token_ids, logprobs, top_logprobs 0, not streamed).
func checkEngineIDs(t *testing.T, upstream string, calls []exchange, entries []tokens.TokenEntry) {
	t.Helper()
	for k, ex := range calls {
		var body map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(ex.request, &body))
		delete(body, "stream")
		delete(body, "stream_options")
		body["return_token_ids"] = json.RawMessage("true")
		body["logprobs"] = json.RawMessage("true")
		body["top_logprobs"] = json.RawMessage("0")
		req, err := json.Marshal(body)
		require.NoError(t, err)
		path := "/v1/chat/completions"
		if _, ok := body["input"]; ok { // Responses: vLLM's raw prompt and generated tokens
			delete(body, "return_token_ids")
			delete(body, "logprobs")
			body["enable_response_messages"] = json.RawMessage("true")
			body["include"] = json.RawMessage(`["message.output_text.logprobs"]`)
			req, err = json.Marshal(body)
			require.NoError(t, err)
			path = "/v1/responses"
		}
		resp, err := http.Post(upstream+path, "application/json", bytes.NewReader(req))
		require.NoError(t, err)
		raw, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		var got struct {
			PromptTokenIDs []int64 `json:"prompt_token_ids"`
			Choices        []struct {
				TokenIDs []int64 `json:"token_ids"`
				Logprobs struct {
					Content []struct {
						Logprob float64 `json:"logprob"`
					} `json:"content"`
				} `json:"logprobs"`
			} `json:"choices"`
		}
		require.NoError(t, json.Unmarshal(raw, &got))
		if path == "/v1/responses" {
			var r struct {
				InputMessages  []struct{ Tokens []int64 } `json:"input_messages"`
				OutputMessages []struct{ Tokens []int64 } `json:"output_messages"`
				Output         []struct {
					Content []struct {
						Logprobs []struct {
							Logprob float64 `json:"logprob"`
						} `json:"logprobs"`
					} `json:"content"`
				} `json:"output"`
			}
			require.NoError(t, json.Unmarshal(raw, &r))
			require.Len(t, r.InputMessages, 1)
			require.Len(t, r.OutputMessages, 1)
			var lps []float64
			for _, it := range r.Output {
				for _, c := range it.Content {
					for _, l := range c.Logprobs {
						lps = append(lps, l.Logprob)
					}
				}
			}
			assert.Equal(t, r.InputMessages[0].Tokens, entries[k].PromptTokenIDs, "turn %d: the engine's prompt ids", k)
			assert.Equal(t, r.OutputMessages[0].Tokens, entries[k].GenerationTokenIDs, "turn %d: the engine's generated ids", k)
			assert.Equal(t, lps, entries[k].GenerationLogProbs, "turn %d: the engine's log probs", k)
			continue
		}
		require.Len(t, got.Choices, 1)
		assert.Equal(t, got.PromptTokenIDs, entries[k].PromptTokenIDs, "turn %d: the engine's prompt ids", k)
		assert.Equal(t, got.Choices[0].TokenIDs, entries[k].GenerationTokenIDs, "turn %d: the engine's generated ids", k)
		lps := make([]float64, len(got.Choices[0].Logprobs.Content))
		for i, c := range got.Choices[0].Logprobs.Content {
			lps[i] = c.Logprob
		}
		assert.Equal(t, lps, entries[k].GenerationLogProbs, "turn %d: the engine's log probs", k)
	}
}

// checkTokenSpans: each call's model-call span (exported by the proxy binary; the in-process
// proxy exports none) carries the call's model_call_id and the token attributes of T8: counts for
// a written entry (entries non-nil), the cause otherwise.
func checkTokenSpans(t *testing.T, recv *otlpReceiver, id string, callIDs []string, entries []tokens.TokenEntry, cause string) {
	t.Helper()
	if recv == nil {
		return
	}
	byCall := map[string]receivedSpan{}
	require.Eventually(t, func() bool {
		for _, s := range recv.trace(rolloutTraceID(id)) {
			if c := s.attr(string(semconv.GymtraceModelCallIDKey)); c != "" {
				byCall[c] = s
			}
		}
		return len(byCall) >= len(callIDs)
	}, 20*time.Second, 50*time.Millisecond, "the proxy's model-call spans arrive")
	require.Len(t, byCall, len(callIDs))
	for k, c := range callIDs {
		s, ok := byCall[c]
		require.True(t, ok, "a span carries model_call_id %s", c)
		if entries == nil {
			assert.Equal(t, "false", s.attr(string(semconv.GymtraceTokensEntryWrittenKey)), "call %d", k)
			assert.Equal(t, cause, s.attr(string(semconv.GymtraceTokensIncompleteCauseKey)), "call %d", k)
			continue
		}
		assert.Equal(t, "true", s.attr(string(semconv.GymtraceTokensEntryWrittenKey)), "call %d", k)
		assert.Equal(t, fmt.Sprint(len(entries[k].PromptTokenIDs)), s.attr(string(semconv.GymtraceTokensPromptCountKey)), "call %d", k)
		assert.Equal(t, fmt.Sprint(len(entries[k].GenerationTokenIDs)), s.attr(string(semconv.GymtraceTokensGenerationCountKey)), "call %d", k)
		assert.Empty(t, s.attr(string(semconv.GymtraceTokensIncompleteCauseKey)), "call %d", k)
	}
}

// checkFinalized runs the real `gymtrace attach` on the rollout's line and checks the finalized
// line and what is left of the token capture (TOKENS.md §3.6, §3.7, T6).
func checkFinalized(t *testing.T, p *proxyProc, store *tokens.Store, id string, sc tokenScenario) {
	t.Helper()
	before, err := store.Inspect(id)
	require.NoError(t, err)
	in := filepath.Join(t.TempDir(), "rollouts.jsonl")
	out := filepath.Join(t.TempDir(), "rollouts.attached.jsonl")
	row := `{"_ng_rollout_id":"` + id + `","response":{"id":"agent-final","model":"` + tokenModel + `","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}]},"reward":1.0}` + "\n"
	require.NoError(t, os.WriteFile(in, []byte(row), 0o600))
	cmd := exec.Command(gymtraceBinary(t), "attach", "--capture-dir", p.CaptureDir, "--input", in, "--output", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run(), "gymtrace attach: %s", stderr.String())
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var line struct {
		MaskSample *bool `json:"mask_sample"`
		Capture    struct {
			NCalls          int     `json:"n_calls"`
			Chains          int     `json:"chains"`
			Roots           int     `json:"roots"`
			DeliveredFrac   float64 `json:"delivered_fraction"`
			Error           string  `json:"error"`
			CaptureIncomplt bool    `json:"capture_incomplete"`
		} `json:"_ng_token_capture"`
		Response struct {
			ID     string `json:"id"`
			Output []struct {
				Type       string    `json:"type"`
				Prompt     *[]int64  `json:"prompt_token_ids"`
				Generation *[]int64  `json:"generation_token_ids"`
				LogProbs   []float64 `json:"generation_log_probs"`
			} `json:"output"`
		} `json:"response"`
		Calls json.RawMessage `json:"ng_model_call_capture"`
	}
	require.NoError(t, json.Unmarshal(b, &line), "%s", b)
	assert.Equal(t, "agent-final", line.Response.ID, "the response's other members are kept")
	assert.NotEmpty(t, line.Calls, "the model-call capture is attached too")
	after, err := store.Inspect(id)
	require.NoError(t, err)

	switch sc.outcome {
	case noTokenIDs:
		require.NotNil(t, line.MaskSample)
		assert.True(t, *line.MaskSample, "a rollout without token ids is never trained on")
		assert.Equal(t, "capture contains no token records", line.Capture.Error)
		assert.True(t, line.Capture.CaptureIncomplt)
		require.Len(t, line.Response.Output, 1, "nothing rebuilt: the agent's output stays")
		assert.Nil(t, line.Response.Output[0].Generation)
		assert.False(t, after.Retired, "a masked rollout keeps its files")
		assert.Equal(t, before.Marks, after.Marks)
		return
	case trainable:
		assert.Nil(t, line.MaskSample, "not masked (Gym never writes mask_sample false): %s", b)
		assert.Empty(t, line.Capture.Error)
		assert.False(t, line.Capture.CaptureIncomplt)
		assert.Equal(t, 1.0, line.Capture.DeliveredFrac)
		assert.True(t, after.Retired, "a well-built rollout's capture is retired after the line is durable")
		assert.Empty(t, after.Entries)
		assert.Empty(t, after.Intents)
	case split:
		require.NotNil(t, line.MaskSample, "%s", b)
		assert.True(t, *line.MaskSample, "a rollout whose prefix breaks is masked")
		assert.Less(t, line.Capture.DeliveredFrac, 1.0)
		assert.False(t, after.Retired, "a masked rollout keeps its files")
		assert.Len(t, after.Entries, len(sc.turns))
	}
	assert.Equal(t, len(sc.turns), line.Capture.NCalls)
	assert.Equal(t, sc.roots, line.Capture.Roots)
	assert.Equal(t, sc.chains, line.Capture.Chains)

	// response.output is the main chain, prefix-contiguous (TOKENS.md §3.5): each item's prompt
	// extends everything seen before it, and the items are the chained calls in order.
	seen := []int64{}
	var gens [][]int64
	for i, item := range line.Response.Output {
		require.NotNil(t, item.Generation, "item %d carries tokens", i)
		require.NotNil(t, item.Prompt, "item %d carries its prompt", i)
		prompt := *item.Prompt
		require.GreaterOrEqual(t, len(prompt), len(seen), "item %d", i)
		assert.Equal(t, seen, prompt[:len(seen)], "item %d's prompt extends the tokens seen so far", i)
		seen = append(append([]int64(nil), prompt...), *item.Generation...)
		gens = append(gens, *item.Generation)
	}
	var want [][]int64
	var wantLPs, lps []float64
	for _, e := range before.Entries {
		want = append(want, e.GenerationTokenIDs)
		wantLPs = append(wantLPs, e.GenerationLogProbs...)
	}
	for _, item := range line.Response.Output {
		lps = append(lps, item.LogProbs...)
	}
	if sc.outcome == trainable {
		assert.Equal(t, want, gens, "every call's generation, in order, in one chain")
		assert.Equal(t, wantLPs, lps, "with its log probs")
	} else {
		assert.Less(t, len(gens), len(want), "the main chain leaves the other chain's call out")
		assert.Subset(t, want, gens)
	}
}
