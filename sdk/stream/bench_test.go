package stream

import (
	"fmt"
	"strings"
	"testing"
)

// benchBodies returns a realistic SSE body per dialect: n small text deltas, the way the
// providers stream them, plus their start and terminal events.
func benchBodies(n int) map[string][]byte {
	var chat, msgs, resp strings.Builder
	var text strings.Builder
	chat.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1760000000,"model":"gpt-4.1-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	msgs.WriteString("event: message_start\ndata: " + `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":18,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}` + "\n\n")
	msgs.WriteString("event: content_block_start\ndata: " + `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n")
	resp.WriteString("event: response.created\ndata: " + `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}` + "\n\n")
	for i := 0; i < n; i++ {
		w := fmt.Sprintf("word%d ", i)
		text.WriteString(w)
		fmt.Fprintf(&chat, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1760000000,"model":"gpt-4.1-mini","choices":[{"index":0,"delta":{"content":%q},"logprobs":null,"finish_reason":null}]}`+"\n\n", w)
		fmt.Fprintf(&msgs, "event: content_block_delta\ndata: "+`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}}`+"\n\n", w)
		fmt.Fprintf(&resp, "event: response.output_text.delta\ndata: "+`{"type":"response.output_text.delta","sequence_number":%d,"item_id":"msg_1","output_index":0,"content_index":0,"delta":%q}`+"\n\n", i+1, w)
	}
	chat.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1760000000,"model":"gpt-4.1-mini","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}` + "\n\n")
	chat.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1760000000,"model":"gpt-4.1-mini","choices":[],"usage":{"prompt_tokens":6,"completion_tokens":2,"total_tokens":8}}` + "\n\ndata: [DONE]\n\n")
	msgs.WriteString("event: content_block_stop\ndata: " + `{"type":"content_block_stop","index":0}` + "\n\n")
	msgs.WriteString("event: message_delta\ndata: " + `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":11}}` + "\n\n")
	msgs.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	fmt.Fprintf(&resp, "event: response.completed\ndata: "+`{"type":"response.completed","sequence_number":%d,"response":{"id":"resp_1","object":"response","status":"completed","output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":%q,"annotations":[]}]}],"usage":{"input_tokens":10,"output_tokens":%d,"total_tokens":%d}}}`+"\n\n", n+1, text.String(), n, n+10)
	return map[string][]byte{
		DialectChat:      []byte(chat.String()),
		DialectMessages:  []byte(msgs.String()),
		DialectResponses: []byte(resp.String()),
	}
}

// BenchmarkCapture measures decode + terminal detection + reassembly, fed in 4 KiB reads as the
// proxy's tee does.
func BenchmarkCapture(b *testing.B) {
	bodies := benchBodies(2000)
	for _, dialect := range []string{DialectChat, DialectMessages, DialectResponses} {
		body := bodies[dialect]
		b.Run(dialect, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				c, err := NewCapture(dialect)
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; i < len(body); i += 4096 {
					c.Feed(body[i:min(i+4096, len(body))])
				}
				if c.Close(true) != TerminalComplete {
					b.Fatal("not complete")
				}
				if _, ok := c.Response(); !ok {
					b.Fatal("no response")
				}
			}
		})
	}
}

// BenchmarkDecoder measures framing alone.
func BenchmarkDecoder(b *testing.B) {
	body := benchBodies(2000)[DialectMessages]
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		d := NewDecoder(func(Event) {})
		for i := 0; i < len(body); i += 4096 {
			d.Feed(body[i:min(i+4096, len(body))])
		}
		d.Close()
	}
}
