package proxy

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/rollout"
	"github.com/gymtrace/gymtrace/semconv"
)

const (
	chatEvent1  = "data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"}}]}\n\n"
	chatEvent2  = "data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\n"
	chatDone    = "data: [DONE]\n\n"
	chatRequest = `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`
)

func sseHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
}

func flush(w http.ResponseWriter) { w.(http.Flusher).Flush() }

func TestProxyForwardsRequest(t *testing.T) {
	type seen struct {
		method, path, rawPath, query, host, body string
		header                                   http.Header
	}
	got := make(chan seen, 1)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.Path, r.URL.RawPath, r.URL.RawQuery, r.Host, string(b), r.Header.Clone()}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Upstream", "yes")
		w.Header().Set("Connection", "X-Upstream-Hop")
		w.Header().Set("X-Upstream-Hop", "1")
		_, _ = io.WriteString(w, `{"id":"resp_1","model":"m","status":"completed"}`)
	})
	env := newProxyEnv(t, up.URL+"/base", nil)
	secret := "sk-very-secret-key-123"
	resp, body, err := env.post(t, "/ng-rollout/r-1/v1/responses?api-version=2", `{"model":"m",  "input":"hi"}`, map[string]string{
		"Authorization":   "Bearer " + secret,
		"X-Api-Key":       secret,
		"Connection":      "X-Hop",
		"X-Hop":           "drop me",
		"Accept-Encoding": "gzip, br",
		"X-Forwarded-For": "203.0.113.9",
		"Traceparent":     "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"Baggage":         "tenant=a,run=7",
	})
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, `{"id":"resp_1","model":"m","status":"completed"}`, string(body))
	assert.Equal(t, "yes", resp.Header.Get("X-Upstream"))
	assert.Empty(t, resp.Header.Get("X-Upstream-Hop"), "hop-by-hop response headers named in Connection are dropped")

	s := <-got
	assert.Equal(t, http.MethodPost, s.method)
	assert.Equal(t, "/base/v1/responses", s.path)
	assert.Equal(t, "api-version=2", s.query)
	assert.Equal(t, strings.TrimPrefix(up.URL, "http://"), s.host, "Host is the upstream's")
	assert.Equal(t, `{"model":"m",  "input":"hi"}`, s.body, "request bytes unchanged")
	assert.Equal(t, "Bearer "+secret, s.header.Get("Authorization"), "auth forwarded")
	assert.Equal(t, secret, s.header.Get("X-Api-Key"))
	assert.Empty(t, s.header.Get("X-Hop"), "headers named in Connection are dropped")
	assert.Empty(t, s.header.Get("X-Forwarded-For"))
	assert.Equal(t, "gzip, br", s.header.Get("Accept-Encoding"))
	assert.Equal(t, "tenant=a,run=7", s.header.Get("Baggage"), "baggage kept")

	spans := env.spans.GetSpans()
	require.Len(t, spans, 1)
	sc := spans[0].SpanContext
	assert.Equal(t, fmt.Sprintf("00-%s-%s-01", sc.TraceID(), sc.SpanID()), s.header.Get("Traceparent"),
		"traceparent replaced by the model-call span's context")

	_, lines := env.records(t, "r-1")
	require.Len(t, lines, 1)
	assert.NotContains(t, lines[0], secret, "auth never captured")
	assert.Contains(t, lines[0], `"request":{"model":"m","input":"hi"}`)
	for _, kv := range spans[0].Attributes {
		assert.NotContains(t, kv.Value.Emit(), secret, "auth never on the span (%s)", kv.Key)
	}
	a := env.spanAttrs(t)
	assert.Equal(t, "127.0.0.1", a[semconv.ServerAddressKey].AsString())
	assert.Equal(t, "resp_1", a[semconv.GenAIResponseIDKey].AsString())
	assert.NotZero(t, a[semconv.ServerPortKey].AsInt64())
}

