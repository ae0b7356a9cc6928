package main

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/ojson"
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
