package capture

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// This file measures record encoding, the per-call work between the bodies a capture proxy saw and
// the line it appends (issue 6): the payload checks and compaction (RequestPayload, ResponsePayload,
// RawText), the record → span attributes mapping (ExchangeAttributes), the span → record mapping
// the exporter runs (ExchangeFromAttributes) and the line encoding (Exchange.AppendJSON), each on
// its own and chained, over call shapes from the bench workloads and from agent rollouts.
// exchange_test.go's BenchmarkExchangeAppendJSON and attributes_test.go's BenchmarkExchangeAttributes
// cover one tiny record each; these add realistic sizes and report MB/s.

// perfCase is one captured call as the proxy sees it: the raw request and response bodies (for a
// stream, the SSE text and the response it reassembles to).
type perfCase struct {
	name        string
	dialect     string
	request     []byte
	response    []byte // JSON body, or the reassembled response of a stream
	sse         []byte // SSE body of a stream; nil for JSON
	wantToolUse bool   // the derived record has tool calls
}

// perfChatCompletion is a chat.completion answer with message content text (escaped JSON text).
func perfChatCompletion(text string) string {
	return `{"id":"chatcmpl-bench","object":"chat.completion","created":1760000000,"model":"bench-model",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"` + text + `","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":31,"completion_tokens":250,"total_tokens":281,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},` +
		`"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0}},"service_tier":"default","system_fingerprint":"fp_bench"}`
}

// perfWords returns n words of filler text separated by spaces, an escaped newline every 13 words.
func perfWords(n int) string {
	words := strings.Fields("the capture proxy writes every model call durably before the client sees its end so rollouts can be replayed")
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[i%len(words)])
		if i%13 == 12 {
			b.WriteString(`\n`)
		}
	}
	return b.String()
}

// perfAgentMessages is a chat conversation of an agent rollout: a system prompt, then turns of
// user text, assistant tool calls and tool results, about 1 KiB per turn, in pretty-printed JSON as
// Python clients send it.
func perfAgentMessages(turns int) string {
	var b strings.Builder
	b.WriteString(`[{"role": "system", "content": "You are an agent that solves tasks with tools. ` + perfWords(60) + `"}`)
	for i := range turns {
		fmt.Fprintf(&b, `, {"role": "user", "content": "step %d: %s"}`, i, perfWords(40))
		fmt.Fprintf(&b, `, {"role": "assistant", "content": null, "tool_calls": [{"id": "call_%d", "type": "function", "function": {"name": "run_shell", "arguments": "{\"cmd\": \"grep -rn 'step %d' src/ | head -20\"}"}}]}`, i, i)
		fmt.Fprintf(&b, `, {"role": "tool", "tool_call_id": "call_%d", "content": "%s"}`, i, perfWords(70))
	}
	b.WriteString("]")
	return b.String()
}

