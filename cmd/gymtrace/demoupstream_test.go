package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDemoUpstreamCmd: `gymtrace demo upstream --engine vllm` serves the fake vLLM on its own (a
// chat call asking for token ids gets them), a proxy with --token-source vllm in front of it writes
// the call's token entry, and SIGTERM ends the server with exit status 0.
func TestDemoUpstreamCmd(t *testing.T) {
	bin := buildGymtrace(t)
	up := exec.Command(bin, "demo", "upstream", "--engine", "vllm", "--listen", "127.0.0.1:0")
	out, err := up.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, up.Start())
	exited := make(chan error, 1)
	go func() { exited <- up.Wait() }()
	t.Cleanup(func() {
		_ = up.Process.Kill()
		<-exited
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	require.True(t, ok, "ready line %q", line)

	resp, err := http.Post(url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","return_token_ids":true,"messages":[{"role":"user","content":"Hi"}]}`))
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	var answer struct {
		PromptTokenIDs []int64 `json:"prompt_token_ids"`
		Choices        []struct {
			TokenIDs []int64 `json:"token_ids"`
		} `json:"choices"`
	}
	require.NoError(t, json.Unmarshal(body, &answer))
	assert.NotEmpty(t, answer.PromptTokenIDs, "vLLM's inline prompt ids")
	require.Len(t, answer.Choices, 1)
	assert.NotEmpty(t, answer.Choices[0].TokenIDs, "vLLM's inline generated ids")

	dir := t.TempDir()
	p := startProxy(t, bin, url, dir, "--token-source", "vllm")
	resp, err = http.Post(p.url+"/ng-rollout/0-0/training-token-capture/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"Hi"}]}`))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	r := runGymtrace(t, "tokens", "--capture-dir", dir, "--json", "0-0")
	require.NoError(t, r.err, "%s", r.stderr)
	var view struct {
		Entries []struct {
			PromptTokens     int `json:"prompt_tokens"`
			GenerationTokens int `json:"generation_tokens"`
		} `json:"entries"`
		Masked bool `json:"masked"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &view), "%s", r.stdout)
	require.Len(t, view.Entries, 1, "the proxy wrote the call's token entry")
	assert.Equal(t, len(answer.PromptTokenIDs), view.Entries[0].PromptTokens, "the same prompt as asked directly")
	assert.Positive(t, view.Entries[0].GenerationTokens)
	assert.False(t, view.Masked)

	require.NoError(t, up.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		exited <- err
		assert.NoError(t, err, "SIGTERM ends the server cleanly")
	case <-time.After(10 * time.Second):
		t.Fatal("demo upstream did not stop on SIGTERM")
	}
}

// TestDemoUpstreamCmdUsage: a bad engine or setting is a usage error naming it.
func TestDemoUpstreamCmdUsage(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--engine", "tgi"}, `unknown engine "tgi" (want openai, vllm or sglang)`},
		{[]string{"--engine", "sglang", "--no-inline-token-ids"}, `no inline token ids applies only to the vllm engine (engine "sglang")`},
	} {
		r := runGymtrace(t, append([]string{"demo", "upstream", "--listen", "127.0.0.1:0"}, tt.args...)...)
		require.Error(t, r.err, "args %q", tt.args)
		assert.Contains(t, r.err.Error(), tt.want)
		assert.Equal(t, 2, r.code, "usage error")
	}
}