// TestProxyPacing: each upstream read reaches the client at once; a proxy that buffers the whole
// body fails (the upstream waits for the client to have the first event).
func TestProxyPacing(t *testing.T) {
	clientHasEvent := make(chan struct{})
	var waitedTooLong atomic.Bool
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeaders(w)
		_, _ = io.WriteString(w, chatEvent1)
		flush(w)
		select {
		case <-clientHasEvent:
		case <-time.After(5 * time.Second):
			waitedTooLong.Store(true)
		}
		_, _ = io.WriteString(w, chatEvent2+chatDone)
	})
	env := newProxyEnv(t, up.URL, nil)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, env.srv.URL+"/ng-rollout/pace/v1/chat/completions", strings.NewReader(chatRequest))
	require.NoError(t, err)
	resp, err := env.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	first := make([]byte, len(chatEvent1))
	_, err = io.ReadFull(resp.Body, first)
	require.NoError(t, err)
	assert.Equal(t, chatEvent1, string(first))
	assert.False(t, waitedTooLong.Load(), "the first event arrived while the upstream still waited")
	close(clientHasEvent)
	rest, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, chatEvent2+chatDone, string(rest))
	rec := env.record(t, "pace")
	assert.Nil(t, rec["error_category"])
	assert.Equal(t, chatEvent1+chatEvent2+chatDone, rec["response_raw"])
}

// TestProxyDurability: with a blocking fsync the client cannot see the end of the call.
func TestProxyDurability(t *testing.T) {
	tests := []struct {
		name          string
		header        func(w http.ResponseWriter)
		path          string
		flowing, held string // flowing reaches the client before the record is durable, held after
		status        int
		durability    capture.Durability
	}{
		{
			name: "SSE terminal event held", header: sseHeaders, path: "/v1/chat/completions",
			flowing: chatEvent1 + chatEvent2, held: chatDone, status: 200,
		},
		{
			name: "D8 chat stream without [DONE]: the end is held", header: sseHeaders, path: "/v1/chat/completions",
			flowing: chatEvent1 + chatEvent2, held: "", status: 200,
		},
		{
			name: "sized JSON body: the completing read held",
			header: func(w http.ResponseWriter) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", "30")
			},
			path: "/v1/responses", flowing: `{"id":"resp_2",`, held: `"status":"x"}` + "  ", status: 200,
		},
		{
			name: "unsized JSON body: the end held",
			header: func(w http.ResponseWriter) {
				w.Header().Set("Content-Type", "application/json")
			},
			path: "/v1/responses", flowing: `{"id":"resp_2",`, held: `"status":"x"}`, status: 200,
		},
		{
			name: "204 held whole", header: func(w http.ResponseWriter) {}, path: "/v1/responses", status: 204,
		},
	}
	// Every case again in journal mode (SPEC §0 D17): the hook then blocks the journal's fdatasync.
	for _, tt := range slices.Clone(tests) {
		tt.name, tt.durability = "journal/"+tt.name, capture.DurabilityJournal
		tests = append(tests, tt)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			proceed := make(chan struct{})
			var syncing atomic.Bool
			store := newTestStore(t, capture.WithDurability(tt.durability), capture.WithSyncHook(func(string) error {
				syncing.Store(true)
				<-release
				return nil
			}))
			t.Cleanup(func() { assert.NoError(t, store.Close()) })
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				tt.header(w)
				w.WriteHeader(tt.status)
				if tt.status == http.StatusNoContent {
					return
				}
				_, _ = io.WriteString(w, tt.flowing)
				flush(w)
				select {
				case <-proceed:
				case <-time.After(5 * time.Second):
				}
				_, _ = io.WriteString(w, tt.held)
			})
			env := newProxyEnv(t, up.URL, store)
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, env.srv.URL+"/ng-rollout/dur"+tt.path, strings.NewReader(chatRequest))
			require.NoError(t, err)

			type result struct {
				resp *http.Response
				err  error
			}
			respCh := make(chan result, 1)
			go func() {
				resp, err := env.client.Do(req)
				respCh <- result{resp, err}
			}()
			if tt.status == http.StatusNoContent {
				waitFor(t, "the record write to start", syncing.Load)
				select {
				case r := <-respCh:
					close(release)
					r.resp.Body.Close()
					t.Fatalf("response headers seen before the record was durable: %v", r.resp.Status)
				case <-time.After(100 * time.Millisecond):
				}
				close(release)
				r := <-respCh
				require.NoError(t, r.err)
				defer r.resp.Body.Close()
				assert.Equal(t, tt.status, r.resp.StatusCode)
				assert.Len(t, mustRecords(t, env, "dur"), 1)
				return
			}
			r := <-respCh
			require.NoError(t, r.err)
			resp := r.resp
			defer resp.Body.Close()
			assert.Equal(t, tt.status, resp.StatusCode)
			first := make([]byte, len(tt.flowing))
			_, err = io.ReadFull(resp.Body, first)
			require.NoError(t, err)
			assert.Equal(t, tt.flowing, string(first))
			close(proceed)

			restCh := make(chan []byte, 1)
			go func() {
				b, _ := io.ReadAll(resp.Body)
				restCh <- b
			}()
			waitFor(t, "the record write to start", syncing.Load)
			select {
			case b := <-restCh:
				close(release)
				t.Fatalf("the end of the call (%q) was seen before the record was durable", b)
			case <-time.After(100 * time.Millisecond):
			}
			close(release)
			assert.Equal(t, tt.held, string(<-restCh))
			assert.Len(t, mustRecords(t, env, "dur"), 1)
		})
	}
}

