package fakemodel_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
)

// conversation drives a multi-turn Chat conversation against a vLLM-engine Server the way an
// agent does: each turn sends the history, appends the assistant message as received, then
// the next message.
type conversation struct {
	t        *testing.T
	srv      http.Handler
	messages []any
	tools    json.RawMessage
}

// turn is what one call returned: its prompt ids, generated ids and the assistant message.
type turn struct {
	prompt, gen []int64
	message     map[string]any
}

// send makes one call with the history and extra members, appends the answer to the history
// and returns it.
func (c *conversation) send(extra map[string]any, stream bool) turn {
	c.t.Helper()
	body := map[string]any{"model": "Qwen/Qwen3-4B", "messages": c.messages, "return_token_ids": true}
	if c.tools != nil {
		body["tools"] = c.tools
	}
	for k, v := range extra {
		body[k] = v
	}
	var tr turn
	if stream {
		body["stream"] = true
		resp := do(c.t, c.srv, http.MethodPost, "/v1/chat/completions", body)
		s := readStream(c.t, bodyOf(c.t, resp))
		tr.prompt, tr.gen = s.prompt, s.ids
		tr.message = map[string]any{"role": "assistant", "content": s.content}
	} else {
		resp := do(c.t, c.srv, http.MethodPost, "/v1/chat/completions", body)
		text := bodyOf(c.t, resp)
		require.Equal(c.t, http.StatusOK, resp.StatusCode, text)
		v := object(c.t, text)
		tr.prompt, tr.gen = ints(c.t, v, "prompt_token_ids"), ints(c.t, v, "choices", 0, "token_ids")
		tr.message = at(c.t, v, "choices", 0, "message").(map[string]any)
	}
	c.messages = append(c.messages, tr.message)
	return tr
}

// extends reports whether next's prompt starts with prev's prompt + generation.
func extends(prev, next turn) bool {
	want := append(append([]int64{}, prev.prompt...), prev.gen...)
	if len(next.prompt) < len(want) {
		return false
	}
	for i := range want {
		if next.prompt[i] != want[i] {
			return false
		}
	}
	return true
}

// Turn k+1's prompt ids extend turn k's prompt + generation token by token, through text
// turns, a tool call and its result, streamed and not, and with n, top_logprobs and the like
// (they change no token).
func TestMultiTurnPrefix(t *testing.T) {
	for _, stream := range []bool{false, true} {
		c := &conversation{t: t, srv: fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM)),
			messages: []any{map[string]any{"role": "system", "content": "You are terse."}, map[string]any{"role": "user", "content": "Hello there!"}}}
		var prev turn
		for k, user := range []string{"", "And now?", "Tell me more, in ünïcode — please.", "Thanks\n\nbye"} {
			if k > 0 {
				c.messages = append(c.messages, map[string]any{"role": "user", "content": user})
			}
			cur := c.send(map[string]any{"logprobs": true, "top_logprobs": 2}, stream)
			require.Equal(t, int64(151645), cur.gen[len(cur.gen)-1])
			if k > 0 {
				require.True(t, extends(prev, cur), "stream=%v turn %d: prompt %v does not extend %v + %v", stream, k, cur.prompt, prev.prompt, prev.gen)
			}
			prev = cur
		}
	}

	c := &conversation{t: t, srv: fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM)),
		messages: []any{map[string]any{"role": "user", "content": "weather in Paris"}},
		tools:    json.RawMessage(`[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`)}
	call := c.send(nil, false)
	calls := call.message["tool_calls"].([]any)
	require.Len(t, calls, 1)
	c.messages = append(c.messages, map[string]any{"role": "tool", "tool_call_id": calls[0].(map[string]any)["id"], "content": "sunny, 21 °C"})
	answer := c.send(nil, false)
	require.True(t, extends(call, answer), "the tool result turn extends the tool call turn")
	require.Contains(t, answer.message["content"], "sunny, 21 °C")
}

// What re-tokenizes the history breaks the prefix, as in life: a turn that reasoned (the
// template drops its <think> block from the history), and add_special_tokens switched on (the
// BOS token in front).
func TestMultiTurnPrefixBreaks(t *testing.T) {
	for _, tc := range []struct {
		name        string
		first, next map[string]any
	}{
		{"reasoning dropped from the history", map[string]any{"reasoning_effort": "low"}, nil},
		{"add_special_tokens switched on", nil, map[string]any{"add_special_tokens": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &conversation{t: t, srv: fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM)),
				messages: []any{map[string]any{"role": "user", "content": "Hello there!"}}}
			first := c.send(tc.first, false)
			c.messages = append(c.messages, map[string]any{"role": "user", "content": "And now?"})
			next := c.send(tc.next, false)
			require.False(t, extends(first, next))

			// The same conversation without the change keeps the prefix.
			c = &conversation{t: t, srv: c.srv, messages: []any{map[string]any{"role": "user", "content": "Hello there!"}}}
			first = c.send(nil, false)
			c.messages = append(c.messages, map[string]any{"role": "user", "content": "And now?"})
			require.True(t, extends(first, c.send(nil, false)))
		})
	}
}
