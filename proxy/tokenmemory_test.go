package proxy

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/gymtrace/gymtrace/semconv"
	"github.com/gymtrace/gymtrace/tokens"
)

// hugeVLLMAnswer is what a vLLM (json.dumps: ", " and ": " separators) sends for n prompt ids, n
// generated ids and their log probs, the shape of the user trial's 244 MiB answer (n = 3M).
func hugeVLLMAnswer(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"id": "chatcmpl-x", "object": "chat.completion", "created": 1, "model": "huge", "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}, "prompt_token_ids": [`)
	ids := func() {
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Itoa(i))
		}
	}
	ids()
	b.WriteString(`], "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello world"}, "logprobs": {"content": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`{"token": "x", "logprob": -0.5, "bytes": null, "top_logprobs": []}`)
	}
	b.WriteString(`]}, "finish_reason": "stop", "stop_reason": null, "token_ids": [`)
	ids()
	b.WriteString(`]}]}`)
	return b.Bytes()
}

// bigAnswerEnv serves answer as a vLLM's JSON answer behind a token-capturing proxy.
func bigAnswerEnv(t *testing.T, answer []byte, opts ...Option) (*testEnv, string) {
	t.Helper()
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
		_, _ = w.Write(answer)
	})
	dir := t.TempDir()
	return newProxyEnv(t, up.URL, nil, append([]Option{WithTokenSource(TokenSourceVLLM), WithTokenDir(dir)}, opts...)...), dir
}

// postDiscard sends a token-captured chat call and reads the answer without keeping it.
func postDiscard(t *testing.T, env *testEnv) (status int, n int64) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, env.srv.URL+tokenPath, strings.NewReader(`{"model":"huge","messages":[],"logprobs":true}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := env.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	n, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, n
}

// TestTokenCaptureAllocatesFewCopiesOfTheAnswer: a token-captured call whose vLLM answer holds
// 200K prompt ids, 200K generated ids and their log probs (16 MiB) allocates, in all (the proxy,
// the test's upstream and client), at most 8 times the answer (7.3 measured): the answer held, the
// client's restored answer, the captureWriter's copy and the record's, the ids and the entry's
// line, and the growth of these buffers and slices (README "Token capture memory"). Reading it
// into JSON trees (the answer's, the served payload's) allocated 39 times the answer, about 4 GB
// of peak RSS for the trial's 244 MiB.
// TotalAlloc counts garbage too, so it bounds what the call holds at any moment; it is the same
// under the race detector, whose shadow memory is outside the Go heap. No timing is asserted.
func TestTokenCaptureAllocatesFewCopiesOfTheAnswer(t *testing.T) {
	answer := hugeVLLMAnswer(200_000)
	env, dir := bigAnswerEnv(t, answer)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	status, n := postDiscard(t, env)
	runtime.ReadMemStats(&after)
	require.Equal(t, http.StatusOK, status)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("answer %d bytes, client got %d: the call allocated %d bytes (%.2f× the answer)", len(answer), n, alloc, float64(alloc)/float64(len(answer)))
	assert.LessOrEqual(t, alloc, uint64(8*len(answer)), "at most 8 times the answer")

	st, err := tokens.OpenStore(dir)
	require.NoError(t, err)
	es, err := st.ReadEntries("r1")
	require.NoError(t, err)
	require.Len(t, es, 1, "the entry is written")
	assert.Len(t, es[0].PromptTokenIDs, 200_000)
	assert.Len(t, es[0].GenerationTokenIDs, 200_000)
	require.Len(t, es[0].GenerationLogProbs, 200_000)
	assert.Equal(t, int64(199_999), es[0].GenerationTokenIDs[199_999])
	assert.Equal(t, -0.5, es[0].GenerationLogProbs[0])
}

// TestTokenCaptureAnswerBound: an answer past WithMaxTokenAnswerBytes (below the capture bound)
// is treated as the token path treats one past the capture bound — forwarded from there on as
// received, unedited, and the rollout marked incomplete with cause capture_bound, the log and the counter
// naming it — but the capture record is whole (no capture_bound); an answer within the bound is
// captured. The same bound applies to a call whose answer is read as the client received it (gym).
func TestTokenCaptureAnswerBound(t *testing.T) {
	f := &fakeVLLM{inline: true}
	up := newUpstream(t, f.handler)
	const body = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	extended := string(direct(t, up.URL, `{"model":"m","messages":[{"role":"user","content":"hi"}],"logprobs":true,"top_logprobs":0,"return_token_ids":true}`))

	mp, reader := newMetricReader(t)
	dir := t.TempDir()
	env := newProxyEnv(t, up.URL, nil, WithTokenSource(TokenSourceVLLM), WithTokenDir(dir), WithMeterProvider(mp), WithMaxTokenAnswerBytes(int64(len(extended)-1)))
	resp, got, err := env.post(t, tokenPath, body, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, extended, string(got), "forwarded as received, unedited")
	rec := env.record(t, "r1")
	assert.NotContains(t, rec, "capture_bound", "the capture record is not bounded")
	recorded, _ := rec["response"].(map[string]any)
	assert.NotNil(t, recorded["prompt_token_ids"], "the record holds the answer as the client received it")
	marker, err := os.ReadFile(filepath.Join(dir, "r1"+tokens.IncompleteFileSuffix))
	require.NoError(t, err)
	assert.Equal(t, rec["model_call_id"], strings.TrimSpace(string(marker)))
	assert.Equal(t, semconv.TokensCauseBound, env.spanAttrs(t)[semconv.GymtraceTokensIncompleteCauseKey].AsString())
	assert.Contains(t, env.logs.String(), "--max-token-answer-bytes")
	assert.Contains(t, env.logs.String(), "cause="+semconv.TokensCauseBound)
	m := collect(t, reader)
	marks, ok := m[semconv.GymtraceTokensIncompleteName]
	require.True(t, ok)
	pts := marks.Data.(metricdata.Sum[int64]).DataPoints
	require.Len(t, pts, 1)
	cause, _ := pts[0].Attributes.Value(semconv.GymtraceTokensIncompleteCauseKey)
	assert.Equal(t, semconv.TokensCauseBound, cause.AsString())
	assert.EqualValues(t, 1, pts[0].Value)

	// Within the bound: captured, the client's own answer restored.
	within := newProxyEnv(t, up.URL, nil, WithTokenSource(TokenSourceVLLM), WithTokenDir(t.TempDir()), WithMaxTokenAnswerBytes(int64(len(extended))))
	resp, got, err = within.post(t, tokenPath, body, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, string(direct(t, up.URL, body)), string(got))
	assert.True(t, within.spanAttrs(t)[semconv.GymtraceTokensEntryWrittenKey].AsBool())

	// Gym: the answer the client received is read, under the same bound.
	gym := newProxyEnv(t, up.URL, nil, WithTokenSource(TokenSourceGym), WithTokenDir(t.TempDir()), WithMaxTokenAnswerBytes(10))
	_, _, err = gym.post(t, tokenPath, body, nil)
	require.NoError(t, err)
	assert.Equal(t, semconv.TokensCauseBound, gym.spanAttrs(t)[semconv.GymtraceTokensIncompleteCauseKey].AsString())
	assert.Contains(t, gym.logs.String(), "--max-token-answer-bytes")
}
