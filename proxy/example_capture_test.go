package proxy_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/gymtrace/gymtrace/proxy"
)

// A Go model server wrapped with capture: calls under /ng-rollout/<id>/ are recorded in
// <dir>/<id>.capture.jsonl before the client sees their end.
func ExampleCaptureHandler() {
	dir, err := os.MkdirTemp("", "gymtrace-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	model := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"resp_1","model":"policy","usage":{"input_tokens":3,"output_tokens":1}}`)
	})
	h, err := proxy.CaptureHandler(model, proxy.WithCaptureDir(dir), proxy.WithModelServerName("policy_model"))
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	client := &http.Client{Transport: &http.Transport{}}
	defer func() {
		client.CloseIdleConnections()
		srv.Close()
		_ = h.Shutdown(context.Background())
	}()

	resp, err := client.Post(srv.URL+"/ng-rollout/3-1/v1/responses", "application/json", strings.NewReader(`{"model":"policy","input":"hi"}`))
	if err != nil {
		panic(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	records, err := h.Store().ReadModelCallRecords("3-1")
	if err != nil {
		panic(err)
	}
	r := records[0]
	fmt.Println(len(records), *r.ResponseID, *r.Model, r.ModelRef.Name, *r.TokensIn, *r.TokensOut)
	// Output: 1 resp_1 policy policy_model 3 1
}

// The capture proxy in front of any OpenAI- or Anthropic-compatible server (what `gymtrace proxy` runs).
func ExampleNew() {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer upstream.Close()
	dir, err := os.MkdirTemp("", "gymtrace-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	h, err := proxy.New(upstream.URL, proxy.WithCaptureDir(dir))
	if err != nil {
		panic(err)
	}
	proxy := httptest.NewServer(h)
	client := &http.Client{Transport: &http.Transport{}}
	defer func() {
		client.CloseIdleConnections()
		proxy.Close()
		_ = h.Shutdown(context.Background())
	}()

	resp, err := client.Post(proxy.URL+"/ng-rollout/7-0/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","stream":true}`))
	if err != nil {
		panic(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	records, err := h.Store().ReadModelCallRecords("7-0")
	if err != nil {
		panic(err)
	}
	r := records[0]
	fmt.Println(*r.ResponseID, *r.FinishReason, r.ErrorCategory == nil, resp.Header.Get("X-Gymtrace-Model-Call-Id") == *r.ModelCallID)
	// Output: c1 stop true true
}
