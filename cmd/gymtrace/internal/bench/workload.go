package bench

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Workload names, in the order `gymtrace bench` runs them.
const (
	WorkloadSmall   = "small"   // short JSON answer
	WorkloadJSON20K = "json20k" // 20 KiB JSON answer
	WorkloadSSE200  = "sse200"  // 200 SSE events, 5 ms apart
	WorkloadSSE1M   = "sse1m"   // 1 MiB SSE stream, events back to back (memory check; not in "all")
)

// WorkloadNames lists the workloads "all" stands for, in run order.
var WorkloadNames = []string{WorkloadSmall, WorkloadJSON20K, WorkloadSSE200}

// ExtraWorkloadNames lists the workloads run only when named: [WorkloadSSE1M], the memory check of
// issue 6 (peak proxy RSS against the bytes of the streams in flight), and the token-capture
// workloads of [TokenWorkloadNames] ("tokens" names both).
var ExtraWorkloadNames = append([]string{WorkloadSSE1M}, TokenWorkloadNames...)

// Sizes of the workloads.
const (
	json20KBytes = 20 << 10             // body bytes of the json20k answer
	sseEvents    = 200                  // events of the sse200 answer, "data: [DONE]" included
	sseGap       = 5 * time.Millisecond // pause between two consecutive sse200 events
	sse1MBytes   = 1 << 20              // body bytes of the sse1m answer, to within one event
	sse1MText    = 4 << 10              // content bytes of each sse1m delta event
)

// Workload is one kind of model call the bench repeats: an OpenAI Chat Completions request and the
// upstream's fixed answer to it. A Workload is immutable after construction and safe for concurrent
// use.
type Workload struct {
	// Name is one of [WorkloadNames].
	Name string
	// Description says what the workload is, for the report header.
	Description string
	// Request is the request body every call sends.
	Request []byte
	// Response is the JSON answer body; nil for a stream.
	Response []byte
	// Events are the SSE answer's frames ("data: ...\n\n"), sent in order with Gap between two
	// consecutive ones; nil for a JSON answer.
	Events [][]byte
	// Gap is the pause between two events of a stream (0 for JSON answers).
	Gap time.Duration
	// TokenSource, when not "", is the capture targets' --token-source: the calls go under
	// /ng-rollout/<id>/training-token-capture/ to rollouts of tokenCallsPerRollout calls, and
	// every answered call must also have its token entry. "" for the capture-only workloads.
	TokenSource string
	// weight is the workload's share of the duration budget (streams need longer per call).
	weight int
	// handler is the upstream's handler; nil means [workloadHandler] (the fixed answer).
	handler http.Handler
}

// Stream reports whether the answer is an SSE stream.
func (w *Workload) Stream() bool { return w.Events != nil }

// ResponseBytes is the length of the answer body in bytes (all events for a stream).
func (w *Workload) ResponseBytes() int {
	if !w.Stream() {
		return len(w.Response)
	}
	n := 0
	for _, e := range w.Events {
		n += len(e)
	}
	return n
}

// Body is the answer body a call must return, byte for byte: the JSON answer, or every event of the
// stream in order (for a token workload, the upstream's answer to the client's own request, which
// the capture targets restore, docs/TOKENS.md §0 T2). It is built anew on each call.
func (w *Workload) Body() []byte {
	if !w.Stream() {
		return w.Response
	}
	return bytes.Join(w.Events, nil)
}

// Workloads returns every workload in run order: those of [WorkloadNames], then those of
// [ExtraWorkloadNames]. The bodies are built on each call; they are identical every time.
func Workloads() []*Workload {
	return []*Workload{smallWorkload(), json20KWorkload(), sse200Workload(), sse1MWorkload(), tokensSmallWorkload(), tokensSSE200Workload()}
}

// LookupWorkloads resolves a list of workload names ("all" stands for those of [WorkloadNames],
// "tokens" for those of [TokenWorkloadNames]) into workloads in run order, without duplicates. An unknown name is an error naming it and the
// accepted names.
func LookupWorkloads(names []string) ([]*Workload, error) {
	want := make(map[string]bool)
	for _, n := range names {
		n = strings.TrimSpace(n)
		switch {
		case n == "all":
			for _, w := range WorkloadNames {
				want[w] = true
			}
		case n == WorkloadGroupTokens:
			for _, w := range TokenWorkloadNames {
				want[w] = true
			}
		case n == "":
			return nil, fmt.Errorf("bench: empty workload name in the list (want %s, tokens or all, comma-separated)", strings.Join(allWorkloadNames(), ", "))
		case slices.Contains(allWorkloadNames(), n):
			want[n] = true
		default:
			return nil, fmt.Errorf("bench: unknown workload %q (want %s, tokens or all)", n, strings.Join(allWorkloadNames(), ", "))
		}
	}
	if len(want) == 0 {
		return nil, fmt.Errorf("bench: no workload named (want %s, tokens or all)", strings.Join(allWorkloadNames(), ", "))
	}
	var out []*Workload
	for _, w := range Workloads() {
		if want[w.Name] {
			out = append(out, w)
		}
	}
	return out, nil
}

// allWorkloadNames is every accepted workload name, "all"'s first.
func allWorkloadNames() []string {
	return append(slices.Clip(WorkloadNames), ExtraWorkloadNames...)
}