func mustRecords(t *testing.T, env *testEnv, id string) []map[string]any {
	recs, _ := env.records(t, id)
	return recs
}

// TestProxyClientDisconnect is SPEC §0 D3: the client leaves mid-stream; the upstream request is
// cancelled and the record says "cancelled" with the partial response.
func TestProxyClientDisconnect(t *testing.T) {
	upstreamCancelled := make(chan bool, 1)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeaders(w)
		_, _ = io.WriteString(w, chatEvent1)
		flush(w)
		select {
		case <-r.Context().Done():
			upstreamCancelled <- true
		case <-time.After(5 * time.Second):
			upstreamCancelled <- false
		}
	})
	env := newProxyEnv(t, up.URL, nil)
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, env.srv.URL+"/ng-rollout/gone/v1/chat/completions", strings.NewReader(chatRequest))
	require.NoError(t, err)
	resp, err := env.client.Do(req)
	require.NoError(t, err)
	first := make([]byte, len(chatEvent1))
	_, err = io.ReadFull(resp.Body, first)
	require.NoError(t, err)
	cancel()
	resp.Body.Close()
	assert.True(t, <-upstreamCancelled, "the upstream request is cancelled promptly")
	waitFor(t, "the record", func() bool { return len(mustRecords(t, env, "gone")) == 1 })
	rec := env.record(t, "gone")
	assert.Equal(t, "cancelled", rec["error_category"])
	assert.Equal(t, json.Number("200"), rec["status_code"])
	assert.Equal(t, chatEvent1, rec["response_raw"])
	require.NotNil(t, rec["response"], "partial reassembly")
	content := rec["response"].(map[string]any)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]
	assert.Equal(t, "Hel", content)
}

// TestProxyClientLeavesBeforeStatus: SPEC §3.3 — D3 also applies before the upstream's status line
// (status_code null).
func TestProxyClientLeavesBeforeStatus(t *testing.T) {
	upstreamCancelled := make(chan bool, 1)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			upstreamCancelled <- true
		case <-time.After(5 * time.Second):
			upstreamCancelled <- false
		}
	})
	env := newProxyEnv(t, up.URL, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, env.srv.URL+"/ng-rollout/early/v1/responses", strings.NewReader(`{"model":"m"}`))
	require.NoError(t, err)
	_, err = env.client.Do(req)
	require.Error(t, err)
	assert.True(t, <-upstreamCancelled, "the upstream request is cancelled")
	waitFor(t, "the record", func() bool { return len(mustRecords(t, env, "early")) == 1 })
	rec := env.record(t, "early")
	assert.Equal(t, "cancelled", rec["error_category"])
	assert.Nil(t, rec["status_code"])
	assert.Nil(t, rec["response"])
}