// perfCases are the call shapes measured: the three `gymtrace bench` workloads and two agent
// rollout calls with a long conversation (Chat with a tool call answer; Anthropic Messages with
// thinking and a tool use, streamed).
func perfCases() []perfCase {
	smallReq := `{"model":"bench-model","messages":[{"role":"system","content":"You are a concise assistant used to benchmark the capture proxy."},{"role":"user","content":"Answer the benchmark question with the prepared text."}],"max_tokens":16}`
	text20k := perfWords(3300)
	var sse strings.Builder
	var content strings.Builder
	const head = `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1760000000,"model":"bench-model","service_tier":"default","system_fingerprint":"fp_bench",`
	sse.WriteString(head + `"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	for i := range 196 {
		w := fmt.Sprintf(" tok%d", i)
		content.WriteString(w)
		sse.WriteString(head + `"choices":[{"index":0,"delta":{"content":"` + w + `"},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	}
	sse.WriteString(head + `"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}` + "\n\n")
	sse.WriteString(head + `"choices":[],"usage":{"prompt_tokens":31,"completion_tokens":196,"total_tokens":227}}` + "\n\n")
	sse.WriteString("data: [DONE]\n\n")
	streamResp := `{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1760000000,"model":"bench-model","service_tier":"default","system_fingerprint":"fp_bench",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"` + content.String() + `","refusal":null},"logprobs":null,"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":31,"completion_tokens":196,"total_tokens":227}}`

	agentReq := `{"model": "policy", "messages": ` + perfAgentMessages(30) + `, "tools": [{"type": "function", "function": {"name": "run_shell", "description": "Run a shell command", "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}}], "temperature": 1.0, "max_tokens": 4096}`
	agentResp := `{"id":"chatcmpl-agent","object":"chat.completion","created":1760000000,"model":"policy","choices":[{"index":0,"message":{"role":"assistant","content":null,` +
		`"reasoning_content":"` + perfWords(120) + `","tool_calls":[{"id":"call_99","type":"function","function":{"name":"run_shell","arguments":"{\"cmd\": \"go test ./...\"}"}}]},` +
		`"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":9100,"completion_tokens":180,"total_tokens":9280,"prompt_tokens_details":{"cached_tokens":8960},"completion_tokens_details":{"reasoning_tokens":150}}}`

	msgsReq := `{"model":"claude-sonnet-4-5","max_tokens":8192,"thinking":{"type":"enabled","budget_tokens":4096},"system":"You are an agent. ` + perfWords(60) + `","messages":[` +
		strings.Repeat(`{"role":"user","content":[{"type":"text","text":"`+perfWords(80)+`"}]},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"run_shell","input":{"cmd":"ls -la"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"`+perfWords(60)+`"}]},`, 20) +
		`{"role":"user","content":"go on"}],"tools":[{"name":"run_shell","description":"Run a shell command","input_schema":{"type":"object","properties":{"cmd":{"type":"string"}}}}],"stream":true}`
	thinking := perfWords(150)
	var msgsSSE strings.Builder
	msgsSSE.WriteString("event: message_start\ndata: " + `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":9000,"cache_creation_input_tokens":0,"cache_read_input_tokens":8800,"output_tokens":1}}}` + "\n\n")
	msgsSSE.WriteString("event: content_block_start\ndata: " + `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}` + "\n\n")
	for _, w := range strings.Fields(thinking) {
		msgsSSE.WriteString("event: content_block_delta\ndata: " + `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"` + w + ` "}}` + "\n\n")
	}
	msgsSSE.WriteString("event: content_block_stop\ndata: " + `{"type":"content_block_stop","index":0}` + "\n\n")
	msgsSSE.WriteString("event: content_block_start\ndata: " + `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_2","name":"run_shell","input":{}}}` + "\n\n")
	msgsSSE.WriteString("event: content_block_delta\ndata: " + `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"cmd\": \"go test ./...\"}"}}` + "\n\n")
	msgsSSE.WriteString("event: content_block_stop\ndata: " + `{"type":"content_block_stop","index":1}` + "\n\n")
	msgsSSE.WriteString("event: message_delta\ndata: " + `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":240}}` + "\n\n")
	msgsSSE.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	var thinkingJoined strings.Builder
	for _, w := range strings.Fields(thinking) {
		thinkingJoined.WriteString(w + " ")
	}
	msgsResp := `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"` + thinkingJoined.String() + `","signature":""},` +
		`{"type":"tool_use","id":"toolu_2","name":"run_shell","input":{"cmd":"go test ./..."}}],"stop_reason":"tool_use","stop_sequence":null,` +
		`"usage":{"input_tokens":9000,"cache_creation_input_tokens":0,"cache_read_input_tokens":8800,"output_tokens":240}}`

	return []perfCase{
		{name: "small", dialect: "chat", request: []byte(smallReq), response: []byte(perfChatCompletion("The answer is 42."))},
		{name: "json20k", dialect: "chat", request: []byte(smallReq), response: []byte(perfChatCompletion(text20k))},
		{name: "sse200", dialect: "chat", request: []byte(smallReq), response: []byte(streamResp), sse: []byte(sse.String())},
		{name: "agent_chat_30turns", dialect: "chat", request: []byte(agentReq), response: []byte(agentResp), wantToolUse: true},
		{name: "agent_messages_stream", dialect: "messages", request: []byte(msgsReq), response: []byte(msgsResp), sse: []byte(msgsSSE.String()), wantToolUse: true},
	}
}

// exchange builds the record the capture proxy would write for c, from its raw bodies, as the
// handler does: request and JSON response stored as compact objects, a stream's reassembled
// response stored with its SSE text as response_raw.
func (c perfCase) exchange() Exchange {
	status, ttft := 200, 0.8
	e := Exchange{
		ModelCallID: "863410a8d52e4be6a31efc5c6e9d4629", Dialect: c.dialect,
		ModelRef:  &ModelRef{Type: ModelRefType, Name: "policy_model"},
		StartedAt: 1786032154.1234567, CompletedAt: 1786032154.9661233, LatencyMS: 842.7,
		LatencyTTFTMS: &ttft, StatusCode: &status,
		TraceID: strings.Repeat("ab", 16), SpanID: strings.Repeat("cd", 8),
	}
	e.Request, e.RequestRaw = RequestPayload(c.request)
	if c.sse != nil {
		e.Response, _ = ResponsePayload(c.response)
		e.ResponseRaw = RawText(c.sse)
	} else {
		e.Response, e.ResponseRaw = ResponsePayload(c.response)
	}
	return e
}

// bodyBytes is the number of body bytes the proxy saw for c.
func (c perfCase) bodyBytes() int {
	if c.sse != nil {
		return len(c.request) + len(c.sse)
	}
	return len(c.request) + len(c.response)
}

// TestPerfCases keeps the benchmark inputs honest: every case is a valid record whose bodies are
// stored as objects and whose derived record has the expected shape.
func TestPerfCases(t *testing.T) {
	for _, c := range perfCases() {
		t.Run(c.name, func(t *testing.T) {
			e := c.exchange()
			if err := e.Validate(); err != nil {
				t.Fatal(err)
			}
			if e.Request == nil || e.RequestRaw != nil || e.Response == nil {
				t.Fatalf("bodies not stored as objects: request %d B, raw %v, response %d B", len(e.Request), e.RequestRaw != nil, len(e.Response))
			}
			if (c.sse != nil) != (e.ResponseRaw != nil) {
				t.Fatalf("response_raw present %v, want %v", e.ResponseRaw != nil, c.sse != nil)
			}
			rec, err := BuildModelCallRecord(e.AppendJSON(nil), 0)
			if err != nil {
				t.Fatal(err)
			}
			if rec.TokensOut == nil || rec.FinishReason == nil || rec.ErrorCategory != nil {
				t.Fatalf("derived record incomplete: tokens_out %v finish_reason %v error_category %v", rec.TokensOut, rec.FinishReason, rec.ErrorCategory)
			}
			if got := len(rec.ToolCalls) > 0; got != c.wantToolUse {
				t.Fatalf("tool calls %d, want some: %v", len(rec.ToolCalls), c.wantToolUse)
			}
		})
	}
}

// BenchmarkEncodePayloads measures checking and compacting the bodies into the record's
// request/response (and response_raw for streams). MB/s is over the body bytes.
func BenchmarkEncodePayloads(b *testing.B) {
	for _, c := range perfCases() {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(c.bodyBytes()))
			for b.Loop() {
				req, _ := RequestPayload(c.request)
				resp, _ := ResponsePayload(c.response)
				if c.sse != nil {
					_ = RawText(c.sse)
				}
				if req == nil || resp == nil {
					b.Fatal("payload not an object")
				}
			}
		})
	}
}