// chatRequest is a Chat Completions request with a system and a user message; extra members are
// appended verbatim.
func chatRequest(extra string) []byte {
	return []byte(`{"model":"bench-model","messages":[{"role":"system","content":"You are a concise assistant used to benchmark the capture proxy."},` +
		`{"role":"user","content":"Answer the benchmark question with the prepared text."}]` + extra + `}`)
}

// chatCompletion is a complete chat.completion answer whose message content is the JSON string
// text (already escaped, without quotes).
func chatCompletion(text string) []byte {
	return []byte(`{"id":"chatcmpl-bench","object":"chat.completion","created":1760000000,"model":"bench-model",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"` + text + `","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":31,"completion_tokens":` + strconv.Itoa(max(1, len(text)/4)) + `,"total_tokens":` + strconv.Itoa(31+max(1, len(text)/4)) + `,` +
		`"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0}},` +
		`"service_tier":"default","system_fingerprint":"fp_bench"}`)
}

func smallWorkload() *Workload {
	req := chatRequest(`,"max_tokens":16`)
	resp := chatCompletion("The answer is 42.")
	return &Workload{
		Name:        WorkloadSmall,
		Description: fmt.Sprintf("chat completion, %d B request, %d B JSON answer", len(req), len(resp)),
		Request:     req, Response: resp, weight: 1,
	}
}

// benchWords is the vocabulary of the generated answer texts.
var benchWords = strings.Fields("the capture proxy writes every model call durably before the client sees its end " +
	"so that rollouts can be replayed scored and audited without losing a single token of evidence")

func json20KWorkload() *Workload {
	req := chatRequest(`,"max_tokens":8192`)
	overhead := len(chatCompletion(""))
	// Text of words with an escaped newline now and then, grown to the exact body size. The token
	// count in usage depends on the text length; its digits do not change within the range we fill.
	var b strings.Builder
	for i := 0; ; i++ {
		w := benchWords[i%len(benchWords)]
		if i%13 == 12 {
			w += `\n`
		}
		if b.Len()+1+len(w) > json20KBytes-overhead-16 {
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	text := b.String()
	for len(chatCompletion(text)) < json20KBytes {
		text += "."
	}
	resp := chatCompletion(text)
	return &Workload{
		Name:        WorkloadJSON20K,
		Description: fmt.Sprintf("chat completion, %d B JSON answer", len(resp)),
		Request:     req, Response: resp, weight: 1,
	}
}

func sse200Workload() *Workload {
	const head = `{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1760000000,"model":"bench-model","service_tier":"default","system_fingerprint":"fp_bench",`
	frame := func(data string) []byte { return []byte("data: " + data + "\n\n") }
	events := make([][]byte, 0, sseEvents)
	events = append(events, frame(head+`"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}`))
	deltas := sseEvents - 4 // role chunk, finish chunk, usage chunk, [DONE]
	for i := range deltas {
		w := " " + benchWords[i%len(benchWords)]
		events = append(events, frame(head+`"choices":[{"index":0,"delta":{"content":"`+w+`"},"logprobs":null,"finish_reason":null}]}`))
	}
	events = append(events,
		frame(head+`"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`),
		frame(head+`"choices":[],"usage":{"prompt_tokens":31,"completion_tokens":`+strconv.Itoa(deltas)+`,"total_tokens":`+strconv.Itoa(31+deltas)+`}}`),
		frame("[DONE]"))
	w := &Workload{
		Name:    WorkloadSSE200,
		Request: chatRequest(`,"stream":true,"stream_options":{"include_usage":true}`),
		Events:  events, Gap: sseGap, weight: 2,
	}
	w.Description = fmt.Sprintf("chat completion stream, %d events (%d B) %v apart", len(events), w.ResponseBytes(), sseGap)
	return w
}

// sse1MWorkload is a chat completion stream of about 1 MiB: a role event, deltas of sse1MText content
// bytes each, the finish and usage events and [DONE], sent back to back. Run at concurrency 256 it is
// issue 6's memory check: the proxy's peak RSS against 2.5 times the bytes of the streams in flight
// plus 64 MiB ([MemoryBound]).
func sse1MWorkload() *Workload {
	base := sse200Workload()
	role, tail := base.Events[0], base.Events[len(base.Events)-3:]
	const head = `{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1760000000,"model":"bench-model","service_tier":"default","system_fingerprint":"fp_bench",`
	var text strings.Builder
	for i := 0; text.Len() < sse1MText; i++ {
		text.WriteString(" " + benchWords[i%len(benchWords)])
	}
	delta := []byte("data: " + head + `"choices":[{"index":0,"delta":{"content":"` + text.String()[:sse1MText] + `"},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	events := [][]byte{role}
	size := len(role)
	for _, e := range tail {
		size += len(e)
	}
	for size+len(delta) <= sse1MBytes {
		events = append(events, delta)
		size += len(delta)
	}
	events = append(events, tail...)
	w := &Workload{
		Name:    WorkloadSSE1M,
		Request: base.Request,
		Events:  events, weight: 4,
	}
	w.Description = fmt.Sprintf("chat completion stream, %d events (%d B) back to back", len(events), w.ResponseBytes())
	return w
}