func TestProxyUpstreamFailures(t *testing.T) {
	refused := func(t *testing.T) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		require.NoError(t, l.Close())
		return "http://" + addr
	}
	t.Run("dial refused: 502 connection", func(t *testing.T) {
		for _, tc := range []struct{ path, shape string }{{"/v1/chat/completions", "openai"}, {"/v1/messages", "anthropic"}} {
			env := newProxyEnv(t, refused(t), nil)
			resp, body, err := env.post(t, "/ng-rollout/down"+tc.path, chatRequest, nil)
			require.NoError(t, err)
			assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
			var b map[string]any
			require.NoError(t, json.Unmarshal(body, &b))
			if tc.shape == "anthropic" {
				assert.Equal(t, "error", b["type"])
				assert.Contains(t, b["error"].(map[string]any)["message"], "unreachable")
			} else {
				assert.Equal(t, "upstream_unreachable", b["error"].(map[string]any)["code"])
			}
			rec := env.record(t, "down")
			assert.Equal(t, "connection", rec["error_category"])
			assert.Nil(t, rec["status_code"])
			assert.Nil(t, rec["response"])
			assert.NotContains(t, rec, "response_raw")
			_, lines := env.records(t, "down")
			assert.Contains(t, lines[0], `"request":`+chatRequest+`,"response":null`)
		}
	})
	t.Run("no status in time: 504 timeout", func(t *testing.T) {
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		})
		env := newProxyEnv(t, up.URL, nil, WithResponseHeaderTimeout(50*time.Millisecond))
		resp, body, err := env.post(t, "/ng-rollout/slow/v1/responses", `{"model":"m"}`, nil)
		require.NoError(t, err)
		assert.Equal(t, http.StatusGatewayTimeout, resp.StatusCode)
		assert.Contains(t, string(body), `"code":"upstream_timeout"`)
		rec := env.record(t, "slow")
		assert.Equal(t, "timeout", rec["error_category"])
		assert.Nil(t, rec["status_code"])
		assert.Nil(t, rec["latency_ttft_ms"])
	})
	t.Run("reset mid-stream: aborted body, connection", func(t *testing.T) {
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
			_, _ = fmt.Fprintf(buf, "%x\r\n%s\r\n", len(chatEvent1), chatEvent1)
			_ = buf.Flush()
			time.Sleep(20 * time.Millisecond)
			_ = conn.(*net.TCPConn).SetLinger(0)
			_ = conn.Close()
		})
		env := newProxyEnv(t, up.URL, nil)
		resp, body, err := env.post(t, "/ng-rollout/reset/v1/chat/completions", chatRequest, nil)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		require.Error(t, err, "the client sees the break")
		assert.Equal(t, chatEvent1, string(body))
		rec := env.record(t, "reset")
		assert.Equal(t, "connection", rec["error_category"])
		assert.Equal(t, json.Number("200"), rec["status_code"])
		assert.Equal(t, chatEvent1, rec["response_raw"])
	})
	t.Run("idle read: aborted body, timeout", func(t *testing.T) {
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			sseHeaders(w)
			_, _ = io.WriteString(w, chatEvent1)
			flush(w)
			<-r.Context().Done()
		})
		env := newProxyEnv(t, up.URL, nil, WithIdleReadTimeout(50*time.Millisecond))
		_, body, err := env.post(t, "/ng-rollout/idle/v1/chat/completions", chatRequest, nil)
		require.Error(t, err)
		assert.Equal(t, chatEvent1, string(body))
		rec := env.record(t, "idle")
		assert.Equal(t, "timeout", rec["error_category"])
		assert.Equal(t, json.Number("200"), rec["status_code"])
	})
	t.Run("error status wins over the break", func(t *testing.T) {
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"error":`)
		})
		env := newProxyEnv(t, up.URL, nil)
		_, _, err := env.post(t, "/ng-rollout/rl/v1/chat/completions", chatRequest, nil)
		require.Error(t, err)
		assert.Equal(t, "rate_limit", env.record(t, "rl")["error_category"])
	})
}

// compressWith returns a func compressing its input with a writer from newWriter (write, then close).
func compressWith(newWriter func(io.Writer) io.WriteCloser) func([]byte) []byte {
	return func(b []byte) []byte {
		var buf bytes.Buffer
		w := newWriter(&buf)
		_, _ = w.Write(b)
		_ = w.Close()
		return buf.Bytes()
	}
}

func TestProxyContentEncodings(t *testing.T) {
	sse := chatEvent1 + chatEvent2 + chatDone
	jsonBody := `{"id":"resp_9","object":"response","status":"completed","model":"m","output":[]}`
	encode := map[string]func([]byte) []byte{
		"gzip":    compressWith(func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) }),
		"deflate": compressWith(func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) }),
		"deflate-raw": compressWith(func(w io.Writer) io.WriteCloser {
			fw, _ := flate.NewWriter(w, flate.DefaultCompression)
			return fw
		}),
		"br": compressWith(func(w io.Writer) io.WriteCloser { return brotli.NewWriter(w) }),
		"zstd": func(b []byte) []byte {
			w, _ := zstd.NewWriter(nil)
			defer w.Close()
			return w.EncodeAll(b, nil)
		},
	}
	for _, name := range []string{"gzip", "deflate", "deflate-raw", "br", "zstd"} {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s stream=%v", name, stream), func(t *testing.T) {
				plain, ct, path := jsonBody, "application/json", "/v1/responses"
				if stream {
					plain, ct, path = sse, "text/event-stream", "/v1/chat/completions"
				}
				wire := encode[name]([]byte(plain))
				up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", ct)
					w.Header().Set("Content-Encoding", strings.TrimSuffix(name, "-raw"))
					// Two writes, split mid-stream, to exercise incremental decoding.
					half := len(wire) / 2
					_, _ = w.Write(wire[:half])
					flush(w)
					_, _ = w.Write(wire[half:])
				})
				env := newProxyEnv(t, up.URL, nil)
				resp, body, err := env.post(t, "/ng-rollout/enc"+path, chatRequest, map[string]string{"Accept-Encoding": "gzip, deflate, br, zstd"})
				require.NoError(t, err)
				assert.Equal(t, wire, body, "the client gets the exact upstream bytes")
				assert.Equal(t, strings.TrimSuffix(name, "-raw"), resp.Header.Get("Content-Encoding"))
				rec := env.record(t, "enc")
				assert.Nil(t, rec["error_category"])
				if stream {
					assert.Equal(t, sse, rec["response_raw"])
					assert.Equal(t, "c1", rec["response"].(map[string]any)["id"])
				} else {
					_, lines := env.records(t, "enc")
					assert.Contains(t, lines[0], `"response":`+jsonBody)
					assert.NotContains(t, rec, "response_raw")
				}
				incomplete, err := env.store.IsIncomplete("enc")
				require.NoError(t, err)
				assert.False(t, incomplete)
			})
		}
	}
	t.Run("corrupt gzip is recorded raw, the rollout stays complete", func(t *testing.T) {
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write([]byte("not gzip at all"))
		})
		env := newProxyEnv(t, up.URL, nil)
		_, body, err := env.post(t, "/ng-rollout/bad/v1/responses", chatRequest, nil)
		require.NoError(t, err)
		assert.Equal(t, "not gzip at all", string(body))
		rec := env.record(t, "bad")
		assert.Equal(t, "capture_parse_error", rec["error_category"])
		assert.Nil(t, rec["response"])
		assert.Equal(t, "not gzip at all", rec["response_raw"])
		incomplete, err := env.store.IsIncomplete("bad")
		require.NoError(t, err)
		assert.False(t, incomplete, "the record holds every byte")
	})
}

// TestProxySampling: the export sampler filters OTLP export only, never the capture record.
func TestProxySampling(t *testing.T) {
	var gotTraceparent atomic.Value
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		gotTraceparent.Store(r.Header.Get("Traceparent"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"x"}`)
	})
	rolloutTrace := rollout.ID{Rollout: "samp"}.TraceID()
	tests := []struct {
		name        string
		opts        []Option
		traceparent string
		exported    bool
	}{
		{name: "default exports", exported: true},
		{name: "never sample", opts: []Option{WithExportSampler(sdktrace.NeverSample())}, exported: false},
		{name: "unsampled parent in the rollout trace", traceparent: "00-" + rolloutTrace.String() + "-b7ad6b7169203331-00", exported: false},
		{name: "sampled parent in the rollout trace", traceparent: "00-" + rolloutTrace.String() + "-b7ad6b7169203331-01", exported: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newProxyEnv(t, up.URL, nil, tt.opts...)
			hdr := map[string]string{}
			if tt.traceparent != "" {
				hdr["Traceparent"] = tt.traceparent
			}
			_, _, err := env.post(t, "/ng-rollout/samp/v1/responses", `{"model":"m"}`, hdr)
			require.NoError(t, err)
			assert.Len(t, mustRecords(t, env, "samp"), 1, "capture never depends on sampling")
			if tt.exported {
				assert.Len(t, env.spans.GetSpans(), 1)
			} else {
				assert.Empty(t, env.spans.GetSpans())
			}
			tp := gotTraceparent.Load().(string)
			assert.Contains(t, tp, rolloutTrace.String(), "the upstream call is in the rollout's trace")
			flag := "-01"
			if !tt.exported {
				flag = "-00"
			}
			assert.True(t, strings.HasSuffix(tp, flag), "sampled flag %s in %s", flag, tp)
			if strings.HasPrefix(tt.traceparent, "00-"+rolloutTrace.String()) {
				rec := env.record(t, "samp")
				assert.NotContains(t, tp, "b7ad6b7169203331", "the model-call span, not the incoming one, is the upstream's parent")
				assert.Len(t, rec["span_id"], 16)
			}
		})
	}
}

