package stream

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// This file measures SSE decode + terminal detection + reassembly per dialect and per kind of
// delta (text, tool-call arguments, reasoning), fed the way the proxy's tee feeds it: one Feed per
// event (a live stream whose events arrive apart, as vLLM and the providers pace them) or in 32 KiB
// reads (a stream that is already buffered). bench_test.go's BenchmarkCapture covers text deltas in
// 4 KiB reads; this adds the other shapes and the per-event feed, and reports ns and allocations
// per event besides MB/s (issue 6: ≥ 150 MB/s per core for chat streams, allocations per event
// bounded).

// reassemblyEvents is the number of delta events of each benchmark stream.
const reassemblyEvents = 200

// reassemblyShapes are the kinds of delta a stream carries.
var reassemblyShapes = []string{"text", "tool_args", "reasoning"}

// reassemblyStream returns the events of a realistic stream of dialect made of reassemblyEvents
// deltas of the given shape, plus the dialect's start and terminal events, each event as its own
// byte slice (with its blank line).
func reassemblyStream(dialect, shape string) [][]byte {
	word := func(i int) string { return fmt.Sprintf(" tok%d", i) }
	argPiece := func(i int) string {
		if i == 0 {
			return `{\"query\": \"`
		}
		return fmt.Sprintf("part%d ", i)
	}
	var evs []string
	add := func(format string, args ...any) { evs = append(evs, fmt.Sprintf(format, args...)) }
	switch dialect {
	case DialectChat:
		const head = `data: {"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":1760000000,"model":"gpt-4.1-mini-2025-04-14","service_tier":"default","system_fingerprint":"fp_6ec2e2a5b9",`
		switch shape {
		case "tool_args":
			add(head + `"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_Jm3k8yq2LX8q0ZsbDxqTb6fE","type":"function","function":{"name":"search","arguments":""}}],"refusal":null},"logprobs":null,"finish_reason":null}]}` + "\n\n")
		default:
			add(head + `"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}` + "\n\n")
		}
		for i := range reassemblyEvents {
			switch shape {
			case "text":
				add(head+`"choices":[{"index":0,"delta":{"content":%q},"logprobs":null,"finish_reason":null}]}`+"\n\n", word(i))
			case "tool_args":
				add(head+`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"%s"}}]},"logprobs":null,"finish_reason":null}]}`+"\n\n", argPiece(i))
			case "reasoning":
				add(head+`"choices":[{"index":0,"delta":{"reasoning_content":%q},"logprobs":null,"finish_reason":null}]}`+"\n\n", word(i))
			}
		}
		finish := "stop"
		if shape == "tool_args" {
			add(head + `"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]},"logprobs":null,"finish_reason":null}]}` + "\n\n")
			finish = "tool_calls"
		}
		add(head+`"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":%q}]}`+"\n\n", finish)
		add(head+`"choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":1024},"completion_tokens_details":{"reasoning_tokens":0}}}`+"\n\n", reassemblyEvents, 1200+reassemblyEvents)
		add("data: [DONE]\n\n")
	case DialectMessages:
		add("event: message_start\ndata: " + `{"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1200,"cache_creation_input_tokens":0,"cache_read_input_tokens":1024,"output_tokens":1}}}` + "\n\n")
		switch shape {
		case "text":
			add("event: content_block_start\ndata: " + `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n")
		case "tool_args":
			add("event: content_block_start\ndata: " + `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"search","input":{}}}` + "\n\n")
		case "reasoning":
			add("event: content_block_start\ndata: " + `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}` + "\n\n")
		}
		add("event: ping\ndata: {\"type\":\"ping\"}\n\n")
		for i := range reassemblyEvents {
			switch shape {
			case "text":
				add("event: content_block_delta\ndata: "+`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}}`+"\n\n", word(i))
			case "tool_args":
				add("event: content_block_delta\ndata: "+`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"%s"}}`+"\n\n", argPiece(i))
			case "reasoning":
				add("event: content_block_delta\ndata: "+`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":%q}}`+"\n\n", word(i))
			}
		}
		stop := "end_turn"
		switch shape {
		case "tool_args":
			add("event: content_block_delta\ndata: " + `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"}"}}` + "\n\n")
			stop = "tool_use"
		case "reasoning":
			add("event: content_block_delta\ndata: " + `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}}` + "\n\n")
		}
		add("event: content_block_stop\ndata: " + `{"type":"content_block_stop","index":0}` + "\n\n")
		add("event: message_delta\ndata: "+`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`+"\n\n", stop, reassemblyEvents)
		add("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	case DialectResponses:
		const resp = `"id":"resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b","object":"response","created_at":1760000000,"model":"gpt-4.1-mini-2025-04-14"`
		add("event: response.created\ndata: "+`{"type":"response.created","sequence_number":0,"response":{%s,"status":"in_progress","output":[],"usage":null}}`+"\n\n", resp)
		var item, deltaType, doneItem string
		var full strings.Builder
		switch shape {
		case "text":
			item, deltaType = `{"id":"msg_1","type":"message","status":"in_progress","content":[],"role":"assistant"}`, "response.output_text.delta"
		case "tool_args":
			item, deltaType = `{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_1","name":"search"}`, "response.function_call_arguments.delta"
		case "reasoning":
			item, deltaType = `{"id":"rs_1","type":"reasoning","summary":[]}`, "response.reasoning_summary_text.delta"
		}
		add("event: response.output_item.added\ndata: "+`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":%s}`+"\n\n", item)
		for i := range reassemblyEvents {
			piece := word(i)
			if shape == "tool_args" {
				piece = argPiece(i)
				full.WriteString(strings.ReplaceAll(piece, `\"`, `"`))
				add("event: %s\ndata: "+`{"type":%q,"sequence_number":%d,"item_id":"fc_1","output_index":0,"delta":"%s"}`+"\n\n", deltaType, deltaType, i+2, piece)
				continue
			}
			full.WriteString(piece)
			add("event: %s\ndata: "+`{"type":%q,"sequence_number":%d,"item_id":"x_1","output_index":0,"content_index":0,"delta":%q}`+"\n\n", deltaType, deltaType, i+2, piece)
		}
		switch shape {
		case "text":
			doneItem = fmt.Sprintf(`{"id":"msg_1","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":%q}],"role":"assistant"}`, full.String())
		case "tool_args":
			doneItem = fmt.Sprintf(`{"id":"fc_1","type":"function_call","status":"completed","arguments":%q,"call_id":"call_1","name":"search"}`, full.String()+`"}`)
		case "reasoning":
			doneItem = fmt.Sprintf(`{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":%q}]}`, full.String())
		}
		add("event: response.output_item.done\ndata: "+`{"type":"response.output_item.done","sequence_number":%d,"output_index":0,"item":%s}`+"\n\n", reassemblyEvents+2, doneItem)
		add("event: response.completed\ndata: "+`{"type":"response.completed","sequence_number":%d,"response":{%s,"status":"completed","output":[%s],"usage":{"input_tokens":1200,"input_tokens_details":{"cached_tokens":1024},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":%d}}}`+"\n\n",
			reassemblyEvents+3, resp, doneItem, reassemblyEvents, 1200+reassemblyEvents)
	}
	out := make([][]byte, len(evs))
	for i, e := range evs {
		out[i] = []byte(e)
	}
	return out
}

