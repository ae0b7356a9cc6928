package fakemodel_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// weatherSchema is the parameter schema of the get_weather tool used by the scenarios.
var weatherSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"city": map[string]any{"type": "string"},
		"unit": map[string]any{"type": "string", "enum": []string{"c", "f"}},
		"days": map[string]any{"type": "integer"},
	},
	"required": []string{"city", "unit"},
}

// wantArgs is what the Server puts in a get_weather call for the user text "Weather in Oslo?".
var wantArgs = map[string]any{"city": "Weather in Oslo?", "unit": "c"}

// scenario is one kind of request, expressed in every dialect.
type scenario struct {
	name      string
	body      map[fakemodel.Dialect]map[string]any
	call      bool   // the answer is a get_weather call
	reasoning bool   // the answer carries reasoning
	cached    bool   // the request has several items, so some prompt tokens are cached
	text      string // a substring of the text answer (when not a call)
}

var scenarios = []scenario{
	{
		name: "text",
		body: map[fakemodel.Dialect]map[string]any{
			fakemodel.DialectResponses: {"model": "gpt-4.1-mini", "input": "Name a primary colour."},
			fakemodel.DialectChat:      {"model": "gpt-4.1-mini", "messages": []any{map[string]any{"role": "user", "content": "Name a primary colour."}}},
			fakemodel.DialectMessages:  {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": []any{map[string]any{"role": "user", "content": "Name a primary colour."}}},
		},
		text: `You said: "Name a primary colour."`,
	},
	{
		name: "tool_call",
		body: map[fakemodel.Dialect]map[string]any{
			fakemodel.DialectResponses: {
				"model": "gpt-4.1-mini",
				"input": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": "Weather in Oslo?"}}}},
				"tools": []any{map[string]any{"type": "function", "name": "get_weather", "parameters": weatherSchema}},
			},
			fakemodel.DialectChat: {
				"model":    "gpt-4.1-mini",
				"messages": []any{map[string]any{"role": "user", "content": "Weather in Oslo?"}},
				"tools":    []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "parameters": weatherSchema}}},
			},
			fakemodel.DialectMessages: {
				"model": "claude-sonnet-4-5", "max_tokens": 1024,
				"messages": []any{map[string]any{"role": "user", "content": "Weather in Oslo?"}},
				"tools":    []any{map[string]any{"name": "get_weather", "input_schema": weatherSchema}},
			},
		},
		call: true,
	},
	{
		name: "tool_result",
		body: map[fakemodel.Dialect]map[string]any{
			fakemodel.DialectResponses: {
				"model": "gpt-4.1-mini",
				"input": []any{
					map[string]any{"role": "user", "content": "Weather in Oslo?"},
					map[string]any{"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": `{"city":"Oslo"}`},
					map[string]any{"type": "function_call_output", "call_id": "call_1", "output": "12 C and sunny"},
				},
				"tools": []any{map[string]any{"type": "function", "name": "get_weather", "parameters": weatherSchema}},
			},
			fakemodel.DialectChat: {
				"model": "gpt-4.1-mini",
				"messages": []any{
					map[string]any{"role": "user", "content": "Weather in Oslo?"},
					map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
						"id": "call_1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Oslo"}`},
					}}},
					map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "12 C and sunny"},
				},
				"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "parameters": weatherSchema}}},
			},
			fakemodel.DialectMessages: {
				"model": "claude-sonnet-4-5", "max_tokens": 1024,
				"messages": []any{
					map[string]any{"role": "user", "content": "Weather in Oslo?"},
					map[string]any{"role": "assistant", "content": []any{
						map[string]any{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": map[string]any{"city": "Oslo"}},
					}},
					map[string]any{"role": "user", "content": []any{
						map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": "12 C and sunny"},
					}},
				},
				"tools": []any{map[string]any{"name": "get_weather", "input_schema": weatherSchema}},
			},
		},
		cached: true,
		text:   "The get_weather tool returned: 12 C and sunny",
	},
	{
		name: "reasoning",
		body: map[fakemodel.Dialect]map[string]any{
			fakemodel.DialectResponses: {"model": "o4-mini", "input": "Which is cheaper?", "reasoning": map[string]any{"effort": "low", "summary": "auto"}},
			fakemodel.DialectChat:      {"model": "o4-mini", "reasoning_effort": "low", "messages": []any{map[string]any{"role": "user", "content": "Which is cheaper?"}}},
			fakemodel.DialectMessages: {
				"model": "claude-sonnet-4-5", "max_tokens": 2048, "thinking": map[string]any{"type": "enabled", "budget_tokens": 1024},
				"messages": []any{map[string]any{"role": "user", "content": "Which is cheaper?"}},
			},
		},
		reasoning: true,
		text:      `You said: "Which is cheaper?"`,
	},
}

var paths = map[fakemodel.Dialect]string{
	fakemodel.DialectResponses: "/v1/responses",
	fakemodel.DialectChat:      "/v1/chat/completions",
	fakemodel.DialectMessages:  "/v1/messages",
}

// TestAnswers runs every scenario in every dialect, streamed and not, checks the shapes, and
// checks that the stream reassembles to exactly the non-streamed answer.
func TestAnswers(t *testing.T) {
	srv := fakemodel.New()
	for _, sc := range scenarios {
		for _, d := range []fakemodel.Dialect{fakemodel.DialectResponses, fakemodel.DialectChat, fakemodel.DialectMessages} {
			t.Run(string(d)+"/"+sc.name, func(t *testing.T) {
				resp := do(t, srv, http.MethodPost, paths[d], sc.body[d])
				plain := bodyOf(t, resp)
				require.Equal(t, http.StatusOK, resp.StatusCode, plain)
				assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))

				streamReq := maps.Clone(sc.body[d])
				streamReq["stream"] = true
				if d == fakemodel.DialectChat {
					streamReq["stream_options"] = map[string]any{"include_usage": true}
				}
				sresp := do(t, srv, http.MethodPost, paths[d], streamReq)
				streamed := bodyOf(t, sresp)
				require.Equal(t, http.StatusOK, sresp.StatusCode, streamed)
				assert.Equal(t, "text/event-stream; charset=utf-8", sresp.Header.Get("Content-Type"))
				events := parseSSE(t, streamed)

				switch d {
				case fakemodel.DialectResponses:
					checkResponses(t, sc, plain, events)
				case fakemodel.DialectChat:
					checkChat(t, sc, plain, events)
				default:
					checkMessages(t, sc, plain, events)
				}
			})
		}
	}
}

// checkUsage checks the scenario's usage rules on (input, cached, output, reasoning) tokens;
// reasoning -1 means the dialect does not report it (Anthropic).
func checkUsage(t *testing.T, sc scenario, in, cached, out, reasoning int64) {
	t.Helper()
	assert.Positive(t, in)
	assert.Positive(t, out)
	if sc.cached {
		assert.Positive(t, cached, "cached tokens")
	} else {
		assert.Zero(t, cached, "cached tokens")
	}
	switch {
	case reasoning == -1:
	case sc.reasoning:
		assert.Positive(t, reasoning, "reasoning tokens")
		assert.Less(t, reasoning, out, "reasoning tokens are part of the output tokens")
	default:
		assert.Zero(t, reasoning, "reasoning tokens")
	}
}

func checkResponses(t *testing.T, sc scenario, plain string, events []sseEvent) {
	assert.Equal(t, []string{
		"id", "object", "created_at", "status", "background", "error", "incomplete_details", "instructions",
		"max_output_tokens", "max_tool_calls", "model", "output", "parallel_tool_calls", "previous_response_id",
		"reasoning", "service_tier", "store", "temperature", "text", "tool_choice", "tools", "top_p",
		"truncation", "usage", "user", "metadata",
	}, keys(t, plain))
	body := object(t, plain)
	assert.Equal(t, "response", body["object"])
	assert.Equal(t, "completed", body["status"])
	assert.Equal(t, sc.body[fakemodel.DialectResponses]["model"], body["model"])
	assert.Regexp(t, `^resp_[0-9a-f]{50}$`, body["id"])

	output := at(t, body, "output").([]any)
	var types []string
	for _, item := range output {
		types = append(types, str(t, item, "type"))
	}
	want := []string{"message"}
	if sc.call {
		want = []string{"function_call"}
	}
	if sc.reasoning {
		want = append([]string{"reasoning"}, want...)
		assert.NotEmpty(t, str(t, output[0], "summary", 0, "text"))
	}
	require.Equal(t, want, types)
	last := output[len(output)-1]
	if sc.call {
		assert.Equal(t, "get_weather", str(t, last, "name"))
		assert.Regexp(t, `^call_[A-Za-z0-9]{24}$`, str(t, last, "call_id"))
		assert.Equal(t, "completed", str(t, last, "status"))
		assert.Equal(t, wantArgs, decode(t, str(t, last, "arguments")))
	} else {
		assert.Contains(t, str(t, last, "content", 0, "text"), sc.text)
		assert.Equal(t, "output_text", str(t, last, "content", 0, "type"))
	}
	in, out := num(t, body, "usage", "input_tokens"), num(t, body, "usage", "output_tokens")
	assert.Equal(t, in+out, num(t, body, "usage", "total_tokens"))
	checkUsage(t, sc, in, num(t, body, "usage", "input_tokens_details", "cached_tokens"), out,
		num(t, body, "usage", "output_tokens_details", "reasoning_tokens"))

	// The stream: names, types, sequence numbers, and the final response equals the JSON answer.
	wantNames := []string{"response.created", "response.in_progress"}
	if sc.reasoning {
		wantNames = append(wantNames, "response.output_item.added", "response.reasoning_summary_part.added",
			"response.reasoning_summary_text.delta+", "response.reasoning_summary_text.done",
			"response.reasoning_summary_part.done", "response.output_item.done")
	}
	if sc.call {
		wantNames = append(wantNames, "response.output_item.added", "response.function_call_arguments.delta+",
			"response.function_call_arguments.done", "response.output_item.done")
	} else {
		wantNames = append(wantNames, "response.output_item.added", "response.content_part.added",
			"response.output_text.delta+", "response.output_text.done", "response.content_part.done", "response.output_item.done")
	}
	wantNames = append(wantNames, "response.completed")
	require.Equal(t, wantNames, names(t, events))
	var text, args, summary strings.Builder
	for i, ev := range events {
		data := object(t, ev.Data)
		assert.Equal(t, ev.Name, data["type"])
		assert.Equal(t, int64(i), num(t, data, "sequence_number"))
		switch ev.Name {
		case "response.created", "response.in_progress":
			assert.Equal(t, "in_progress", str(t, data, "response", "status"))
			assert.Nil(t, at(t, data, "response", "usage"))
			assert.Equal(t, body["id"], at(t, data, "response", "id"))
		case "response.output_text.delta":
			text.WriteString(str(t, data, "delta"))
		case "response.function_call_arguments.delta":
			args.WriteString(str(t, data, "delta"))
		case "response.reasoning_summary_text.delta":
			summary.WriteString(str(t, data, "delta"))
		}
	}
	final := object(t, events[len(events)-1].Data)
	assert.Equal(t, body, final["response"], "response.completed carries the non-streamed answer")
	if sc.call {
		assert.Equal(t, str(t, last, "arguments"), args.String())
	} else {
		assert.Equal(t, str(t, last, "content", 0, "text"), text.String())
	}
	if sc.reasoning {
		assert.Equal(t, str(t, output[0], "summary", 0, "text"), summary.String())
	}
}

func checkChat(t *testing.T, sc scenario, plain string, events []sseEvent) {
	assert.Equal(t, []string{"id", "object", "created", "model", "choices", "usage", "service_tier", "system_fingerprint"}, keys(t, plain))
	body := object(t, plain)
	assert.Equal(t, "chat.completion", body["object"])
	assert.Regexp(t, `^chatcmpl-[A-Za-z0-9]{29}$`, body["id"])
	assert.Equal(t, sc.body[fakemodel.DialectChat]["model"], body["model"])
	msg := at(t, body, "choices", 0, "message").(map[string]any)
	assert.Equal(t, "assistant", msg["role"])
	if sc.call {
		assert.Equal(t, "tool_calls", str(t, body, "choices", 0, "finish_reason"))
		assert.Nil(t, msg["content"])
		assert.Equal(t, "get_weather", str(t, msg, "tool_calls", 0, "function", "name"))
		assert.Equal(t, "function", str(t, msg, "tool_calls", 0, "type"))
		assert.Regexp(t, `^call_[A-Za-z0-9]{24}$`, str(t, msg, "tool_calls", 0, "id"))
		assert.Equal(t, wantArgs, decode(t, str(t, msg, "tool_calls", 0, "function", "arguments")))
	} else {
		assert.Equal(t, "stop", str(t, body, "choices", 0, "finish_reason"))
		assert.Contains(t, str(t, msg, "content"), sc.text)
		assert.NotContains(t, msg, "tool_calls")
	}
	if sc.reasoning {
		assert.NotEmpty(t, str(t, msg, "reasoning_content"))
	} else {
		assert.NotContains(t, msg, "reasoning_content")
	}
	in, out := num(t, body, "usage", "prompt_tokens"), num(t, body, "usage", "completion_tokens")
	assert.Equal(t, in+out, num(t, body, "usage", "total_tokens"))
	checkUsage(t, sc, in, num(t, body, "usage", "prompt_tokens_details", "cached_tokens"), out,
		num(t, body, "usage", "completion_tokens_details", "reasoning_tokens"))

	// The stream reassembles to the same message, finish_reason and usage.
	require.Equal(t, []string{"chunk+", "[DONE]"}, names(t, events))
	var content, reasoning, args strings.Builder
	var callID, callName, finish string
	var usage any
	for i, ev := range events[:len(events)-1] {
		chunk := object(t, ev.Data)
		assert.Equal(t, []string{"id", "object", "created", "model", "service_tier", "system_fingerprint", "choices", "usage"}, keys(t, ev.Data))
		assert.Equal(t, "chat.completion.chunk", chunk["object"])
		assert.Equal(t, body["id"], chunk["id"])
		choices := chunk["choices"].([]any)
		if i == len(events)-2 {
			assert.Empty(t, choices, "the usage chunk has no choices")
			usage = chunk["usage"]
			continue
		}
		assert.Nil(t, chunk["usage"])
		require.Len(t, choices, 1)
		delta := at(t, choices[0], "delta").(map[string]any)
		if i == 0 {
			assert.Equal(t, "assistant", delta["role"])
		}
		if s, ok := delta["content"].(string); ok {
			content.WriteString(s)
		}
		if s, ok := delta["reasoning_content"].(string); ok {
			reasoning.WriteString(s)
		}
		if tcs, ok := delta["tool_calls"].([]any); ok {
			require.Len(t, tcs, 1)
			assert.Equal(t, int64(0), num(t, tcs[0], "index"))
			if id, ok := tcs[0].(map[string]any)["id"].(string); ok {
				callID, callName = id, str(t, tcs[0], "function", "name")
			}
			args.WriteString(str(t, tcs[0], "function", "arguments"))
		}
		if f, ok := at(t, choices[0], "finish_reason").(string); ok {
			assert.Equal(t, len(events)-3, i, "finish_reason only on the last choice chunk")
			finish = f
		}
	}
	assert.Equal(t, body["usage"], usage)
	assert.Equal(t, str(t, body, "choices", 0, "finish_reason"), finish)
	if sc.call {
		assert.Equal(t, str(t, msg, "tool_calls", 0, "id"), callID)
		assert.Equal(t, "get_weather", callName)
		assert.Equal(t, str(t, msg, "tool_calls", 0, "function", "arguments"), args.String())
		assert.Empty(t, content.String())
	} else {
		assert.Equal(t, msg["content"], content.String())
	}
	if sc.reasoning {
		assert.Equal(t, msg["reasoning_content"], reasoning.String())
	}
}

func checkMessages(t *testing.T, sc scenario, plain string, events []sseEvent) {
	assert.Equal(t, []string{"id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"}, keys(t, plain))
	body := object(t, plain)
	assert.Equal(t, "message", body["type"])
	assert.Regexp(t, `^msg_01[A-Za-z0-9]{22}$`, body["id"])
	assert.Equal(t, sc.body[fakemodel.DialectMessages]["model"], body["model"])
	content := body["content"].([]any)
	var types []string
	for _, b := range content {
		types = append(types, str(t, b, "type"))
	}
	want := []string{"text"}
	if sc.call {
		want = []string{"text", "tool_use"}
	}
	if sc.reasoning {
		want = append([]string{"thinking"}, want...)
		assert.NotEmpty(t, str(t, content[0], "thinking"))
		assert.NotEmpty(t, str(t, content[0], "signature"))
	}
	require.Equal(t, want, types)
	last := content[len(content)-1]
	if sc.call {
		assert.Equal(t, "tool_use", body["stop_reason"])
		assert.Equal(t, "get_weather", str(t, last, "name"))
		assert.Regexp(t, `^toolu_01[A-Za-z0-9]{22}$`, str(t, last, "id"))
		assert.Equal(t, wantArgs, at(t, last, "input"))
	} else {
		assert.Equal(t, "end_turn", body["stop_reason"])
		assert.Contains(t, str(t, last, "text"), sc.text)
	}
	in, out := num(t, body, "usage", "input_tokens"), num(t, body, "usage", "output_tokens")
	checkUsage(t, sc, in, num(t, body, "usage", "cache_read_input_tokens"), out, -1)
	assert.Zero(t, num(t, body, "usage", "cache_creation_input_tokens"), "no cache_control in the request")

	// The stream: event names, types, and the blocks reassemble to the same content.
	wantNames := []string{"message_start"}
	for i := range want {
		wantNames = append(wantNames, "content_block_start")
		if i == 0 {
			wantNames = append(wantNames, "ping")
		}
		wantNames = append(wantNames, "content_block_delta+", "content_block_stop")
	}
	wantNames = append(wantNames, "message_delta", "message_stop")
	require.Equal(t, wantNames, names(t, events))
	var blocks []map[string]any
	var partial []string
	for _, ev := range events {
		data := object(t, ev.Data)
		assert.Equal(t, ev.Name, data["type"])
		switch ev.Name {
		case "message_start":
			m := data["message"].(map[string]any)
			assert.Equal(t, body["id"], m["id"])
			assert.Equal(t, []any{}, m["content"])
			assert.Nil(t, m["stop_reason"])
			for _, k := range []string{"input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"} {
				assert.Equal(t, at(t, body, "usage", k), at(t, m, "usage", k), k)
			}
		case "content_block_start":
			assert.Equal(t, int64(len(blocks)), num(t, data, "index"))
			blocks = append(blocks, maps.Clone(data["content_block"].(map[string]any)))
			partial = append(partial, "")
		case "content_block_delta":
			i := num(t, data, "index")
			require.Equal(t, int64(len(blocks)-1), i)
			b := blocks[i]
			switch typ := str(t, data, "delta", "type"); typ {
			case "text_delta":
				b["text"] = b["text"].(string) + str(t, data, "delta", "text")
			case "thinking_delta":
				b["thinking"] = b["thinking"].(string) + str(t, data, "delta", "thinking")
			case "signature_delta":
				b["signature"] = b["signature"].(string) + str(t, data, "delta", "signature")
			case "input_json_delta":
				partial[i] += str(t, data, "delta", "partial_json")
			default:
				require.Failf(t, "unexpected delta type", "%s", typ)
			}
		case "message_delta":
			assert.Equal(t, body["stop_reason"], at(t, data, "delta", "stop_reason"))
			assert.Equal(t, at(t, body, "usage", "output_tokens"), at(t, data, "usage", "output_tokens"))
		}
	}
	for i, b := range blocks {
		if b["type"] == "tool_use" {
			assert.Equal(t, map[string]any{}, b["input"])
			b["input"] = decode(t, partial[i])
		}
	}
	got, err := json.Marshal(blocks)
	require.NoError(t, err)
	wantJSON, err := json.Marshal(content)
	require.NoError(t, err)
	assert.JSONEq(t, string(wantJSON), string(got), "the stream reassembles to the non-streamed content")
}
