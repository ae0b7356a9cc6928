package stream

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sse builds an SSE body from data payloads, one event each.
func sse(datas ...string) string {
	var b strings.Builder
	for _, d := range datas {
		b.WriteString("data: ")
		b.WriteString(d)
		b.WriteString("\n\n")
	}
	return b.String()
}

func TestReassembleRules(t *testing.T) {
	tests := []struct {
		name    string
		dialect string
		body    string
		want    string // "" = no response
		skipped int
		parse   int
	}{
		{
			name: "chat numbers keep their text (D9)", dialect: DialectChat,
			body: sse(`{"choices":[{"index":0,"delta":{"content":"a"},"logprobs":{"content":[{"logprob":-3.2e-05}]}}],"usage":{"total_tokens":1.0E2}}`),
			want: `{"object":"chat.completion","model":null,"choices":[{"index":0,"message":{"role":"assistant","content":"a"},"finish_reason":null}],"usage":{"total_tokens":1.0E2}}`,
		},
		{
			name: "strings encoded like orjson", dialect: DialectChat,
			body: sse(`{"choices":[{"delta":{"content":"<é\u2028\u0001\"/>"}}]}`),
			want: "{\"object\":\"chat.completion\",\"model\":null,\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"<é\u2028\\u0001\\\"/>\"},\"finish_reason\":null}]}",
		},
		{
			name: "chat choices sorted by index, negative and null indices", dialect: DialectChat,
			body: sse(`{"choices":[{"index":2,"delta":{"content":"c"}},{"index":null,"delta":{"content":"z"}},{"index":-1,"delta":{"content":"m"}}]}`),
			want: `{"object":"chat.completion","model":null,"choices":[` +
				`{"index":-1,"message":{"role":"assistant","content":"m"},"finish_reason":null},` +
				`{"index":0,"message":{"role":"assistant","content":"z"},"finish_reason":null},` +
				`{"index":2,"message":{"role":"assistant","content":"c"},"finish_reason":null}]}`,
		},
		{
			name: "chat choice with a bad shape is skipped whole", dialect: DialectChat,
			body: sse(
				`{"choices":[{"index":0,"delta":{"content":"ok"}},{"index":1.0,"delta":{"content":"x"}},"s"]}`,
				`{"choices":[{"delta":{"content":"x","tool_calls":[{"index":"0"}]}},{"delta":{"tool_calls":{"a":1}}},{"delta":[1]}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"function":"f"}]}},{"delta":{"tool_calls":[7]}}]}`,
				`{"choices":{"0":{}}}`,
			),
			want:    `{"object":"chat.completion","model":null,"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":null}]}`,
			skipped: 8,
		},
		{
			name: "D13 content parts: text to content, thinking to reasoning, other parts dropped", dialect: DialectChat,
			body: sse(
				`{"choices":[{"delta":{"content":[{"type":"thinking","thinking":"t1"},{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"u"}},{"type":"text","text":"b"}]}}]}`,
				`{"choices":[{"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"t2"},{"type":"text","text":"t3"},"s",{"x":1}]},{"type":"text"},{"text":"untyped"},"bare",7]}}]}`,
				`{"choices":[{"delta":{"content":"c","reasoning_content":"r"}}]}`,
			),
			want: `{"object":"chat.completion","model":null,"choices":[{"index":0,"message":{"role":"assistant","content":"abc","reasoning_content":"t1t2t3r"},"finish_reason":null}]}`,
		},
		{
			name: "D13 content parts: non-string text read as its JSON text, null part text nothing", dialect: DialectChat,
			body: sse(`{"choices":[{"delta":{"content":[{"type":"text","text":null},{"type":"text","text":1.50},{"type":"thinking","thinking":{"k":"v"}},{"type":"thinking","thinking":null}]}}]}`),
			want: `{"object":"chat.completion","model":null,"choices":[{"index":0,"message":{"role":"assistant","content":"1.50","reasoning_content":"{\"k\":\"v\"}"},"finish_reason":null}]}`,
		},
		{
			name: "D13 object and array arguments appended as compact JSON, order and number text kept", dialect: DialectChat,
			body: sse(
				`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":{ "z" : 1.0E2, "a" : [ 1, {"b":"\u00e9"} ] }}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"c2","function":{"name":"g","arguments":[ 3 , -0 ]}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"x"}}]}}]}`,
			),
			want: `{"object":"chat.completion","model":null,"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
				`{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"z\":1.0E2,\"a\":[1,{\"b\":\"é\"}]}"}},` +
				`{"id":"c2","type":"function","function":{"name":"g","arguments":"[3,-0]x"}}]},"finish_reason":null}]}`,
		},
		{
			name: "D13 other non-string values read as their JSON text, null and falsy contribute nothing", dialect: DialectChat,
			body: sse(
				`{"choices":[{"delta":{"content":{"k":[1]},"reasoning":12}}]}`,
				`{"choices":[{"delta":{"content":true,"reasoning_content":{"r":null}}}]}`,
				`{"choices":[{"delta":{"content":null,"reasoning_content":null,"reasoning":false}}]}`,
				`{"choices":[{"delta":{"content":0,"reasoning":[],"tool_calls":[{"id":42,"function":{"name":{"n":1},"arguments":true}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"id":null,"function":{"name":null,"arguments":-2.5e-7}}]}}]}`,
			),
			want: `{"object":"chat.completion","model":null,"choices":[{"index":0,"message":{"role":"assistant","content":"{\"k\":[1]}true","reasoning_content":"12{\"r\":null}","tool_calls":[` +
				`{"id":"42","type":"function","function":{"name":"{\"n\":1}","arguments":"true-2.5e-7"}}]},"finish_reason":null}]}`,
		},
		{
			name: "chat truthy model of any type kept; empty usage ignored", dialect: DialectChat,
			body: sse(`{"model":{"n":1},"usage":{},"choices":[{"delta":null}]}`, `{"model":0,"id":"x"}`),
			want: `{"object":"chat.completion","model":{"n":1},"choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":null}],"id":"x"}`,
		},
		{
			name: "chat tool slots per choice; name replaced, arguments appended", dialect: DialectChat,
			body: sse(
				`{"choices":[{"index":1,"delta":{"tool_calls":[{"index":3,"id":"b","function":{"name":"g","arguments":"{"}},{"index":-2,"id":"a"}]}}]}`,
				`{"choices":[{"index":1,"delta":{"tool_calls":[{"index":3,"id":"","function":{"name":"h","arguments":"}"}}]},"finish_reason":"tool_calls"}]}`,
			),
			want: `{"object":"chat.completion","model":null,"choices":[{"index":1,"message":{"role":"assistant","content":null,"tool_calls":[` +
				`{"id":"a","type":"function","function":{"name":"","arguments":""}},` +
				`{"id":"b","type":"function","function":{"name":"h","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
		},
		{
			name: "parse errors counted; [DONE] and events without data are not", dialect: DialectChat,
			body:  sse(`not json`, `123`, `[DONE]`, `{"a":NaN}`, `{"choices":[{}]}`, `{"a":1} x`) + "event: x\n\n",
			want:  `{"object":"chat.completion","model":null,"choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":null}]}`,
			parse: 3, // not json, 123 (no object), trailing bytes; {"a":NaN} is an object to json.loads
		},
		{
			name: "events json.loads reads (a -Infinity log prob, NaN, a 30-digit integer) are kept", dialect: DialectChat,
			body: sse(
				`{"id":"c","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"logprobs":{"content":[{"token":"Hello","logprob":-Infinity}]},"finish_reason":null}]}`,
				`{"id":"c","model":"m","x":NaN,"choices":[{"index":0,"delta":{"content":" big"},"finish_reason":null}],"n":123456789012345678901234567890}`,
				`{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":" world"},"finish_reason":"stop"}]}`,
			),
			want: `{"object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hello big world"},"finish_reason":"stop"}],"id":"c"}`,
		},
		{
			name: "messages usage keeps first-seen order, last value", dialect: DialectMessages,
			body: sse(
				`{"type":"message_start","message":{"id":"m","stop_reason":"x","usage":{"input_tokens":1,"output_tokens":0,"input_tokens":2}}}`,
				`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5,"extra":null}}`,
			),
			want: `{"id":"m","stop_reason":"end_turn","type":"message","content":[],"usage":{"input_tokens":2,"output_tokens":5,"extra":null}}`,
		},
		{
			name: "messages second message_start replaces the message, usage merges", dialect: DialectMessages,
			body: sse(
				`{"type":"message_start","message":{"id":"a","role":"assistant","usage":{"input_tokens":1}}}`,
				`{"type":"message_start","message":{"model":"c","usage":{"output_tokens":1}}}`,
			),
			want: `{"model":"c","type":"message","content":[],"usage":{"input_tokens":1,"output_tokens":1}}`,
		},
		{
			name: "messages tool input: number text kept, Python-only JSON read as Python reads it", dialect: DialectMessages,
			body: sse(
				`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"a","name":"f","input":{}}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"x\": 1.50}"}}`,
				`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"b","name":"g"}}`,
				`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"y\": NaN, \"y\": 2}"}}`,
			),
			want: `{"type":"message","content":[{"type":"tool_use","id":"a","name":"f","input":{"x":1.50}},{"type":"tool_use","id":"b","name":"g","input":{"y":2}}]}`,
		},
		{
			name: "messages text appended to the block's own text; interleaved blocks", dialect: DialectMessages,
			body: sse(
				`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":"A","citations":null}}`,
				`{"type":"content_block_start","index":0,"content_block":{"type":"thinking"}}`,
				`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"B"}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"t"}}`,
				`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta"}}`,
				`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"C"}}`,
			),
			want: `{"type":"message","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"ABC","citations":null}]}`,
		},
		{
			name: "messages bad shapes skipped", dialect: DialectMessages,
			body: sse(
				`{"type":"message_start","message":"m"}`,
				`{"type":"content_block_start","index":"0","content_block":{}}`,
				`{"type":"content_block_start","index":0,"content_block":[1]}`,
				`{"type":"content_block_delta","delta":{"type":"text_delta","text":1}}`,
				`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":null}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`,
				`{"type":"message_delta","usage":[1]}`,
			),
			want:    `{"type":"message","content":[{"type":"text","text":null}]}`,
			skipped: 6,
		},
		{
			name: "messages unknown delta still creates its block", dialect: DialectMessages,
			body: sse(`{"type":"content_block_delta","index":4,"delta":{"type":"signature_delta","signature":"s"}}`),
			want: `{"type":"message","content":[{}]}`,
		},
		{
			name: "responses terminal response kept over later ones", dialect: DialectResponses,
			body: sse(
				`{"type":"response.created","response":{"id":"r","status":"in_progress"}}`,
				`{"type":"response.completed","response":{"id":"r","status":"completed","usage":{"total_tokens":3}}}`,
				`{"type":"response.output_text.delta","delta":"x"}`,
				`{"type":"response.in_progress","response":{"id":"late"}}`,
			),
			want: `{"id":"r","status":"completed","usage":{"total_tokens":3}}`,
		},
		{
			name: "responses without any response object", dialect: DialectResponses,
			body: sse(`{"type":"response.output_text.delta","delta":"x"}`, `{"type":"response.completed","response":[]}`),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewCapture(tt.dialect)
			require.NoError(t, err)
			c.Feed([]byte(tt.body))
			c.Close(true)
			got, ok := c.Response()
			if tt.want == "" {
				assert.False(t, ok, "got %s", got)
			} else {
				require.True(t, ok)
				assert.Equal(t, tt.want, string(got))
			}
			st := c.Stats()
			assert.Equal(t, tt.skipped, st.Skipped, "skipped")
			assert.Equal(t, tt.parse, st.ParseErrors, "parse errors")
			assert.Equal(t, int64(len(tt.body)), st.Bytes)
		})
	}
}

func TestCaptureLifecycle(t *testing.T) {
	c, err := NewCapture(DialectChat)
	require.NoError(t, err)
	_, ok := c.Response()
	assert.False(t, ok, "nothing yet")

	assert.Equal(t, TerminalNone, c.Feed([]byte(sse(`{"id":"a","choices":[{"delta":{"content":"x"}}]}`))))
	partial, ok := c.Response()
	require.True(t, ok, "a partial response is available before Close (D3)")
	assert.Contains(t, string(partial), `"content":"x"`)

	assert.Equal(t, TerminalNone, c.Feed([]byte(`data: {"choices":[{"delta":{"content":"y"},"finish_reason":"stop"}]}`)))
	assert.Equal(t, TerminalComplete, c.Close(true), "final event without blank line counts at clean EOF (D8)")
	assert.Equal(t, TerminalComplete, c.Close(false), "Close is idempotent")
	assert.Equal(t, TerminalComplete, c.Feed([]byte(sse(`{"choices":[{"delta":{"content":"z"}}]}`))), "Feed after Close is ignored")
	got, ok := c.Response()
	require.True(t, ok)
	assert.Contains(t, string(got), `"content":"xy"`)
	again, _ := c.Response()
	assert.Equal(t, got, again, "Response does not change state")
	assert.Equal(t, 2, c.Stats().Events)
}

func TestCaptureTerminalLatchesAndReassemblyGoesOn(t *testing.T) {
	c, err := NewCapture(DialectChat)
	require.NoError(t, err)
	assert.Equal(t, TerminalError, c.Feed([]byte(sse(`{"error":{"message":"boom"}}`))))
	assert.Equal(t, TerminalError, c.Feed([]byte(sse(`{"choices":[{"delta":{"content":"late"}}]}`, `[DONE]`))))
	assert.Equal(t, TerminalError, c.Close(true))
	got, ok := c.Response()
	require.True(t, ok)
	assert.Contains(t, string(got), `"content":"late"`)
}

func TestCaptureBoundKeepsTerminalName(t *testing.T) {
	big := strings.Repeat("x", 200)
	body := "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"t\":\"" + big + "\"}}\n\n"
	c, err := NewCapture(DialectResponses, WithMaxEventBytes(100))
	require.NoError(t, err)
	assert.Equal(t, TerminalComplete, c.Feed([]byte(body)), "the name fitted, so the terminal is seen")
	c.Close(true)
	_, ok := c.Response()
	assert.False(t, ok, "the data was dropped")
	assert.Equal(t, 1, c.Stats().BoundHits)
}

func TestNewCaptureUnknownDialect(t *testing.T) {
	_, err := NewCapture("completions")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"completions"`)
	_, ok := Reassemble("completions", []byte(sse(`{"choices":[{}]}`)))
	assert.False(t, ok)
}

// FuzzCapture checks that any body, fed in pieces, gives the same terminal state and response
// as the same body fed whole, and never panics.
func FuzzCapture(f *testing.F) {
	f.Add(DialectChat, []byte(sse(`{"id":"a","choices":[{"index":1,"delta":{"content":"x","tool_calls":[{"index":0,"function":{"name":"f","arguments":"{}"}}]},"finish_reason":"stop"}]}`, `[DONE]`)), uint8(3))
	f.Add(DialectMessages, []byte("event: message_start\r\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":1}}}\r\n\r\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}\r\r"), uint8(5))
	f.Add(DialectResponses, []byte(sse(`{"type":"response.completed","response":{"id":"r"}}`)), uint8(1))
	f.Add(DialectChat, []byte(sse(`{"choices":[{"delta":{"content":[{"type":"text","text":"a"},{"type":"thinking","thinking":[{"text":"t"}]}],"reasoning":{"r":1},"tool_calls":[{"id":1,"function":{"name":[2],"arguments":{"a":1.0}}}]}}]}`)), uint8(4))
	f.Fuzz(func(t *testing.T, dialect string, body []byte, step uint8) {
		whole, err := NewCapture(dialect)
		if err != nil {
			return
		}
		wholeTerm := whole.Feed(body)
		wholeFinal := whole.Close(true)
		wantResp, wantOK := whole.Response()

		pieces, err := NewCapture(dialect)
		if err != nil {
			t.Fatal(err)
		}
		n := int(step%16) + 1
		for i := 0; i < len(body); i += n {
			pieces.Feed(body[i:min(i+n, len(body))])
		}
		if pieces.Terminal() != wholeTerm {
			t.Fatalf("terminal in pieces %v, whole %v", pieces.Terminal(), wholeTerm)
		}
		if got := pieces.Close(true); got != wholeFinal {
			t.Fatalf("final terminal in pieces %v, whole %v", got, wholeFinal)
		}
		gotResp, gotOK := pieces.Response()
		if gotOK != wantOK || string(gotResp) != string(wantResp) {
			t.Fatalf("response in pieces %q %v, whole %q %v", gotResp, gotOK, wantResp, wantOK)
		}
	})
}
