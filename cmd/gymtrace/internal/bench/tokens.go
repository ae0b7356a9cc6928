package bench

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
)

// The token-capture workloads (issue #15 "Done when"): the upstream is the fake vLLM engine, the
// calls go under /ng-rollout/<id>/training-token-capture/ and the capture targets run with
// --token-source vllm, so each captured call gets the proxy's token members injected, its intent
// and token entry written, and the answer restored to what vLLM sends for the client's own request.
const (
	WorkloadTokensSmall  = "tokens-small"  // short vLLM chat answer, token capture
	WorkloadTokensSSE200 = "tokens-sse200" // 200-event vLLM chat stream 5 ms apart, token capture
	// WorkloadGroupTokens names both token workloads in [LookupWorkloads].
	WorkloadGroupTokens = "tokens"
)

// TokenWorkloadNames lists the token-capture workloads, in run order.
var TokenWorkloadNames = []string{WorkloadTokensSmall, WorkloadTokensSSE200}

// tokenSourceVLLM is the capture targets' --token-source for the token workloads.
const tokenSourceVLLM = "vllm"

// tokenModel is the model the token workloads ask the fake vLLM for.
const tokenModel = "Qwen/Qwen3-8B"

// tokenCallsPerRollout is how many calls of one worker share a rollout id in a token workload
// (bench-<worker>-<k>): a multi-turn rollout's worth. The token store rewrites a rollout's state
// (one digest per entry) at each append, as Gym's does, so one rollout holding a whole cell's
// calls would measure a rollout no agent makes.
const tokenCallsPerRollout = 8

// sse200ToolResultRunes is the length of the tool result the tokens-sse200 request carries: the
// fake answers "The lookup tool returned: <result>", one token per rune of this result, so that
// the stream has 200 events (the first chunk with the role, one chunk per generated token,
// <|im_end|> included, the usage chunk and [DONE]).
const sse200ToolResultRunes = 190

// tokenUpstream is the token workloads' model server ([replayUpstream]): the fake vLLM engine's
// answers, streamed with gap between two events.
func tokenUpstream(gap time.Duration) http.Handler {
	return &replayUpstream{fake: fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM)), gap: gap}
}

// maxReplayAnswers bounds the answers a [replayUpstream] keeps; further request bodies are
// rendered at every call.
const maxReplayAnswers = 16

// maxReplayRequestBytes bounds a request body a [replayUpstream] reads.
const maxReplayRequestBytes = 1 << 20

// replayUpstream answers every POST to a path ending in /v1/chat/completions (rollout prefix
// included: it is ignored, as a Gym model server strips it) with the fake vLLM engine's answer to
// the request body: rendered once per distinct body (the fake is deterministic; the bench sends
// two, the client's own and the capture proxy's with the token members added) and then replayed
// by [workloadHandler] with the workload's pacing. So the upstream costs every target the same
// small CPU, as the fixed answers of the other workloads do, instead of the fake building every
// chunk anew (with log probs and ids only for the capture targets). Safe for concurrent use.
type replayUpstream struct {
	fake http.Handler
	gap  time.Duration

	mu      sync.Mutex
	answers map[string]http.Handler // request body → the replay of its answer
}

func (u *replayUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/v1/chat/completions") {
		workloadHandler(&Workload{}).ServeHTTP(w, r) // its 404 or 405
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxReplayRequestBytes))
	if err != nil {
		return
	}
	u.mu.Lock()
	replay, ok := u.answers[string(body)]
	u.mu.Unlock()
	if !ok {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
		req.Header = r.Header.Clone()
		u.fake.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK { // an error answer: passed on as it is, never kept
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
			return
		}
		wl := &Workload{Gap: u.gap}
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
			wl.Events = splitEvents(rec.Body.Bytes())
		} else {
			wl.Response = rec.Body.Bytes()
		}
		replay = workloadHandler(wl)
		u.mu.Lock()
		if u.answers == nil {
			u.answers = make(map[string]http.Handler)
		}
		if len(u.answers) < maxReplayAnswers {
			u.answers[string(body)] = replay
		}
		u.mu.Unlock()
	}
	r = r.Clone(r.Context())
	r.Body = http.NoBody // read above
	replay.ServeHTTP(w, r)
}

// splitEvents cuts an SSE body into its frames, each ending with its blank line.
func splitEvents(b []byte) [][]byte {
	var events [][]byte
	for len(b) > 0 {
		i := bytes.Index(b, []byte("\n\n"))
		if i < 0 {
			return append(events, b)
		}
		events = append(events, b[:i+2])
		b = b[i+2:]
	}
	return events
}

// tokenAnswer is the fake vLLM's answer to req as the client receives it without token capture
// (the bytes the capture proxy must give back, docs/TOKENS.md §0 T2): the JSON body, or the
// stream's frames.
func tokenAnswer(req []byte, stream bool) (body []byte, events [][]byte) {
	rec := httptest.NewRecorder()
	httpReq := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(req))
	httpReq.Header.Set("Content-Type", "application/json")
	fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM)).ServeHTTP(rec, httpReq)
	if !stream {
		return rec.Body.Bytes(), nil
	}
	return nil, splitEvents(rec.Body.Bytes())
}

func tokensSmallWorkload() *Workload {
	req := []byte(`{"model":"` + tokenModel + `","messages":[{"role":"system","content":"You are a concise assistant used to benchmark the capture proxy."},` +
		`{"role":"user","content":"Answer the benchmark question with the prepared text."}],"max_tokens":64}`)
	resp, _ := tokenAnswer(req, false)
	return &Workload{
		Name:        WorkloadTokensSmall,
		Description: fmt.Sprintf("fake vLLM chat completion under the token prefix, --token-source vllm, %d B request, %d B JSON answer", len(req), len(resp)),
		Request:     req, Response: resp, TokenSource: tokenSourceVLLM, weight: 1,
		handler: tokenUpstream(0),
	}
}

func tokensSSE200Workload() *Workload {
	return tokenStreamWorkload(sse200ToolResultRunes, sseGap)
}

// tokenStreamWorkload is the tokens-sse200 workload with a tool result of resultRunes runes (one
// generated token each) and gap between two events.
func tokenStreamWorkload(resultRunes int, gap time.Duration) *Workload {
	var result strings.Builder
	for i := range resultRunes {
		if i%2 == 0 {
			result.WriteByte(byte('0' + i/2%10))
		} else {
			result.WriteByte(',')
		}
	}
	req := []byte(`{"model":"` + tokenModel + `","messages":[{"role":"system","content":"You are a concise assistant used to benchmark the capture proxy."},` +
		`{"role":"user","content":"Look the benchmark numbers up."},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_bench","type":"function","function":{"name":"lookup","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"call_bench","content":"` + result.String() + `"}],` +
		`"max_tokens":512,"stream":true,"stream_options":{"include_usage":true}}`)
	_, events := tokenAnswer(req, true)
	w := &Workload{
		Name:    WorkloadTokensSSE200,
		Request: req, Events: events, Gap: gap, TokenSource: tokenSourceVLLM, weight: 2,
		handler: tokenUpstream(gap),
	}
	w.Description = fmt.Sprintf("fake vLLM chat completion stream under the token prefix, --token-source vllm, %d events (%d B) %v apart", len(events), w.ResponseBytes(), gap)
	return w
}
