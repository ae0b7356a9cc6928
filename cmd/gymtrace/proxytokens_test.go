package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/tokens"
)

// TestProxyTokenCaptureKilledMidStream: a proxy killed with SIGKILL while it forwards a
// token-captured stream leaves the call's intent without an entry, so the rollout is incomplete at
// freeze and finalization masks it (docs/TOKENS.md §3.3, T5): never trainable with a hole.
func TestProxyTokenCaptureKilledMidStream(t *testing.T) {
	bin := buildGymtrace(t)
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"a"},"logprobs":{"content":[{"token":"a","logprob":-1.0}]},"finish_reason":null,"token_ids":[5]}],"prompt_token_ids":[1,2]}`+"\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(up.Close)
	t.Cleanup(func() { close(release) })
	dir := t.TempDir()
	p := startKillableProxy(t, bin, up.URL, dir, "--token-source", "vllm")
	resp, err := http.Post(p.url+"/ng-rollout/r1/training-token-capture/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	first, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	// The client sees its own answer: the ids the proxy asked for are back to vLLM's null.
	assert.Contains(t, first, `"token_ids":null`)
	assert.Contains(t, first, `"prompt_token_ids":null`)
	assert.Contains(t, first, `"logprobs":null`)
	require.NoError(t, p.cmd.Process.Kill())
	<-p.exited

	intents, err := os.ReadFile(filepath.Join(dir, "r1"+tokens.IntentsFileSuffix))
	require.NoError(t, err)
	assert.Regexp(t, `^[0-9a-f]{32}\n$`, string(intents))
	st, err := tokens.OpenStore(dir)
	require.NoError(t, err)
	snap, err := st.Freeze("r1")
	require.NoError(t, err)
	assert.Empty(t, snap.Entries)
	assert.True(t, snap.Incomplete, "an intent without an entry")
	line, err := ojson.Parse([]byte(`{"_ng_rollout_id":"r1","response":{"output":[]}}`))
	require.NoError(t, err)
	tokens.FinalizeRollout(&line, st)
	mask, _ := line.Get(tokens.MaskSampleKey)
	b, _ := mask.AsBool()
	assert.True(t, b, "masked: %s", line.AppendJSON(nil))
}

// TestProxyTokenCaptureKill9MidTurnThenAttach: a rollout whose first two turns were captured and
// whose third, streamed, is cut by a SIGKILL of the proxy; the agent retries the turn through a
// restarted proxy, so the entries alone chain into one prefix. The killed call's intent has no
// entry, and `gymtrace attach` masks the rollout for it (docs/TOKENS.md §3.3 "a dispatched call
// with an intent but no entry", §3.6 capture_incomplete) and keeps its files: the hole is never
// finalized as trainable, even though the chain looks whole.
func TestProxyTokenCaptureKill9MidTurnThenAttach(t *testing.T) {
	bin := buildGymtrace(t)
	slow := httptest.NewServer(fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM), fakemodel.WithChunkDelay(100*time.Millisecond)))
	t.Cleanup(slow.Close)
	fast := httptest.NewServer(fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM)))
	t.Cleanup(fast.Close)
	dir := t.TempDir()
	store, err := tokens.OpenStore(dir)
	require.NoError(t, err)
	const id = "r1"
	path := "/ng-rollout/" + id + "/training-token-capture/v1/chat/completions"

	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	var messages []message
	body := func(stream bool) string {
		b, err := json.Marshal(map[string]any{"model": "Qwen/Qwen3-4B", "stream": stream, "messages": messages})
		require.NoError(t, err)
		return string(b)
	}
	p := startKillableProxy(t, bin, slow.URL, dir, "--token-source", "vllm")
	for k, user := range []string{"Name a primary colour.", "And another one?"} {
		messages = append(messages, message{"user", user})
		resp, err := http.Post(p.url+path, "application/json", strings.NewReader(body(false)))
		require.NoError(t, err)
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "turn %d: %s", k, raw)
		var answer struct {
			Choices []struct{ Message message } `json:"choices"`
		}
		require.NoError(t, json.Unmarshal(raw, &answer))
		require.Len(t, answer.Choices, 1)
		messages = append(messages, answer.Choices[0].Message)
	}
	messages = append(messages, message{"user", "Which of the two is darker?"})

	// Turn 3, streamed: the proxy dies after the first event reached the client.
	resp, err := http.Post(p.url+path, "application/json", strings.NewReader(body(true)))
	require.NoError(t, err)
	first, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(first, "data: {"), "%q", first)
	require.NoError(t, p.cmd.Process.Kill())
	<-p.exited
	rest, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.NotContains(t, string(rest), "[DONE]", "the client never saw the end of the killed call")

	in, err := store.Inspect(id)
	require.NoError(t, err)
	require.Len(t, in.Intents, 3)
	require.Len(t, in.Entries, 2, "the first two turns were captured")
	killed := in.Intents[2]
	assert.Equal(t, []string{killed}, in.Dangling)

	// The agent retries turn 3 through a restarted proxy on the same directory.
	p = startKillableProxy(t, bin, fast.URL, dir, "--token-source", "vllm")
	resp, err = http.Post(p.url+path, "application/json", strings.NewReader(body(true)))
	require.NoError(t, err)
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	require.True(t, strings.HasSuffix(string(raw), "data: [DONE]\n\n"), "%s", raw)
	in, err = store.Inspect(id)
	require.NoError(t, err)
	require.Len(t, in.Entries, 3)
	for k := 1; k < 3; k++ {
		prev := append(append([]int64(nil), in.Entries[k-1].PromptTokenIDs...), in.Entries[k-1].GenerationTokenIDs...)
		require.Equal(t, prev, in.Entries[k].PromptTokenIDs[:len(prev)], "the entries chain: turn %d extends turn %d", k, k-1)
	}
	assert.Equal(t, []string{killed}, in.Dangling, "the killed call stays an intent without an entry")

	input := filepath.Join(t.TempDir(), "rollouts.jsonl")
	require.NoError(t, os.WriteFile(input, []byte(`{"_ng_rollout_id":"r1","response":{"id":"x","model":"Qwen/Qwen3-4B","output":[]},"reward":1.0}`+"\n"), 0o600))
	out := filepath.Join(t.TempDir(), "out.jsonl")
	r := runGymtrace(t, "attach", "--capture-dir", dir, "--input", input, "--output", out)
	require.Equal(t, 0, r.code, "attach: %s", r.stderr)
	rows := outputRows(t, out)
	require.Len(t, rows, 1)
	row := rows[0]
	assert.Equal(t, true, row[tokens.MaskSampleKey], "masked: an intent without an entry")
	meta, ok := row["_ng_token_capture"].(map[string]any)
	require.True(t, ok, "%v", row)
	assert.Equal(t, true, meta["capture_incomplete"])
	assert.EqualValues(t, 3, meta["n_calls"])
	assert.EqualValues(t, 1, meta["roots"], "the entries alone would be one trainable chain")
	assert.EqualValues(t, 1, meta["chains"])
	after, err := store.Inspect(id)
	require.NoError(t, err)
	assert.False(t, after.Retired, "a masked rollout keeps its capture")
	assert.True(t, after.Frozen)
	assert.Equal(t, []string{killed}, after.Dangling)

	// A late call of the rollout is refused (frozen), and attaching again masks it again.
	resp, err = http.Post(p.url+path, "application/json", strings.NewReader(body(false)))
	require.NoError(t, err)
	raw, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusConflict, resp.StatusCode, "%s", raw)
	assert.Contains(t, string(raw), "rollout_finalized")
	r = runGymtrace(t, "attach", "--capture-dir", dir, "--input", input, "--output", out)
	require.Equal(t, 0, r.code, "attach: %s", r.stderr)
	assert.Equal(t, true, outputRows(t, out)[0][tokens.MaskSampleKey])
}