func TestProxyRefusals(t *testing.T) {
	var called atomic.Bool
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { called.Store(true) })
	env := newProxyEnv(t, up.URL, nil)
	raw := func(t *testing.T, request string) string {
		conn, err := net.Dial("tcp", strings.TrimPrefix(env.srv.URL, "http://"))
		require.NoError(t, err)
		defer conn.Close()
		_, err = io.WriteString(conn, request)
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		defer resp.Body.Close()
		_, _ = io.ReadAll(resp.Body)
		return resp.Status
	}
	assert.Equal(t, "405 Method Not Allowed", raw(t, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"))
	assert.Equal(t, "400 Bad Request", raw(t, "POST http://example.com/ng-rollout/r1/v1/responses HTTP/1.1\r\nHost: example.com\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"))
	assert.False(t, called.Load(), "nothing reached the upstream")
	assert.Equal(t, "200 OK", raw(t, "POST "+up.URL+"/v1/models HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
		"an absolute-form target naming the upstream is served")
	assert.True(t, called.Load())
	_, err := New("ftp://127.0.0.1:1")
	assert.ErrorContains(t, err, "scheme must be http or https")
	_, err = New("http://127.0.0.1:1/?q=1", WithCaptureDir(t.TempDir()))
	assert.ErrorContains(t, err, "must not have a query")
	_, err = New("http://127.0.0.1:1")
	assert.ErrorContains(t, err, "WithStore or WithCaptureDir is required")
}

// FuzzProxy: random upstream bodies and chunkings never panic the proxy, reach the client
// unchanged and always produce exactly one record.
func FuzzProxy(f *testing.F) {
	f.Add([]byte(chatEvent1+chatEvent2+chatDone), []byte{10, 50}, true, uint8(1))
	f.Add([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\r\n\r\n"), []byte{3}, true, uint8(2))
	f.Add([]byte(`{"id":"r","usage":{"input_tokens":1}}`), []byte{}, false, uint8(0))
	f.Add([]byte("data: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\"}}\r\r"), []byte{1, 2, 3}, true, uint8(0))
	f.Add([]byte{0xff, 0xfe, '{', 0x80}, []byte{1}, false, uint8(1))

	type script struct {
		body, cuts []byte
		sse        bool
	}
	var scripts sync.Map // X-Fuzz-ID -> script
	up := newUpstream(f, func(w http.ResponseWriter, r *http.Request) {
		v, _ := scripts.Load(r.Header.Get("X-Fuzz-ID"))
		sc := v.(script)
		if sc.sse {
			sseHeaders(w)
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		prev := 0
		for _, cut := range sc.cuts {
			at := prev + int(cut)
			if at > len(sc.body) {
				break
			}
			_, _ = w.Write(sc.body[prev:at])
			flush(w)
			prev = at
		}
		_, _ = w.Write(sc.body[prev:])
	})
	store, err := capture.NewStore(f.TempDir())
	require.NoError(f, err)
	h, err := New(up.URL, WithStore(store))
	require.NoError(f, err)
	proxy := newUpstream(f, h.ServeHTTP)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	f.Cleanup(func() {
		client.CloseIdleConnections()
		_ = h.Shutdown(context.Background())
	})
	paths := []string{"/v1/responses", "/v1/chat/completions", "/v1/messages"}
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, b, c []byte, s bool, dialect uint8) {
		id := fmt.Sprintf("fz-%d", n.Add(1))
		scripts.Store(id, script{body: b, cuts: c, sse: s})
		defer scripts.Delete(id)
		req, err := http.NewRequest(http.MethodPost, proxy.URL+"/ng-rollout/"+id+paths[int(dialect)%3], strings.NewReader(`{}`))
		require.NoError(t, err)
		req.Header.Set("X-Fuzz-ID", id)
		resp, err := client.Do(req)
		require.NoError(t, err)
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, b, got, "client bytes unchanged")
		lines, invalid, err := store.ReadAvailable(id)
		require.NoError(t, err)
		require.Zero(t, invalid)
		require.Len(t, lines, 1, "exactly one record")
	})
}

// TestProxyClientBodyCutShort: a client that declares more body than it sends and then closes
// (fully, or only its sending side) gets a record whose request is what arrived as request_raw, with
// request null: the bytes may parse, but they are no request the client sent whole (from a new-user
// trial, where the record's request looked complete). The call is logged with both sizes.
func TestProxyClientBodyCutShort(t *testing.T) {
	const sent = `{"model":"m","messages":[]}`
	for _, halfClose := range []bool{false, true} {
		t.Run(fmt.Sprintf("half close %v", halfClose), func(t *testing.T) {
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"id":"r1","object":"chat.completion","choices":[]}`)
			})
			env := newProxyEnv(t, up.URL, nil)
			conn, err := net.Dial("tcp", strings.TrimPrefix(env.srv.URL, "http://"))
			require.NoError(t, err)
			_, err = fmt.Fprintf(conn, "POST /ng-rollout/cut/v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n%s", sent)
			require.NoError(t, err)
			if halfClose {
				require.NoError(t, conn.(*net.TCPConn).CloseWrite())
				_, _ = io.Copy(io.Discard, conn)
			}
			require.NoError(t, conn.Close())
			waitFor(t, "the record", func() bool { return len(mustRecords(t, env, "cut")) == 1 })
			rec := env.record(t, "cut")
			assert.Nil(t, rec["request"], "a body cut short is no request")
			assert.Equal(t, sent, rec["request_raw"])
			assert.NotNil(t, rec["error_category"])
			waitFor(t, "the log line", func() bool { return strings.Contains(env.logs.String(), "request body cut short") })
			assert.Contains(t, env.logs.String(), "received_bytes=27")
			assert.Contains(t, env.logs.String(), "content_length=1000")
		})
	}
}