// rechunk joins events and cuts the body into reads of size bytes.
func rechunk(events [][]byte, size int) [][]byte {
	var body []byte
	for _, e := range events {
		body = append(body, e...)
	}
	var out [][]byte
	for i := 0; i < len(body); i += size {
		out = append(out, body[i:min(i+size, len(body))])
	}
	return out
}

// BenchmarkReassembly feeds each stream through a new Capture, closes it and builds the response,
// per dialect, delta shape and feed size. Metrics: MB/s of SSE body, allocs/op and B/op for the
// whole stream, and ns/event and allocs/event over all its events.
func BenchmarkReassembly(b *testing.B) {
	for _, dialect := range []string{DialectChat, DialectMessages, DialectResponses} {
		for _, shape := range reassemblyShapes {
			events := reassemblyStream(dialect, shape)
			feeds := map[string][][]byte{"per_event": events, "32KiB": rechunk(events, 32<<10)}
			for _, feed := range []string{"per_event", "32KiB"} {
				pieces := feeds[feed]
				b.Run(dialect+"/"+shape+"/"+feed, func(b *testing.B) {
					benchCaptureFeed(b, dialect, pieces, len(events))
				})
			}
		}
	}
}

// benchCaptureFeed runs one stream fed as pieces per iteration and reports the per-event metrics.
func benchCaptureFeed(b *testing.B, dialect string, pieces [][]byte, events int) {
	size := 0
	for _, p := range pieces {
		size += len(p)
	}
	check := func() {
		c, err := NewCapture(dialect)
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range pieces {
			c.Feed(p)
		}
		if c.Close(true) != TerminalComplete {
			b.Fatalf("terminal %v, want complete", c.Terminal())
		}
		if s := c.Stats(); s.ParseErrors != 0 || s.Skipped != 0 || s.Events != events {
			b.Fatalf("stats %+v, want %d events, no parse errors or skips", s, events)
		}
		if _, ok := c.Response(); !ok {
			b.Fatal("no response")
		}
	}
	check() // the stream is valid and reassembles cleanly
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		c, _ := NewCapture(dialect)
		for _, p := range pieces {
			c.Feed(p)
		}
		c.Close(true)
		if _, ok := c.Response(); !ok {
			b.Fatal("no response")
		}
	}
	runtime.ReadMemStats(&after)
	n := float64(b.N) * float64(events)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/event")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/event")
}

// TestReassemblyStreams keeps the benchmark streams honest: each one reassembles to the answer its
// deltas spell, so a benchmark never measures a stream the reassembly rejects.
func TestReassemblyStreams(t *testing.T) {
	for _, dialect := range []string{DialectChat, DialectMessages, DialectResponses} {
		for _, shape := range reassemblyShapes {
			t.Run(dialect+"/"+shape, func(t *testing.T) {
				events := reassemblyStream(dialect, shape)
				c, err := NewCapture(dialect)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range events {
					c.Feed(e)
				}
				if got := c.Close(true); got != TerminalComplete {
					t.Fatalf("terminal %v, want complete", got)
				}
				if s := c.Stats(); s.ParseErrors != 0 || s.Skipped != 0 || s.Events != len(events) {
					t.Fatalf("stats %+v, want %d events", s, len(events))
				}
				resp, ok := c.Response()
				if !ok {
					t.Fatal("no response")
				}
				// The deltas in order, from the first to the last, as the response holds them.
				first, last := " tok0 tok1 tok2", " tok198 tok199"
				if shape == "tool_args" {
					first, last = `{\"query\": \"part1 part2`, `part199 \"}`
					if dialect == DialectMessages { // Anthropic input is parsed into an object
						first, last = `"input":{"query":"part1 part2`, `part199 "}`
					}
				}
				if !strings.Contains(string(resp), first) || !strings.Contains(string(resp), last) {
					t.Fatalf("response does not hold the reassembled deltas %q ... %q: %.300s", first, last, resp)
				}
			})
		}
	}
}
