package bench

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUpstream(t *testing.T) {
	post := func(t *testing.T, url string, body []byte) (*http.Response, []byte) {
		t.Helper()
		resp, err := http.Post(url, "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, b
	}
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	t.Run("json", func(t *testing.T) {
		w := smallWorkload()
		up, err := startUpstream(w)
		require.NoError(t, err)
		defer func() { require.NoError(t, up.close()) }()
		resp, body := post(t, up.url+"/ng-rollout/bench-0/v1/chat/completions", w.Request)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		assert.Equal(t, int64(len(w.Response)), resp.ContentLength)
		assert.Equal(t, w.Response, body)

		resp, body = post(t, up.url+"/v1/chat/completions", w.Request)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "the prefix is optional (proxies strip it)")
		assert.Equal(t, w.Response, body)

		resp, _ = post(t, up.url+"/v1/responses", w.Request)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
		get, err := http.Get(up.url + "/v1/chat/completions")
		require.NoError(t, err)
		_ = get.Body.Close()
		assert.Equal(t, http.StatusMethodNotAllowed, get.StatusCode)
	})
	t.Run("token workload", func(t *testing.T) {
		w := tokensSmallWorkload()
		up, err := startUpstream(w)
		require.NoError(t, err)
		defer func() { require.NoError(t, up.close()) }()
		resp, body := post(t, up.url+"/ng-rollout/bench-0-0/training-token-capture/v1/chat/completions", w.Request)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "the prefix is stripped as a Gym model server strips it")
		assert.Equal(t, string(w.Response), string(body), "the fake vLLM's answer is deterministic")
		resp, again := post(t, up.url+"/ng-rollout/bench-0-1/training-token-capture/v1/chat/completions", w.Request)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, string(body), string(again), "replayed")

		// The request as the capture proxy sends it gets the fake's answer with the ids.
		asked := bytes.Replace(w.Request, []byte(`"max_tokens"`), []byte(`"logprobs":true,"top_logprobs":0,"return_token_ids":true,"max_tokens"`), 1)
		want, _ := tokenAnswer(asked, false)
		resp, body = post(t, up.url+"/ng-rollout/bench-0-0/training-token-capture/v1/chat/completions", asked)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, string(want), string(body))
		assert.Contains(t, string(body), `"prompt_token_ids":[`)

		// An error answer of the fake is passed on, with its status.
		resp, body = post(t, up.url+"/v1/chat/completions", []byte(`{"model":`))
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
		resp, _ = post(t, up.url+"/v1/responses", w.Request)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	})
	t.Run("token stream", func(t *testing.T) {
		w := tokenStreamWorkload(6, 2*time.Millisecond)
		up, err := startUpstream(w)
		require.NoError(t, err)
		defer func() { require.NoError(t, up.close()) }()
		start := time.Now()
		resp, body := post(t, up.url+"/ng-rollout/bench-0-0/training-token-capture/v1/chat/completions", w.Request)
		took := time.Since(start)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "text/event-stream; charset=utf-8", resp.Header.Get("Content-Type"))
		assert.Equal(t, string(bytes.Join(w.Events, nil)), string(body))
		assert.GreaterOrEqual(t, took, time.Duration(len(w.Events)-1)*w.Gap, "paced like the other streams")
	})
	t.Run("stream", func(t *testing.T) {
		w := shortStream()
		up, err := startUpstream(w)
		require.NoError(t, err)
		defer func() { require.NoError(t, up.close()) }()
		start := time.Now()
		resp, body := post(t, up.url+"/v1/chat/completions", w.Request)
		took := time.Since(start)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "text/event-stream; charset=utf-8", resp.Header.Get("Content-Type"))
		assert.Equal(t, bytes.Join(w.Events, nil), body)
		assert.GreaterOrEqual(t, took, time.Duration(len(w.Events)-1)*w.Gap, "events are paced, never early")
	})
	t.Run("stream stops when the client leaves", func(t *testing.T) {
		w := sse200Workload() // 1 s long
		up, err := startUpstream(w)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, up.url+"/v1/chat/completions", bytes.NewReader(w.Request))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(line, "data: {"), line)
		cancel()
		_ = resp.Body.Close()
		stopped := time.Now()
		require.NoError(t, up.close())
		assert.Less(t, time.Since(stopped), upstreamShutdownTimeout, "the handler returned; no forced close")
	})
}

func TestPlainProxy(t *testing.T) {
	type seen struct {
		path, host, xff, body string
	}
	got := make(chan seen, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.URL.RequestURI(), r.Host, r.Header.Get("X-Forwarded-For"), string(b)}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: 1\n\n")
		w.(http.Flusher).Flush()
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer up.Close()

	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- ServePlainProxy(ctx, up.URL, "127.0.0.1:0", pw, nil)
		_ = pw.Close()
	}()
	br := bufio.NewReader(pr)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	require.True(t, ok, line)
	assert.True(t, strings.HasPrefix(base, "http://127.0.0.1:"), base)

	client := &http.Client{Transport: &http.Transport{}}
	resp, err := client.Post(base+"/ng-rollout/r1/v1/chat/completions?x=1", "application/json", strings.NewReader(`{"a":1}`))
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	_ = resp.Body.Close()
	client.CloseIdleConnections()
	assert.Equal(t, "data: 1\n\ndata: [DONE]\n\n", string(body))
	s := <-got
	assert.Equal(t, "/ng-rollout/r1/v1/chat/completions?x=1", s.path, "path forwarded unchanged")
	assert.Equal(t, strings.TrimPrefix(up.URL, "http://"), s.host)
	assert.Empty(t, s.xff, "no X-Forwarded-For")
	assert.Equal(t, `{"a":1}`, s.body)

	cancel()
	require.NoError(t, <-served)
	_, _ = io.Copy(io.Discard, br)

	t.Run("bad upstream", func(t *testing.T) {
		_, err := NewPlainProxy("127.0.0.1:9", nil)
		assert.ErrorContains(t, err, `upstream "127.0.0.1:9" must be an absolute http:// or https:// URL`)
		err = ServePlainProxy(t.Context(), "ftp://x", "127.0.0.1:0", io.Discard, nil)
		assert.ErrorContains(t, err, `upstream "ftp://x"`)
	})
	t.Run("bad listen", func(t *testing.T) {
		err := ServePlainProxy(t.Context(), up.URL, "127.0.0.1:notaport", io.Discard, nil)
		assert.ErrorContains(t, err, "bench plain proxy: listen")
	})
}