// BenchmarkEncodeLine measures Exchange.AppendJSON into a reused buffer. MB/s is over the line.
func BenchmarkEncodeLine(b *testing.B) {
	for _, c := range perfCases() {
		e := c.exchange()
		line := e.AppendJSON(nil)
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, len(line))
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				buf = e.AppendJSON(buf[:0])
			}
		})
	}
}

// BenchmarkEncodeToSpan measures the record → span attributes mapping (GenAI attributes included,
// message content off as by default). MB/s is over the line the record encodes to.
func BenchmarkEncodeToSpan(b *testing.B) {
	for _, c := range perfCases() {
		e := c.exchange()
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(e.AppendJSON(nil))))
			for b.Loop() {
				if attrs := ExchangeAttributes(&e); len(attrs) == 0 {
					b.Fatal("no attributes")
				}
			}
		})
	}
}

// BenchmarkEncodeFromSpan measures what the exporter does at span end: rebuild the record from
// the span's attributes and encode its line into a reused buffer. MB/s is over the line.
func BenchmarkEncodeFromSpan(b *testing.B) {
	start := time.Unix(1786032154, 123456700)
	end := start.Add(842700 * time.Microsecond)
	for _, c := range perfCases() {
		e := c.exchange()
		attrs := newAttrMap(ExchangeAttributes(&e))
		line := e.AppendJSON(nil)
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, len(line))
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				ex, problems, err := ExchangeFromAttributes(attrs, start, end)
				if err != nil || len(problems) > 0 {
					b.Fatal(err, problems)
				}
				buf = ex.AppendJSON(buf[:0])
			}
		})
	}
}

// BenchmarkEncodeCall chains the per-call encoding work of the capture proxy: bodies → record →
// span attributes → record → line. MB/s is over the body bytes the proxy saw.
func BenchmarkEncodeCall(b *testing.B) {
	start := time.Unix(1786032154, 123456700)
	end := start.Add(842700 * time.Microsecond)
	for _, c := range perfCases() {
		b.Run(c.name, func(b *testing.B) {
			var buf []byte
			b.ReportAllocs()
			b.SetBytes(int64(c.bodyBytes()))
			for b.Loop() {
				e := c.exchange()
				ex, _, err := ExchangeFromAttributes(newAttrMap(ExchangeAttributes(&e)), start, end)
				if err != nil {
					b.Fatal(err)
				}
				buf = ex.AppendJSON(buf[:0])
			}
		})
	}
}
